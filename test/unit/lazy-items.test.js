// Spans, log records and data points received in protobuf are checked at ingest and built only when read
// (LazyItem); the store keeps log records and data points as places in their requests' bytes (PlaceRing).
// The check must accept and reject exactly what a full decode does; building, every field reader and every
// query must give exactly what a full decode gives.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import protobuf from 'protobufjs';
import { builtRequest, decodeProto, LazyItem, LazySpan, logTimeOf } from '../../server/otlp/items.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { LazyMetric } from '../../server/otlp/metric.js';
import { isKeptWhole } from '../../server/otlp/kept-bytes.js';
import { encodeRequest, oracleDecode, requestType } from '../../server/otlp/schema.js';
import { Store } from '../../server/store/store.js';
import { listing } from '../../server/query/engine.js';
import { rebuildRequest } from '../../server/store/rebuild.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { protoBody } from '../../bench/workload.js';
import { logRequest, metricRequest } from '../../bench/fill.js';

/** @typedef {'traces'|'logs'|'metrics'} SignalName */
/** @type {SignalName[]} */
const SIGNAL_NAMES = ['traces', 'logs', 'metrics'];
const LAZY = { lazy: true };
const BOUNDED = { timeout: 120_000 };
const METRIC_TYPES = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'];

/** @param {SignalName} name */
const signal = (name) => /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName(name));

/** @param {string} file */
const fixture = (file) => readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));

/** A realistic request of each signal, as the benchmarks send them. @type {Record<SignalName, (n: number) => Uint8Array>} */
const REALISTIC = {
  traces: (n) => protoBody(n),
  logs: (n) => encodeRequest('logs', logRequest(n)),
  metrics: (n) => encodeRequest('metrics', metricRequest(n)),
};

/**
 * The request decoded fully, or lazily and then built; or the DecodeError's message.
 * @param {SignalName} name @param {Uint8Array} bytes @returns {{ value: any } | { error: string }}
 */
function outcome(name, bytes, lazy = false) {
  try {
    const request = decodeProto(signal(name), bytes, lazy ? LAZY : undefined);
    return { value: lazy ? builtRequest(signal(name), request) : request };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err.message };
    throw err;
  }
}

/** @param {SignalName} name @param {any} request @returns {any[]} every span, log record or data point, in order */
function itemsOf(name, request) {
  const s = signal(name);
  const items = request[s.rootField].flatMap((/** @type {any} */ g) => g[s.scopeField].flatMap((/** @type {any} */ sg) => sg[s.itemField]));
  if (name !== 'metrics') return items;
  return items.flatMap((/** @type {any} */ m) => (m instanceof LazyMetric ? m.dataPoints : METRIC_TYPES.filter((t) => m[t]).flatMap((t) => m[t].dataPoints)));
}

test('300 random requests of each signal: built lazy items equal the full decode and the reference, three times over', BOUNDED, () => {
  for (const name of SIGNAL_NAMES) {
    const type = requestType(name);
    const r = createRandom(0x1a27 + name.length);
    for (let i = 0; i < 300; i++) {
      const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10 });
      for (const bytes of [encodeRequest(name, request), encodeLiberally(r, type, request)]) {
        const full = outcome(name, bytes);
        // The first sighting of an attribute decodes it, the second keeps it, the third is served from the table.
        for (let round = 0; round < 3; round++) {
          assert.deepStrictEqual(outcome(name, bytes, true), full, `${name} message ${i}, round ${round}`);
          assert.deepStrictEqual(outcome(name, bytes), full, `${name} message ${i}, round ${round}`);
        }
        if ('value' in full) assert.deepStrictEqual(full.value, oracleDecode(name, bytes), `${name} message ${i}`);
      }
    }
  }
});

test('every truncation and random corruption is rejected by the check exactly when, and as, a full decode rejects it', BOUNDED, () => {
  const r = createRandom(0xc0de);
  for (const name of SIGNAL_NAMES) {
    for (const original of [fixture(`${name}.pb`), REALISTIC[name](7)]) {
      const step = Math.max(1, Math.floor(original.length / 400));
      for (let end = 0; end < original.length; end += step) {
        const bytes = original.subarray(0, end);
        assert.deepStrictEqual(outcome(name, bytes, true), outcome(name, bytes), `${name}, truncated at ${end}`);
      }
      for (let i = 0; i < 400; i++) {
        const bytes = Buffer.from(original);
        for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.int(256);
        assert.deepStrictEqual(outcome(name, bytes, true), outcome(name, bytes), `${name}, corruption ${i}`);
      }
    }
  }
});

test('random bytes: the check and a full decode give the same answer', BOUNDED, () => {
  const r = createRandom(0xb17e);
  for (let i = 0; i < 3000; i++) {
    const bytes = r.bytes(r.int(i % 10 === 0 ? 4000 : 64));
    for (const name of SIGNAL_NAMES) assert.deepStrictEqual(outcome(name, bytes, true), outcome(name, bytes), `${name}, random message ${i}`);
  }
});

test('a lazy item builds nothing at ingest, builds once per macrotask, and builds alike afterwards', async () => {
  for (const name of SIGNAL_NAMES) {
    const bytes = fixture(`${name}.pb`);
    const items = itemsOf(name, decodeProto(signal(name), bytes, LAZY));
    const full = itemsOf(name, decodeProto(signal(name), bytes));
    assert.ok(items.length > 3 && items.length === full.length, name);
    for (const item of items) {
      assert.ok(item instanceof LazyItem, name);
      assert.equal(item.built, null, `${name}: nothing is built at ingest`);
    }
    const first = items[0].build();
    assert.equal(items[0].build(), first, 'the same object within a macrotask');
    assert.deepStrictEqual(first, full[0]);
    await nextMacrotask();
    assert.equal(items[0].built, null, 'the built item is not kept past its macrotask');
    const again = items[0].build();
    assert.notEqual(again, first);
    assert.deepStrictEqual(again, first);
  }
  const spans = itemsOf('traces', decodeProto(signal('traces'), fixture('traces.pb'), LAZY));
  const fullSpans = itemsOf('traces', decodeProto(signal('traces'), fixture('traces.pb')));
  for (const [i, span] of spans.entries()) assert.equal(span.traceId, fullSpans[i].traceId, 'a lazy span carries its trace id unbuilt');
});

test('a request read from a slice of a larger buffer keeps only its own bytes', () => {
  for (const name of SIGNAL_NAMES) {
    const bytes = fixture(`${name}.pb`);
    const big = Buffer.alloc(bytes.length + 100_000);
    bytes.copy(big, 50_000);
    const [lazy] = itemsOf(name, decodeProto(signal(name), big.subarray(50_000, 50_000 + bytes.length), LAZY));
    assert.equal(lazy.source.bytes.length, bytes.length, name);
    assert.notEqual(lazy.source.bytes.buffer, big.buffer, `${name}: a copy, not a view into the larger buffer`);
    assert.ok(isKeptWhole(lazy.source.bytes), `${name}: in memory of its own (kept-bytes.js)`);
    big.fill(0);
    assert.deepStrictEqual(lazy.build(), itemsOf(name, decodeProto(signal(name), bytes))[0], name);
  }
});

/**
 * What the query engine reads of an item without building it, as the built item gives it.
 * @param {SignalName} name @param {any} item a canonical item @param {any} ctx its context (metrics: `metric`)
 */
function expectedFields(name, item, ctx) {
  const keys = [...item.attributes.map((/** @type {any} */ kv) => kv.key), 'absent.key', ''];
  /** @type {Record<string, any>} */
  const attributes = {};
  for (const key of keys) attributes[key] = item.attributes.find((/** @type {any} */ kv) => kv.key === key)?.value;
  if (name === 'traces') {
    return {
      attributes,
      spanId: item.spanId,
      outline: {
        name: item.name,
        isRoot: item.parentSpanId === '',
        startTimeUnixNano: item.startTimeUnixNano,
        endTimeUnixNano: item.endTimeUnixNano,
        statusCode: item.status.code,
      },
      treeNode: { spanId: item.spanId, parentSpanId: item.parentSpanId, startTimeUnixNano: item.startTimeUnixNano },
      facts: {
        isRoot: item.parentSpanId === '',
        statusCode: item.status.code,
        startHi: Number(BigInt(item.startTimeUnixNano) >> 32n),
        startLo: Number(BigInt(item.startTimeUnixNano) & 0xffffffffn),
        endHi: Number(BigInt(item.endTimeUnixNano) >> 32n),
        endLo: Number(BigInt(item.endTimeUnixNano) & 0xffffffffn),
      },
      start: { hi: Number(BigInt(item.startTimeUnixNano) >> 32n), lo: Number(BigInt(item.startTimeUnixNano) & 0xffffffffn) },
    };
  }
  if (name === 'logs') {
    return { attributes, traceId: item.traceId, spanId: item.spanId, time: logTimeOf(item), severityNumber: item.severityNumber, body: item.body };
  }
  return { attributes, time: item.timeUnixNano, type: ctx.metric.type };
}

/** The same fields, read from a store entry. @param {SignalName} name @param {any} entry @param {string[]} keys */
function readFields(name, entry, keys) {
  /** @type {Record<string, any>} */
  const attributes = {};
  for (const key of keys) attributes[key] = entry.attribute(key);
  if (name === 'traces')
    return { attributes, spanId: entry.spanId(), outline: entry.outline(), treeNode: entry.treeNode(), facts: { ...entry.facts() }, start: { ...entry.startHalves() } };
  if (name === 'logs')
    return { attributes, traceId: entry.traceId, spanId: entry.spanId(), time: entry.time(), severityNumber: entry.severityNumber(), body: entry.body() };
  return { attributes, time: entry.time(), type: entry.ctx.metric.type };
}

test('every field a query reads comes from the bytes without a build, as the built item and a decoded entry give it', BOUNDED, () => {
  for (const name of SIGNAL_NAMES) {
    const type = requestType(name);
    const r = createRandom(0xf11e + name.length);
    let compared = 0;
    for (let i = 0; i < 200; i++) {
      const bytes = i % 10 === 0 ? REALISTIC[name](i) : encodeLiberally(r, type, randomRequest(r, type, { maxDepth: 4 }));
      const full = outcome(name, bytes);
      if (!('value' in full)) continue;
      const lazyStore = new Store();
      const decodedStore = new Store();
      lazyStore.addRequest(name, decodeProto(signal(name), bytes, LAZY), 1);
      decodedStore.addRequest(name, full.value, 1);
      const lazyEntries = [...lazyStore.ring(name)];
      const decodedEntries = [...decodedStore.ring(name)];
      assert.equal(lazyEntries.length, itemsOf(name, full.value).length, `${name} message ${i}`);
      for (const [n, entry] of lazyEntries.entries()) {
        const decoded = decodedEntries[n];
        const expected = expectedFields(name, decoded.item, decoded.ctx);
        const keys = Object.keys(expected.attributes);
        assert.deepStrictEqual(readFields(name, entry, keys), expected, `${name} message ${i}, item ${n}`);
        assert.deepStrictEqual(readFields(name, decoded, keys), expected, `${name} message ${i}, item ${n}, decoded`);
        assert.equal(/** @type {any} */ (entry).built, null, 'reading fields built nothing');
        assert.deepStrictEqual(entry.item, decoded.item, `${name} message ${i}, item ${n}`);
        assert.equal(entry.seq, decoded.seq);
        assert.deepStrictEqual(entry.ctx.metric, decoded.ctx.metric);
        // A built item answers from what it built: the same again.
        assert.deepStrictEqual(readFields(name, entry, keys), expected, `${name} message ${i}, item ${n}, built`);
        compared++;
      }
    }
    assert.ok(compared > 300, `${name}: ${compared} items compared`);
  }
});

test('log records and data points come back from their places in order, numbered, through eviction and clearing', () => {
  for (const name of /** @type {const} */ (['logs', 'metrics'])) {
    const store = new Store({ maxLogs: 1500, maxPoints: 500 });
    const capacity = store.ring(name).capacity;
    /** @type {any[]} */
    const sent = [];
    /** @type {{ seq: number, item: any }[]} */
    const seen = [];
    store.subscribe(({ entries }) => seen.push(...entries.map((e) => ({ seq: e.seq, item: e.item }))));
    for (let n = 0; n < 7; n++) {
      const bytes = REALISTIC[name](n);
      // Every other request is stored decoded, as OTLP/JSON that the protobuf path cannot carry is.
      const request = n % 2 ? decodeProto(signal(name), bytes) : decodeProto(signal(name), bytes, LAZY);
      store.addRequest(name, request, n + 1, bytes.length);
      sent.push(...itemsOf(name, decodeProto(signal(name), bytes)));
      const ring = store.ring(name);
      const expected = seen.slice(-capacity);
      assert.equal(ring.size, Math.min(capacity, sent.length));
      assert.deepStrictEqual(
        [...ring].map((e) => e.item),
        sent.slice(-capacity),
        `${name} after request ${n}`,
      );
      assert.deepStrictEqual(
        [...ring].map((e) => e.seq),
        expected.map((e) => e.seq),
        `${name} after request ${n}`,
      );
      assert.deepStrictEqual(
        [...ring.newestFirst()].map((e) => e.seq),
        expected.map((e) => e.seq).reverse(),
      );
      assert.equal(ring.at(ring.size - 1).seq, expected.at(-1)?.seq);
    }
    // Bytes: what the remaining items count, whichever way they are stored.
    const ring = store.ring(name);
    const bytes = [...ring].reduce((sum, e) => sum + e.ctx.batch.share, 0);
    assert.equal(ring.bytes, bytes);
    while (ring.size > 3) ring.shift();
    assert.deepStrictEqual(
      [...ring].map((e) => e.item),
      sent.slice(-3),
    );
    store.clear();
    assert.equal(ring.size, 0);
    assert.equal(ring.bytes, 0);
    store.addRequest(name, decodeProto(signal(name), REALISTIC[name](9), LAZY), 99);
    assert.deepStrictEqual(ring.at(0).item, itemsOf(name, decodeProto(signal(name), REALISTIC[name](9)))[0]);
  }
});

test("a lazy span's start is read where the check found it: the last of a start given twice, none after a span that had one", () => {
  /** @param {string[]} starts */
  const spanBytes = (starts) => {
    const w = protobuf.Writer.create();
    w.uint32(10).bytes(Buffer.alloc(16, 1)).uint32(18).bytes(Buffer.alloc(8, 2)).uint32(42).string('s');
    for (const start of starts) w.uint32(57).fixed64(start);
    return w.finish();
  };
  const cases = [['1700000000123456789'], ['18446744073709551615', '1700000000987654321'], [], ['4294967296']];
  const w = protobuf.Writer.create();
  w.uint32(10).fork().uint32(18).fork();
  for (const starts of cases) w.uint32(18).bytes(spanBytes(starts));
  w.ldelim().ldelim();
  const store = new Store();
  store.addRequest('traces', decodeProto(signal('traces'), w.finish(), LAZY), 1);
  const entries = [...store.ring('traces')];
  assert.deepStrictEqual(
    entries.map((e) => ({ .../** @type {import('../../server/otlp/model.js').SpanEntry} */ (e).startHalves() })),
    cases.map((starts) => {
      const n = BigInt(starts.at(-1) ?? 0);
      return { hi: Number(n >> 32n), lo: Number(n & 0xffffffffn) };
    }),
  );
  assert.deepStrictEqual(
    entries.map((e) => e.item.startTimeUnixNano),
    cases.map((starts) => starts.at(-1) ?? '0'),
  );
});

test('the store indexes, evicts and returns lazy spans like decoded ones', () => {
  const body = protoBody(3);
  const decoded = itemsOf('traces', decodeProto(signal('traces'), body));
  const store = new Store({ maxSpans: 700 });
  store.addRequest('traces', decodeProto(signal('traces'), body, LAZY), 1);
  store.addRequest('traces', decodeProto(signal('traces'), body, LAZY), 2);
  const stats = store.stats().traces;
  assert.equal(stats.stored, 700);
  assert.equal(stats.evicted, 2 * decoded.length - 700);
  const entries = [...store.ring('traces')];
  assert.ok(entries.every((e) => e instanceof LazySpan));
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

test('an item whose length prefix is longer than it needs to be is found again', () => {
  /** @param {Uint8Array} bytes @param {number} extra bytes of the length varint beyond the shortest */
  const overlong = (bytes, extra) => {
    const prefix = [];
    let n = bytes.length;
    for (let i = 0; i <= extra; i++) {
      prefix.push((n & 0x7f) | (i < extra ? 0x80 : 0));
      n >>>= 7;
    }
    return Buffer.concat([Buffer.from(prefix), bytes]);
  };
  const record = (/** @type {string} */ text) =>
    encodeRequest('logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: text }, severityNumber: 9 }] }] }] });
  const records = ['a', 'b'.repeat(200), 'c'.repeat(20_000)].map((text) => oracleRecordBytes(record(text)));
  const scope = Buffer.concat(records.flatMap((bytes, i) => [Buffer.from([0x12]), overlong(bytes, i + 1)]));
  const bytes = protobuf.Writer.create().uint32(0x0a).fork().uint32(0x12).bytes(scope).ldelim().finish();
  const expected = oracleDecode('logs', bytes);
  const store = new Store();
  store.addRequest('logs', decodeProto(signal('logs'), bytes, LAZY), 1);
  assert.deepStrictEqual(
    [...store.ring('logs')].map((e) => e.item),
    itemsOf('logs', expected),
  );
  assert.deepStrictEqual(
    [...store.ring('logs')].map((e) => /** @type {import('../../server/otlp/model.js').LogEntry} */ (e).body().stringValue?.length),
    [1, 200, 20_000],
  );
});

/** The bytes of the only log record of a request protobufjs encoded: three nested length-delimited fields. @param {Uint8Array} bytes */
function oracleRecordBytes(bytes) {
  let r = protobuf.Reader.create(bytes);
  for (let depth = 0; depth < 3; depth++) {
    r.uint32();
    r = protobuf.Reader.create(r.bytes());
  }
  return r.buf.subarray(r.pos, r.len);
}

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
  for (let round = 0; round < 3; round++) assert.deepStrictEqual(decodeProto(signal('traces'), bytes), expected, `round ${round}`);
});

/** Queries of each kind, over what the realistic requests hold and what random ones may. */
const QUERIES = {
  spans: [
    '',
    'service=frontend',
    'name=GET%20/api/cart',
    'nameContains=cart',
    'attr.app.tenant=tenant-7',
    'attr.http.route=',
    'error=true',
    'minDurationMs=20',
    'from=1768469450000&to=1768469460000',
    'sort=duration',
    'sort=start&order=desc',
    'spanId=0000000000000001',
  ],
  logs: [
    '',
    'service=payment',
    'severity=13',
    'maxSeverity=9',
    'body=declined',
    'attr.app.tenant=tenant-7',
    'attr.code.function=',
    'from=1768469400500&to=1768469402000',
    'sort=time',
    'sort=time&order=desc',
    'limit=7',
  ],
  metrics: [
    '',
    'points=none',
    'service=frontend&name=app.metric_0',
    'nameContains=metric_1',
    'attr.http.route=/api/cart&points=none',
    'from=1768469410000&to=1768469500000',
    'order=desc&limit=3',
  ],
};

test('every query answers alike over items stored lazily and stored decoded', BOUNDED, async () => {
  const lazyStore = new Store();
  const decodedStore = new Store();
  const r = createRandom(0x9e11);
  /** @type {Record<string, string>} */
  const kinds = { traces: 'spans', logs: 'logs', metrics: 'metrics' };
  const traceIds = [];
  for (const name of SIGNAL_NAMES) {
    const type = requestType(name);
    for (let n = 0; n < 12; n++) {
      const bytes = n % 3 === 2 ? encodeLiberally(r, type, randomRequest(r, type, { maxDepth: 4 })) : REALISTIC[name](n);
      const full = outcome(name, bytes);
      if (!('value' in full)) continue;
      lazyStore.addRequest(name, decodeProto(signal(name), bytes, LAZY), n + 1, bytes.length);
      decodedStore.addRequest(name, full.value, n + 1, bytes.length);
    }
    const some = [...decodedStore.ring(name)].filter((e) => e.item.traceId).slice(0, 3);
    traceIds.push(...some.map((e) => e.item.traceId));
    const kind = /** @type {import('../../server/query/params.js').ListKind} */ (kinds[name]);
    const extra = name === 'metrics' ? [] : [...some.map((e) => `traceId=${e.item.traceId}`), ...some.map((e) => `spanId=${e.item.spanId}`), 'requestId=2'];
    for (const query of [...QUERIES[/** @type {'spans'|'logs'|'metrics'} */ (kind)], ...extra]) {
      const raw = Object.fromEntries(new URLSearchParams(query));
      /** @param {Store} store */
      const answer = async (store) => {
        const l = listing(kind, raw, { store, journal: /** @type {any} */ (null) });
        const page = await l.page();
        return { ...page, items: page.items.map(l.view) };
      };
      const expected = await answer(decodedStore);
      assert.deepStrictEqual(await answer(lazyStore), expected, `${kind}?${query}`);
      if (query === '') assert.ok(expected.total > 0, kind);
    }
    assert.deepStrictEqual(rebuildRequest(name, lazyStore.ring(name)), rebuildRequest(name, decodedStore.ring(name)), `${name}: export`);
  }
  for (const traceId of traceIds) {
    const l = (/** @type {Store} */ store) => listing('traces', { traceId }, { store, journal: /** @type {any} */ (null) });
    const [lazy, decoded] = [l(lazyStore), l(decodedStore)];
    const [a, b] = [await lazy.page(), await decoded.page()];
    assert.deepStrictEqual(a.items.map(lazy.view), b.items.map(decoded.view), `traces?traceId=${traceId}`);
  }
});

test('a lazily decoded metric is its stored form, shared by every request that sends it, and its checked points', () => {
  const bytes = fixture('metrics.pb');
  const metricsOf = (/** @type {any} */ request) =>
    request.resourceMetrics.flatMap((/** @type {any} */ g) => g.scopeMetrics.flatMap((/** @type {any} */ sg) => sg.metrics));
  const first = metricsOf(decodeProto(signal('metrics'), bytes, LAZY));
  const second = metricsOf(decodeProto(signal('metrics'), bytes, LAZY));
  const full = metricsOf(decodeProto(signal('metrics'), bytes));
  assert.equal(first.length, full.length);
  for (const [i, m] of first.entries()) {
    assert.ok(m instanceof LazyMetric);
    assert.ok(Object.isFrozen(m.metric));
    assert.equal(second[i].metric, m.metric, 'one stored metric for every request that sends it');
    const type = /** @type {string} */ (METRIC_TYPES.find((t) => full[i][t]));
    assert.equal(m.metric.type, type);
    assert.equal(m.metric.name, full[i].name);
    assert.equal(m.dataPoints.length, full[i][type].dataPoints.length);
  }
});

test('data points of metrics interleaved point by point come back with their own metric, through eviction', () => {
  for (const capacity of [250, 3000]) {
    const store = new Store({ maxPoints: capacity });
    const ring = /** @type {import('../../server/store/places.js').PlaceRing<any>} */ (store.ring('metrics'));
    // Holders are numbered in 32 bits: start just short of the wrap, so that numbering wraps around mid-test.
    ring.nextHolder = ring.oldestHeld = 2 ** 32 - 500;
    const NAMES = ['a.requests', 'b.duration', 'c.utilization'];
    /** @type {{ name: string, item: any }[]} */
    const sent = [];
    for (let n = 0; n < (capacity > 1000 ? 40 : 6); n++) {
      const metrics = [];
      for (let i = 0; i < 100; i++) {
        const point = { attributes: [{ key: 'i', value: { intValue: String(i) } }], timeUnixNano: String(1e18 + n * 1000 + i), asInt: String(n * 100 + i) };
        metrics.push({ name: NAMES[i % 3], unit: '1', gauge: { dataPoints: [point] } });
      }
      const request = {
        resourceMetrics: [
          {
            resource: { attributes: [] },
            scopeMetrics: [
              { scope: { name: 's' }, metrics },
              { scope: { name: 't' }, metrics: metrics.slice(0, 10) },
            ],
          },
        ],
      };
      const bytes = encodeRequest('metrics', request);
      store.addRequest('metrics', decodeProto(signal('metrics'), bytes, LAZY), n + 1, bytes.length);
      const full = decodeProto(signal('metrics'), bytes);
      for (const sg of full.resourceMetrics[0].scopeMetrics) for (const m of sg.metrics) sent.push({ name: m.name, item: m.gauge.dataPoints[0] });
      assert.deepStrictEqual(
        [...ring].map((e) => ({ name: e.ctx.metric.name, item: e.item })),
        sent.slice(-ring.capacity),
        `after request ${n}`,
      );
    }
    // Every point here has a holder of its own (its neighbours are other metrics): more than the holders' ring had
    // room for at first, and those of evicted points are let go.
    const holding = ring.held.filter((holder) => holder !== undefined).length;
    assert.equal(holding, capacity, `${capacity} points hold one context each`);
    assert.ok(ring.held.length >= capacity && ring.held.length < 2 * capacity + 1024);
  }
});

test('resources that differ in a single byte are each decoded once and shared by every request that sends them', () => {
  const request = (/** @type {number} */ n) => ({
    resourceLogs: Array.from({ length: 16 }, (_, i) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: 'checkout' } },
          { key: 'service.instance.id', value: { stringValue: `checkout-${i.toString(16)}` } },
        ],
      },
      scopeLogs: [{ scope: { name: 'app' }, logRecords: [{ timeUnixNano: String(n), body: { stringValue: 'x' } }] }],
    })),
  });
  const resources = (/** @type {number} */ n) =>
    decodeProto(signal('logs'), encodeRequest('logs', request(n)), LAZY).resourceLogs.map((/** @type {any} */ g) => g.resource);
  const first = resources(1);
  assert.equal(new Set(first).size, 16);
  for (let n = 2; n < 5; n++)
    assert.deepStrictEqual(
      resources(n).map((/** @type {any} */ r, /** @type {number} */ i) => r === first[i]),
      first.map(() => true),
      `request ${n}`,
    );
});
