// A large request is decoded and stored a few items at a time (items.js SlicedDecode, Store.addRequest with an
// ItemRange), so that it does not hold the event loop. Whatever the steps, the request decoded must be the one the
// lazy decode gives, a malformed one refused as the lazy decode refuses it, and the store must keep what storing the
// request whole keeps.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtRequest, decodeProto, slicedDecodeOf } from '../../server/otlp/items.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { encodeRequest, requestType } from '../../server/otlp/schema.js';
import { ItemRange, Store } from '../../server/store/store.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { protoBody } from '../../bench/workload.js';
import { logRequest, metricRequest } from '../../bench/fill.js';

/** @typedef {'traces'|'logs'|'metrics'} SlicedName */
/** @type {SlicedName[]} */
const SLICED = ['traces', 'logs', 'metrics'];
const BOUNDED = { timeout: 120_000 };
/** Bytes a step checks: one item a step, a few, and the receivers' own. */
const STEPS = [1, 300, 16 * 1024];

/** @type {Record<SlicedName, (n: number) => Uint8Array>} */
const REALISTIC = {
  traces: (n) => protoBody(n),
  logs: (n) => encodeRequest('logs', logRequest(n)),
  metrics: (n) => encodeRequest('metrics', metricRequest(n)),
};

/** @param {string} file */
const fixture = (file) => readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));

/** @param {() => any} decode @returns {{ value: any } | { error: string }} */
function outcome(decode) {
  try {
    return { value: decode() };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err.message };
    throw err;
  }
}

/** The lazy decode, built. @param {SlicedName} name @param {Uint8Array} bytes */
const whole = (name, bytes) => outcome(() => builtRequest(SIGNALS[name], decodeProto(SIGNALS[name], bytes, { lazy: true })));

/** The sliced decode, `step` bytes a step, built. @param {SlicedName} name @param {Uint8Array} bytes @param {number} step */
function sliced(name, bytes, step) {
  return outcome(() => {
    const decode = /** @type {import('../../server/otlp/items.js').SlicedDecode} */ (slicedDecodeOf(SIGNALS[name], bytes));
    while (!decode.step(step));
    return builtRequest(SIGNALS[name], decode.request);
  });
}

test('200 random requests of each signal, plainly and liberally encoded: the sliced decode is the lazy decode, at any step', BOUNDED, () => {
  for (const name of SLICED) {
    const type = requestType(name);
    const r = createRandom(0x511ce + name.length);
    let accepted = 0;
    for (let i = 0; i < 200; i++) {
      const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10 });
      for (const bytes of [encodeRequest(name, request), encodeLiberally(r, type, request)]) {
        const expected = whole(name, bytes);
        if ('value' in expected) accepted++;
        for (const step of STEPS) assert.deepStrictEqual(sliced(name, bytes, step), expected, `${name} message ${i}, ${step} bytes a step`);
      }
    }
    assert.ok(accepted > 200, `${name}: ${accepted} requests accepted`);
  }
});

test('every truncation and random corruption of real requests is refused by the sliced decode when the lazy decode refuses it', BOUNDED, () => {
  const r = createRandom(0x7a11);
  for (const name of SLICED) {
    for (const original of [fixture(`${name}.pb`), REALISTIC[name](5)]) {
      const every = Math.max(1, Math.floor(original.length / 300));
      for (let end = 0; end < original.length; end += every) {
        const bytes = original.subarray(0, end);
        assert.deepStrictEqual(sliced(name, bytes, 300), whole(name, bytes), `${name}, truncated at ${end}`);
      }
      for (let i = 0; i < 300; i++) {
        const bytes = Buffer.from(original);
        for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.int(256);
        const expected = whole(name, bytes);
        const got = sliced(name, bytes, 300);
        // The envelope is checked before any item: a request malformed in both reports its envelope's fault first.
        assert.equal('error' in got, 'error' in expected, `${name}, corruption ${i}: ${JSON.stringify('error' in got ? got : expected)}`);
        if ('value' in expected) assert.deepStrictEqual(got, expected, `${name}, corruption ${i}`);
      }
    }
  }
});

test('a request read from a slice of a larger buffer keeps only its own bytes, as the lazy decode does', () => {
  const bytes = REALISTIC.traces(3);
  const larger = Buffer.concat([Buffer.alloc(100, 7), bytes, Buffer.alloc(100, 9)]);
  const decode = /** @type {import('../../server/otlp/items.js').SlicedDecode} */ (slicedDecodeOf(SIGNALS.traces, larger.subarray(100, 100 + bytes.length)));
  while (!decode.step(500));
  const span = decode.request.resourceSpans[0].scopeSpans[0].spans[0];
  assert.equal(span.source.bytes.buffer.byteLength, bytes.length);
  assert.deepStrictEqual({ value: builtRequest(SIGNALS.traces, decode.request) }, whole('traces', bytes));
});

test('a request of profiles, whose dictionary is shared by all its items, is decoded at once', () => {
  assert.equal(slicedDecodeOf(SIGNALS.profiles, fixture('profiles.pb')), null);
});

/** @param {Store} store @param {SlicedName} name */
const kept = (store, name) => [...store.ring(name)].map((e) => ({ seq: e.seq, requestId: e.ctx.requestId, service: e.ctx.service, item: e.item }));

test('a request stored in parts of any size keeps what it keeps stored whole, and its observers see every part', () => {
  for (const name of SLICED) {
    for (const part of [1, 7, 100, 1_000_000]) {
      const whole = new Store({ maxSpans: 900, maxLogs: 900, maxPoints: 900 });
      const parts = new Store({ maxSpans: 900, maxLogs: 900, maxPoints: 900 });
      /** @type {number[][]} */
      const seen = [];
      parts.subscribe(({ entries }) => seen.push(entries.map((e) => e.seq)));
      for (let n = 0; n < 4; n++) {
        const bytes = REALISTIC[name](n);
        whole.addRequest(name, decodeProto(SIGNALS[name], bytes, { lazy: true }), n + 1, bytes.length);
        const request = decodeProto(SIGNALS[name], bytes, { lazy: true });
        const storing = parts.addRequestInParts(name, request, n + 1, bytes.length, part);
        let step = storing.next();
        while (!step.done) step = storing.next();
        assert.equal(step.value, SIGNALS[name].countItems(request), `${name}, parts of ${part}, request ${n}`);
      }
      assert.deepStrictEqual(kept(parts, name), kept(whole, name), `${name}, parts of ${part}`);
      assert.deepStrictEqual(parts.stats(), whole.stats(), `${name}, parts of ${part}`);
      const seqs = seen.flat();
      assert.deepStrictEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => i + 1),
        `${name}: every item was seen once, in order`,
      );
      if (part === 1) assert.equal(seen.length, seqs.length);
    }
  }
});

test('a range takes the part of each run of items that falls in it', () => {
  const range = new ItemRange(5, 12);
  /** @param {number} n */
  const take = (n) => (range.take(n) ? [range.lo, range.hi] : null);
  assert.deepStrictEqual(take(3), null);
  assert.deepStrictEqual(take(4), [2, 4]);
  assert.deepStrictEqual(take(0), null);
  assert.deepStrictEqual(take(3), [0, 3]);
  assert.deepStrictEqual(take(10), [0, 2]);
  assert.deepStrictEqual(take(10), null);
  assert.equal(range.at, 30);
});
