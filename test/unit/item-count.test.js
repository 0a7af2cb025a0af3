// The items of an Export*ServiceRequest counted from its tags and lengths (items.js itemCountOf), as the receivers
// count a large body in slices before decoding it, to refuse one holding more items than the store keeps: the
// count must equal what the decode stores, however the request is encoded, and a malformed top level must be
// refused with the decode's own words, wherever the walk resumes.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { decodeBody } from '../../server/otlp/decode-body.js';
import { itemCountOf } from '../../server/otlp/items.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { encodeRequest, requestType } from '../../server/otlp/schema.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';

/** @typedef {import('../../server/otlp/signals.js').Signal} Signal */

const BOUNDED = { timeout: 120_000 };
const RANDOM_PER_SIGNAL = 200;
const request = encodePb('traces', sampleRequest('traces', { service: 'count' }));

/**
 * Counts all of `bytes`, `steps` fields at a time, as the receivers do.
 * @param {Signal} signal @param {Uint8Array} bytes @param {number} steps @returns {{ items: number, calls: number }}
 */
function count(signal, bytes, steps) {
  const walk = itemCountOf(signal, bytes);
  let calls = 1;
  while (!walk.step(steps)) calls++;
  return { items: walk.items, calls };
}

/** What the decode stores of `bytes`, or the DecodeError it throws. @param {Signal} signal @param {Uint8Array} bytes */
function decoded(signal, bytes) {
  try {
    return { items: signal.countItems(decodeBody(signal, Buffer.from(bytes), false).request) };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err.message };
    throw err;
  }
}

/** Builds bytes by hand: a message is a list of [field, payload], each a LEN field. @param {[number, Uint8Array][]} fields */
function message(fields) {
  const w = protobuf.Writer.create();
  for (const [field, payload] of fields) w.uint32((field << 3) | 2).bytes(payload);
  return w.finish();
}

for (const signal of Object.values(SIGNALS)) {
  test(`${RANDOM_PER_SIGNAL} random ${signal.name} requests: the count is what the decode stores, however encoded and stepped`, BOUNDED, () => {
    const r = createRandom(0xc0de + signal.name.length);
    const type = requestType(signal.name);
    let compared = 0;
    let items = 0;
    for (let i = 0; i < RANDOM_PER_SIGNAL; i++) {
      const random = randomRequest(r, type, { maxDepth: 10 });
      for (const bytes of [encodeRequest(signal.name, random), encodeLiberally(r, type, random)]) {
        const expected = decoded(signal, bytes);
        // A request the decode refuses (an id of the wrong length) is refused by it after the count.
        if ('error' in expected) continue;
        for (const steps of [1, 7, 4096]) assert.equal(count(signal, bytes, steps).items, expected.items, `message ${i}, ${steps} steps at a time`);
        compared++;
        items += expected.items;
      }
    }
    assert.ok(compared > RANDOM_PER_SIGNAL, `${compared} requests compared`);
    assert.ok(items > 100, `${items} items counted`);
  });
}

test('the fixtures, written by real producers, count as the decode stores them', () => {
  for (const signal of Object.values(SIGNALS)) {
    const bytes = readFileSync(new URL(`../../fixtures/${signal.name}.pb`, import.meta.url));
    const expected = decoded(signal, bytes);
    assert.ok('items' in expected && Number(expected.items) > 0, signal.name);
    assert.equal(count(signal, bytes, 3).items, expected.items, signal.name);
  }
});

test("a metric's data is a oneof: its points are counted from the last of its data fields, as the decode keeps it", () => {
  const points = (/** @type {number} */ n) => message(Array.from({ length: n }, () => [1, new Uint8Array(0)]));
  // Gauge (5) of three points, then Sum (7) of one, then an unknown field; and a metric of no data at all.
  const metric = message([
    [1, Buffer.from('m')],
    [5, points(3)],
    [7, points(1)],
    [13, Buffer.from('x')],
  ]);
  const body = message([
    [
      1,
      message([
        [
          2,
          message([
            [2, metric],
            [2, message([[1, Buffer.from('empty')]])],
            [2, metric],
          ]),
        ],
      ]),
    ],
  ]);
  const expected = decoded(SIGNALS.metrics, body);
  assert.deepEqual(expected, { items: 2 });
  for (const steps of [1, 2, 100]) assert.equal(count(SIGNALS.metrics, body, steps).items, 2);
});

test('a valid request, with unknown top-level fields of every wire type between its groups, is walked to its end', () => {
  const unknown = Buffer.from([
    ...[0x28, 0x96, 0x01], // field 5, varint
    ...[0x31, 1, 2, 3, 4, 5, 6, 7, 8], // field 6, I64
    ...[0x3a, 0x02, 0x61, 0x62], // field 7, LEN
    ...[0x45, 1, 2, 3, 4], // field 8, I32
    ...[0x4b, 0x28, 0x01, 0x4c], // field 9, a group holding field 5
  ]);
  const body = Buffer.concat([unknown, request, unknown, request]);
  assert.deepEqual(decoded(SIGNALS.traces, body), { items: 2 });
  assert.deepEqual(count(SIGNALS.traces, body, 2048), { items: 2, calls: 1 });
  assert.equal(count(SIGNALS.traces, body, 1).items, 2);
  assert.deepEqual(count(SIGNALS.traces, Buffer.alloc(0), 1), { items: 0, calls: 1 });
});

test('a million items are counted a step count at a time, each item one step', () => {
  const logs = Buffer.alloc(2_000_000).fill(Buffer.from([0x12, 0x00]));
  const body = message([[1, message([[2, logs]])]]);
  const { items, calls } = count(SIGNALS.logs, body, 4096);
  assert.equal(items, 1_000_000);
  // Each item is a step, and so is each message entered or left: two groups, in and out, and the end.
  assert.equal(calls, Math.ceil((1_000_000 + 5) / 4096));
});

test('a count given a most stops past it, having walked no further than the item that passed it', () => {
  const logs = Buffer.alloc(2_000_000).fill(Buffer.from([0x12, 0x00]));
  const body = message([[1, message([[2, logs]])]]);
  const stopped = itemCountOf(SIGNALS.logs, body, 100_000);
  assert.equal(stopped.step(1_000_000), true);
  assert.equal(stopped.over, true);
  assert.equal(stopped.pos, 8 + 2 * 100_001, 'the envelope and 100,001 records');
  const whole = itemCountOf(SIGNALS.logs, body, 1_000_000);
  assert.equal(whole.step(Infinity), true);
  assert.equal(whole.over, false);
  assert.equal(whole.items, 1_000_000);
  // Points count as a metric's whole: the metrics before the one that passes the most are all that is walked.
  const metric = message([[5, message(Array.from({ length: 600 }, () => [1, new Uint8Array(0)]))]]);
  const metrics = message([[1, message([[2, message(Array.from({ length: 10 }, () => [2, metric]))]])]]);
  const points = itemCountOf(SIGNALS.metrics, metrics, 1000);
  assert.equal(points.step(Infinity), true);
  assert.equal(points.over, true);
  assert.ok(points.pos < 3 * metric.length, `stopped at byte ${points.pos}, after the second metric`);
  const all = itemCountOf(SIGNALS.metrics, metrics, 6000);
  all.step(Infinity);
  assert.deepEqual([all.over, all.items], [false, 6000]);
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
    const expected = decoded(SIGNALS.traces, body);
    assert.ok('error' in expected, what);
    for (const steps of [1, 7, 4096]) {
      assert.throws(
        () => count(SIGNALS.traces, body, steps),
        (err) => err instanceof DecodeError && err.message === expected.error,
        `${what}, ${steps} steps at a time: expected "${expected.error}"`,
      );
    }
  }
});
