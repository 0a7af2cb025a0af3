// The profiles decoders against the reference, as decoder-oracle.test.js and lazy-items.test.js hold the other
// signals to it: random requests decoded fully, lazily (samples checked, built when read) and by protobufjs
// agree however they are encoded; OTLP/JSON decodes like the protobuf; a check rejects exactly what a full
// decode rejects. And the dictionary references pdata writes (key_strindex, string_value_strindex) are resolved
// for profiles and ignored by the other signals.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtRequest, decodeProto } from '../../server/otlp/items.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { decodeBody } from '../../server/otlp/decode-body.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { encodeRequest, oracleDecode, requestType } from '../../server/otlp/schema.js';
import { createRandom, encodeLiberally, randomRequest, toOtlpJson } from '../helpers/random-otlp.js';

const signal = SIGNALS.profiles;
const type = requestType('profiles');
const BOUNDED = { timeout: 120_000 };
const RANDOM = 300;

/** What pdata's pprofile (v0.165.0) writes for test/interop/profiles-producer's profiles of service "checkout". */
const fixture = (/** @type {string} */ file) => readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));

/** @param {Uint8Array} bytes @param {boolean} lazy */
function outcome(bytes, lazy = false) {
  try {
    const request = decodeProto(signal, bytes, lazy ? { lazy: true } : undefined);
    return { value: lazy ? builtRequest(signal, request) : request };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err.message };
    throw err;
  }
}

/** Whether a decoded request holds an id that is neither empty nor of its size. @param {any} value @returns {boolean} */
function malformedId(value) {
  if (Array.isArray(value)) return value.some(malformedId);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, v]) => {
    const size = { traceId: 32, spanId: 16, profileId: 32 }[key];
    return size !== undefined && typeof v === 'string' ? v !== '' && v.length !== size : malformedId(v);
  });
}

test(`${RANDOM} random profiles requests: full and lazy decodes equal the reference, however encoded, three times over`, BOUNDED, () => {
  const r = createRandom(0x9f0f);
  let rejected = 0;
  for (let i = 0; i < RANDOM; i++) {
    const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10, references: false });
    const plain = encodeRequest('profiles', request);
    const expected = oracleDecode('profiles', plain);
    for (const bytes of [plain, encodeLiberally(r, type, request)]) {
      if (malformedId(expected)) {
        assert.ok('error' in outcome(bytes), `message ${i}: an id of the wrong length`);
        assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `message ${i}`);
        rejected++;
        continue;
      }
      for (let round = 0; round < 3; round++) {
        assert.deepStrictEqual(outcome(bytes), { value: expected }, `message ${i}, round ${round}`);
        assert.deepStrictEqual(outcome(bytes, true), { value: expected }, `message ${i}, lazily, round ${round}`);
      }
    }
  }
  assert.ok(rejected > 10, `${rejected} requests with a malformed id`);
});

test(`${RANDOM} random profiles requests as OTLP/JSON (camelCase and snake_case) decode like the protobuf, transcoded or not`, BOUNDED, () => {
  const r = createRandom(0x9f10);
  for (let i = 0; i < RANDOM; i++) {
    const expected = decodeProto(signal, encodeRequest('profiles', randomRequest(r, type, { maxDepth: 10, references: false })));
    for (const snake of [false, true]) {
      const text = toOtlpJson(r, type, expected, { snake });
      assert.deepStrictEqual(decodeJson(signal, text), expected, `message ${i}, ${snake ? 'snake_case' : 'camelCase'}`);
      assert.deepStrictEqual(builtRequest(signal, decodeBody(signal, Buffer.from(text), true).request), expected, `message ${i}, received`);
    }
  }
});

test('pdata bytes: every truncation and random corruption is rejected by the check exactly when a full decode rejects it', BOUNDED, () => {
  const r = createRandom(0x9f11);
  const original = fixture('profiles.pb');
  for (let end = 0; end < original.length; end++) {
    const bytes = original.subarray(0, end);
    assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `truncated at ${end}`);
  }
  for (let i = 0; i < 1000; i++) {
    const bytes = Buffer.from(original);
    for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.int(256);
    assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `corruption ${i}`);
  }
});

test('pdata bytes: the dictionary agrees with protobufjs, and resource attributes named by string index are resolved, in protobuf and OTLP/JSON', () => {
  const bytes = fixture('profiles.pb');
  const decoded = decodeProto(signal, bytes);
  const reference = oracleDecode('profiles', bytes);
  assert.deepStrictEqual(decoded.dictionary, reference.dictionary);
  assert.deepStrictEqual(decoded.resourceProfiles[0].scopeProfiles, reference.resourceProfiles[0].scopeProfiles);
  const { attributes } = decoded.resourceProfiles[0].resource;
  assert.deepStrictEqual(attributes, [
    { key: 'service.name', value: { stringValue: 'checkout' } },
    { key: 'deployment.environment', value: { stringValue: 'test' } },
  ]);
  // The reference knows nothing of the dictionary: the keys it sees are empty.
  assert.equal(reference.resourceProfiles[0].resource.attributes[0].key, '');
  assert.deepStrictEqual(builtRequest(signal, decodeProto(signal, bytes, { lazy: true })), decoded);
  const json = fixture('profiles.json');
  assert.deepStrictEqual(decodeJson(signal, json), decoded);
  const received = decodeBody(signal, json, true);
  assert.ok(received.wire, 'pdata JSON is transcoded to protobuf');
  assert.deepStrictEqual(builtRequest(signal, received.request), decoded);
});

test('a string index past the dictionary is a DecodeError in both encodings', () => {
  const request = { resourceProfiles: [{ resource: { attributes: [{ keyStrindex: 5, value: { stringValue: 'x' } }] } }], dictionary: { stringTable: ['', 'a'] } };
  const text = JSON.stringify(request);
  assert.throws(() => decodeJson(signal, text), /string index 5 is past the dictionary's 2 strings/);
  const bytes = type.encode(type.fromObject(request)).finish();
  assert.throws(() => decodeProto(signal, bytes), /string index 5 is past the dictionary's 2 strings/);
  assert.throws(() => decodeProto(signal, bytes, { lazy: true }), DecodeError);
});

test('the other signals ignore key_strindex and string_value_strindex without error, in protobuf and OTLP/JSON', () => {
  const KeyValue = /** @type {import('protobufjs').Type} */ (type.lookup('opentelemetry.proto.common.v1.KeyValue'));
  for (const s of Object.values(SIGNALS).filter((x) => !x.resolveJsonStrings)) {
    const kv = { key: 'k', keyStrindex: 7, value: { stringValueStrindex: 3 } };
    const plain = { key: 'k', value: {} };
    const request = { [s.rootField]: [{ resource: { attributes: [kv] } }] };
    const bytes = requestType(s.name).encode(requestType(s.name).fromObject(request)).finish();
    assert.ok(KeyValue.encode(KeyValue.fromObject(kv)).finish().length > 0);
    assert.deepStrictEqual(decodeProto(s, bytes)[s.rootField][0].resource.attributes, [plain], s.name);
    assert.deepStrictEqual(decodeJson(s, JSON.stringify(request))[s.rootField][0].resource.attributes, [plain], s.name);
    assert.deepStrictEqual(builtRequest(s, decodeBody(s, Buffer.from(JSON.stringify(request)), true).request)[s.rootField][0].resource.attributes, [plain], s.name);
  }
});
