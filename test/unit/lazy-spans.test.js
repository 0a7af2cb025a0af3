// Spans received in protobuf are checked at ingest and built only when read (LazySpan). The check must
// accept and reject exactly what a full decode does, and building must give exactly the full decode's span.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { builtRequest, decodeProto, LazySpan } from '../../server/otlp/decode-proto.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest, oracleDecode, requestType } from '../../server/otlp/schema.js';
import { Store } from '../../server/store/store.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { protoBody } from '../../bench/workload.js';

const TRACES = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));
const LAZY = { lazySpans: true };
const BOUNDED = { timeout: 120_000 };
const FIXTURE = readFileSync(new URL('../../fixtures/traces.pb', import.meta.url));

/** @param {Uint8Array} bytes @returns {{ value: any } | { error: string }} */
function outcome(bytes, lazy = false) {
  try {
    const request = decodeProto(TRACES, bytes, lazy ? LAZY : undefined);
    return { value: lazy ? builtRequest(TRACES, request) : request };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err.message };
    throw err;
  }
}

/** @param {any} request @returns {any[]} the spans of every resource and scope, in order */
function lazySpansOf(request) {
  return request.resourceSpans.flatMap((/** @type {any} */ g) => g.scopeSpans.flatMap((/** @type {any} */ s) => s.spans));
}

test('300 random trace requests: built lazy spans equal the reference, decoded three times over', BOUNDED, () => {
  const type = requestType('traces');
  const r = createRandom(0x1a27);
  for (let i = 0; i < 300; i++) {
    const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10 });
    for (const bytes of [encodeRequest('traces', request), encodeLiberally(r, type, request)]) {
      const full = outcome(bytes);
      // The first sighting of an attribute decodes it, the second keeps it, the third is served from the table.
      for (let round = 0; round < 3; round++) {
        assert.deepStrictEqual(outcome(bytes, true), full, `message ${i}, round ${round}`);
        assert.deepStrictEqual(outcome(bytes), full, `message ${i}, round ${round}`);
      }
      if ('value' in full) assert.deepStrictEqual(full.value, oracleDecode('traces', bytes), `message ${i}`);
    }
  }
});

test('every truncation and random corruption is rejected by the check exactly when, and as, a full decode rejects it', BOUNDED, () => {
  const r = createRandom(0xc0de);
  for (const original of [FIXTURE, protoBody(7)]) {
    const step = Math.max(1, Math.floor(original.length / 600));
    for (let end = 0; end < original.length; end += step) {
      const bytes = original.subarray(0, end);
      assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `truncated at ${end}`);
    }
    for (let i = 0; i < 600; i++) {
      const bytes = Buffer.from(original);
      for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.int(256);
      assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `corruption ${i}`);
    }
  }
});

test('random bytes: the check and a full decode give the same answer', BOUNDED, () => {
  const r = createRandom(0xb17e);
  for (let i = 0; i < 3000; i++) {
    const bytes = r.bytes(r.int(i % 10 === 0 ? 4000 : 64));
    assert.deepStrictEqual(outcome(bytes, true), outcome(bytes), `random message ${i}`);
  }
});

test('a lazy span carries its trace id unbuilt, builds once per macrotask, and builds alike afterwards', async () => {
  const request = decodeProto(TRACES, FIXTURE, LAZY);
  const spans = lazySpansOf(request);
  const full = lazySpansOf(decodeProto(TRACES, FIXTURE));
  assert.ok(spans.length > 3);
  for (const [i, lazy] of spans.entries()) {
    assert.ok(lazy instanceof LazySpan);
    assert.equal(lazy.span, null, 'nothing is built at ingest');
    assert.equal(lazy.traceId, full[i].traceId);
  }
  const first = spans[0].build();
  assert.equal(spans[0].build(), first, 'the same object within a macrotask');
  assert.deepStrictEqual(first, full[0]);
  await nextMacrotask();
  assert.equal(spans[0].span, null, 'the built span is not kept past its macrotask');
  const again = spans[0].build();
  assert.notEqual(again, first);
  assert.deepStrictEqual(again, first);
});

test('a request read from a slice of a larger buffer keeps only its own bytes', () => {
  const big = Buffer.alloc(FIXTURE.length + 100_000);
  FIXTURE.copy(big, 50_000);
  const slice = big.subarray(50_000, 50_000 + FIXTURE.length);
  const [lazy] = lazySpansOf(decodeProto(TRACES, slice, LAZY));
  assert.equal(lazy.source.bytes.buffer.byteLength, FIXTURE.length);
  big.fill(0);
  assert.deepStrictEqual(lazy.build(), lazySpansOf(decodeProto(TRACES, FIXTURE))[0]);
});

test('the store indexes, evicts and returns lazy spans like decoded ones', () => {
  const body = protoBody(3);
  const decoded = lazySpansOf(decodeProto(TRACES, body));
  const store = new Store({ maxSpans: 700 });
  store.addRequest('traces', decodeProto(TRACES, body, LAZY), 1);
  store.addRequest('traces', decodeProto(TRACES, body, LAZY), 2);
  const stats = store.stats().traces;
  assert.equal(stats.stored, 700);
  assert.equal(stats.evicted, 2 * decoded.length - 700);
  const entries = [...store.ring('traces')];
  assert.equal(entries[0].ctx.requestId, 1);
  assert.deepStrictEqual(entries.at(-1)?.item, decoded.at(-1));
  const traceId = decoded[0].traceId;
  const ofTrace = store.spansOfTrace(traceId);
  assert.deepStrictEqual(
    ofTrace.map((e) => e.item.spanId),
    decoded.filter((s) => s.traceId === traceId).map((s) => s.spanId),
    'the first request lost this trace to eviction; the second still holds it whole',
  );
  assert.ok(ofTrace.every((e) => e.ctx.requestId === 2));
  store.clear();
  assert.deepStrictEqual(store.spansOfTrace(traceId), []);
});

test('attributes that differ in a single byte anywhere are never mistaken for one another', () => {
  const base = 'GET /api/products/0123456789/reviews?page=1';
  const spans = [];
  for (let at = 0; at < base.length; at++) {
    const value = base.slice(0, at) + '#' + base.slice(at + 1);
    spans.push({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'x', attributes: [{ key: 'url.full', value: { stringValue: value } }] });
  }
  spans.push({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'x', attributes: [{ key: 'url.full', value: { stringValue: base } }] });
  const bytes = encodeRequest('traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] });
  const expected = oracleDecode('traces', bytes);
  for (let round = 0; round < 3; round++) assert.deepStrictEqual(decodeProto(TRACES, bytes), expected, `round ${round}`);
});

test('the fields queries filter on are read from a lazy span without building it, and agree with the built span', async () => {
  const type = requestType('traces');
  const r = createRandom(0xf11e);
  for (let i = 0; i < 200; i++) {
    const bytes = encodeLiberally(r, type, randomRequest(r, type, { maxDepth: 4 }));
    const full = outcome(bytes);
    if (!('value' in full)) continue;
    const built = lazySpansOf(full.value);
    const lazy = lazySpansOf(decodeProto(TRACES, bytes, LAZY));
    for (const [n, span] of built.entries()) {
      const expected = {
        name: span.name,
        isRoot: span.parentSpanId === '',
        startTimeUnixNano: span.startTimeUnixNano,
        endTimeUnixNano: span.endTimeUnixNano,
        statusCode: span.status.code,
      };
      assert.deepStrictEqual(lazy[n].outline(), expected, `message ${i}, span ${n}`);
      const keys = [...span.attributes.map((/** @type {any} */ kv) => kv.key), 'absent.key', ''];
      for (const key of keys) {
        const first = span.attributes.find((/** @type {any} */ kv) => kv.key === key);
        assert.deepStrictEqual(lazy[n].attribute(key), first?.value, `message ${i}, span ${n}, attribute ${key}`);
      }
      assert.equal(lazy[n].span, null, 'reading fields built nothing');
    }
  }
});
