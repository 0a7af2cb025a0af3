// A large request is decoded and stored a few items at a time (items.js SlicedDecode, Store.addRequest with an
// ItemRange), so that it does not hold the event loop. Whatever the steps, the request decoded must be the one the
// lazy decode gives, a malformed one refused as the lazy decode refuses it, and the store must keep what storing the
// request whole keeps.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { builtRequest, decodeProto, slicedDecodeOf } from '../../server/otlp/items.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { encodeRequest, requestType } from '../../server/otlp/schema.js';
import { ItemRange, Store } from '../../server/store/store.js';
import { isKeptWhole } from '../../server/otlp/kept-bytes.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { protoBody } from '../../bench/workload.js';
import { logRequest, metricRequest } from '../../bench/fill.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { profileRequest } from '../helpers/ui-data.js';

/** @typedef {'traces'|'logs'|'metrics'|'profiles'} SlicedName */
/** @type {SlicedName[]} */
const SLICED = ['traces', 'logs', 'metrics', 'profiles'];
const BOUNDED = { timeout: 120_000 };
/** Bytes a step checks: one item a step, a few, and the receivers' own. */
const STEPS = [1, 300, 16 * 1024];

/** @type {Record<SlicedName, (n: number) => Uint8Array>} */
const REALISTIC = {
  traces: (n) => protoBody(n),
  logs: (n) => encodeRequest('logs', logRequest(n)),
  metrics: (n) => encodeRequest('metrics', metricRequest(n)),
  profiles: (n) => encodeRequest('profiles', profilesOf(n)),
};

/** A profile of a few samples for each of `n + 1` services, as pdata writes them (stacks in the dictionary). @param {number} n */
function profilesOf(n) {
  const samples = Array.from({ length: 3 + n }, (_, i) => ({ stack: ['main', `work${i % 3}`, `leaf${i}`], value: i + 1 }));
  const profiles = [{ profileId: `${n}`.padStart(32, '0'), type: 'cpu', unit: 'nanoseconds', startMs: 1_700_000_000_000 + n, durMs: 1000, samples }];
  return decodeJson(SIGNALS.profiles, JSON.stringify(profileRequest(`service-${n}`, profiles)));
}

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
      // Profiles' random attributes name dictionary strings that are not there: half of them are refused.
      const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10, references: i % 2 === 0 });
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
  assert.equal(span.source.bytes.length, bytes.length);
  assert.notEqual(span.source.bytes.buffer, larger.buffer, 'a copy, not a view into the larger buffer');
  assert.ok(isKeptWhole(span.source.bytes), 'in memory of its own (kept-bytes.js)');
  assert.deepStrictEqual({ value: builtRequest(SIGNALS.traces, decode.request) }, whole('traces', bytes));
});

/** @param {Store} store @param {SlicedName} name */
const kept = (store, name) => [...store.ring(name)].map((e) => ({ seq: e.seq, requestId: e.ctx.requestId, service: e.ctx.service, item: e.item }));

test('a request stored in parts of any size keeps what it keeps stored whole, and its observers see every part', () => {
  for (const name of SLICED) {
    for (const part of [1, 7, 100, 1_000_000]) {
      const whole = new Store({ maxSpans: 900, maxLogs: 900, maxPoints: 900, maxSamples: 900 });
      const parts = new Store({ maxSpans: 900, maxLogs: 900, maxPoints: 900, maxSamples: 900 });
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

/** A message of length-delimited fields. @param {[number, Uint8Array][]} fields */
function message(fields) {
  const w = protobuf.Writer.create();
  for (const [field, payload] of fields) w.uint32((field << 3) | 2).bytes(payload);
  return w.finish();
}

test('a metric whose data comes twice keeps the last, and the sliced decode checks the points of both, as the lazy decode does', () => {
  const point = (/** @type {number} */ value) =>
    protobuf.Writer.create()
      .uint32((4 << 3) | 1)
      .double(value)
      .finish();
  const malformed = Uint8Array.of(0x21, 1, 2);
  /** A request of one metric: a gauge of `first`, then a sum of `second`. @param {Uint8Array[]} first @param {Uint8Array[]} second */
  const request = (first, second) => {
    const data = (/** @type {Uint8Array[]} */ points) => message(points.map((p) => [1, p]));
    const metric = message([
      [1, Buffer.from('twice')],
      [5, data(first)],
      [7, data(second)],
    ]);
    return message([[1, message([[2, message([[2, metric]])]])]]);
  };
  const valid = request([point(1), point(2)], [point(3)]);
  const decoded = whole('metrics', valid);
  assert.ok('value' in decoded);
  assert.deepStrictEqual(
    decoded.value.resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints.map((/** @type {any} */ p) => p.asDouble),
    [3],
  );
  const refused = request([point(1), malformed], [point(3)]);
  assert.ok('error' in whole('metrics', refused));
  for (const step of STEPS) {
    assert.deepStrictEqual(sliced('metrics', valid, step), decoded, `${step} bytes a step`);
    assert.deepStrictEqual(sliced('metrics', refused, step), whole('metrics', refused), `${step} bytes a step`);
  }
});

/** How many steps of `bytes` a sliced decode of `bytes` takes. @param {SlicedName} name @param {Uint8Array} bytes @param {number} bytesAStep */
function stepsOf(name, bytes, bytesAStep) {
  const decode = slicedDecodeOf(SIGNALS[name], bytes);
  let steps = 1;
  while (!decode.step(bytesAStep)) steps++;
  return { steps, request: builtRequest(SIGNALS[name], decode.request) };
}

test('a profile of 100,000 samples, its dictionary as large, and a metric of 100,000 points are each checked a few at a time', BOUNDED, () => {
  // A stack for each sample: the dictionary is as large as the samples.
  const samples = Array.from({ length: 100_000 }, (_, i) => ({ stack: [`f${i % 50}`, `g${i % 7}`], value: i + 1 }));
  const profiles = [{ profileId: 'ab'.repeat(16), type: 'cpu', unit: 'nanoseconds', startMs: 1_700_000_000_000, durMs: 1000, samples }];
  const profile = encodeRequest('profiles', decodeJson(SIGNALS.profiles, JSON.stringify(profileRequest('big', profiles))));
  const gauge = encodeRequest('metrics', {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'many',
                gauge: { dataPoints: Array.from({ length: 100_000 }, (_, i) => ({ timeUnixNano: String(i + 1), asInt: String(i) })) },
              },
            ],
          },
        ],
      },
    ],
  });
  for (const [name, bytes] of /** @type {[SlicedName, Uint8Array][]} */ ([
    ['profiles', profile],
    ['metrics', gauge],
  ])) {
    const { steps, request } = stepsOf(name, bytes, 16 * 1024);
    // About a step for each 16 KiB of the stored items and the dictionary, and a few for the envelope: a whole
    // profile or metric checked in one step would take a handful.
    assert.ok(steps > bytes.length / (16 * 1024) / 2, `${name}: ${steps} steps for ${bytes.length} bytes`);
    assert.deepStrictEqual({ value: request }, whole(name, bytes));
    assert.equal(SIGNALS[name].countItems(request), 100_000);
  }
});
