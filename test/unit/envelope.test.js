// The top level of an Export*ServiceRequest walked in steps (decode/common.js envelopeFields), as the receivers
// walk a large protobuf body in slices before decoding it: it must accept every body the decode accepts, and
// refuse a malformed top level with the decode's own words.
import test from 'node:test';
import assert from 'node:assert/strict';
import { envelopeFields } from '../../server/otlp/decode/common.js';
import { decodeBody } from '../../server/otlp/decode-body.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';

const traces = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));
const request = encodePb('traces', sampleRequest('traces', { service: 'envelope' }));

/** Walks all of `bytes`, `steps` fields at a time, as the receivers do: the number of calls it took. @param {Buffer} bytes @param {number} steps */
function walk(bytes, steps) {
  let calls = 0;
  for (let at = 0; at < bytes.length; calls++) {
    const next = envelopeFields(bytes, at, steps);
    assert.ok(next > at, 'each call moves on');
    at = next;
  }
  return calls;
}

/** The decode's refusal of `bytes`. @param {Buffer} bytes */
function decodeError(bytes) {
  try {
    decodeBody(traces, bytes, false);
  } catch (err) {
    assert.ok(err instanceof DecodeError);
    return err.message;
  }
  return assert.fail(`the decode accepted ${bytes.subarray(-16).toString('hex')}`);
}

test('a valid request, with unknown top-level fields of every wire type between its groups, is walked to its end', () => {
  const unknown = Buffer.from([
    ...[0x28, 0x96, 0x01], // field 5, varint
    ...[0x31, 1, 2, 3, 4, 5, 6, 7, 8], // field 6, I64
    ...[0x3a, 0x02, 0x61, 0x62], // field 7, LEN
    ...[0x45, 1, 2, 3, 4], // field 8, I32
    ...[0x4b, 0x28, 0x01, 0x4c], // field 9, a group holding field 5
  ]);
  const body = Buffer.concat([unknown, request, unknown, request]);
  assert.doesNotThrow(() => decodeBody(traces, body, false));
  assert.equal(walk(body, 1), 12);
  assert.equal(walk(body, 2048), 1);
  assert.equal(walk(Buffer.alloc(0), 1), 0);
});

test('a million tiny fields are walked a step count at a time', () => {
  const body = Buffer.concat([Buffer.alloc(2_000_000).fill(Buffer.from([0x28, 0x00])), request]);
  assert.equal(walk(body, 4096), Math.ceil(1_000_001 / 4096));
});

test('a malformed top level is refused with the words of the decode, wherever the walk resumes', () => {
  const tiny = Buffer.alloc(1000).fill(Buffer.from([0x28, 0x00]));
  /** @type {[string, Buffer][]} */
  const cases = [
    ['a length past the end (the 63 MB snappy bomb, in small)', Buffer.alloc(4410, 0x2a)],
    ['field number 0', Buffer.concat([tiny, Buffer.from([0x00, 0x00])])],
    ['the resources field with another wire type', Buffer.concat([tiny, Buffer.from([0x08, 0x01])])],
    ['a truncated varint at the end', Buffer.concat([tiny, Buffer.from([0x28, 0x80])])],
    ['a truncated tag at the end', Buffer.concat([tiny, Buffer.from([0x80])])],
    ['a truncated I64', Buffer.concat([tiny, Buffer.from([0x29, 1, 2])])],
    ['a tag longer than 10 bytes', Buffer.concat([tiny, Buffer.from([...Array(11).fill(0xff), 0x00])])],
    ['a group that never ends', Buffer.concat([tiny, Buffer.from([0x2b, 0x28, 0x00])])],
    ['a wire type that does not exist', Buffer.concat([tiny, Buffer.from([0x2e])])],
    ['a resources group longer than the body', Buffer.concat([tiny, request.subarray(0, request.length - 1)])],
  ];
  for (const [what, body] of cases) {
    const expected = decodeError(body);
    for (const steps of [1, 7, 4096]) {
      assert.throws(
        () => walk(body, steps),
        (err) => err instanceof DecodeError && err.message === expected,
        `${what}, ${steps} steps at a time: expected "${expected}"`,
      );
    }
  }
});
