// Listing traces by service: short traces are matched by reading their spans, so a scan of a store of many small
// traces leaves no summary behind on each; so are traces whose summary is far behind, rather than read at once; the
// answer is the one the summaries give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../server/store/store.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { decodeProto } from '../../server/otlp/items.js';
import { encodeOtlpRequest } from '../helpers/otlp-pb.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { listing } from '../../server/query/engine.js';
import { summaryOf, readSummaryInSteps, traceFilters, startNsOf } from '../../server/query/traces.js';
import { Slicer } from '../../server/query/scan.js';

/** One request of `count` spans, `perTrace` to a trace, of one service. @param {string} service @param {number} count @param {number} perTrace @param {number} batch */
function request(service, count, perTrace, batch) {
  const spans = Array.from({ length: count }, (_, i) => ({
    traceId: (batch * 1000 + Math.floor(i / perTrace) + 1).toString(16).padStart(32, '0'),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name: `op ${i}`,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000000100000000',
  }));
  const json = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] };
  return decodeJson(SIGNALS.traces, JSON.stringify(json));
}

test('a service filter over short traces builds no summaries, and matches what the summaries say', async () => {
  const store = new Store();
  store.addRequest('traces', request('a', 200, 1, 1), 1);
  store.addRequest('traces', request('b', 100, 1, 2), 2);
  store.addRequest('traces', request('a', 40, 20, 3), 3);
  const page = await listing('traces', { service: 'a', limit: '1000' }, { store, journal: /** @type {any} */ (null) }).page();
  assert.equal(page.count, 202);
  const traces = [...store.eachTrace()];
  const summarised = traces.filter((t) => t.summary !== null);
  assert.deepEqual(
    summarised.map((t) => t.entries.length - t.head),
    [20, 20],
    'only the traces longer than a few spans have a summary',
  );
  const bySummary = traces.filter((t) => summaryOf(t).services.has('a')).length;
  assert.equal(bySummary, 202);
});

test('a trace whose summary is far behind is matched by service without reading its new spans at once', () => {
  const store = new Store();
  store.addRequest('traces', request('a', 20, 20, 1), 1);
  const trace = /** @type {import('../../server/store/store.js').TraceSpans} */ ([...store.eachTrace()][0]);
  const read = summaryOf(trace).length;
  store.addRequest('traces', request('b', 5000, 5000, 1), 2);
  const byService = (/** @type {string} */ service) => traceFilters(/** @type {any} */ ({ service, attributes: [] }))[0].match(trace);
  assert.equal(byService('b'), true, 'the service of the spans that arrived since');
  assert.equal(byService('c'), false);
  assert.equal(/** @type {any} */ (trace.summary).length, read, 'the summary was not brought up to date at once');
  store.addRequest('traces', request('c', 10, 10, 1), 3);
  summaryOf(trace);
  assert.equal(byService('c'), true, 'an up-to-date summary answers');
  assert.equal(byService('d'), false);
});

test('the summary of a trace that keeps growing while its oldest spans are evicted follows the list as it is cut, and says what a fresh one says', () => {
  const store = new Store({ maxSpans: 500 });
  const id = '1'.padStart(32, '0');
  /** @param {string} service @param {number} batch */
  const batchOf = (service, batch) => {
    const spans = Array.from({ length: 30 }, (_, i) => ({
      traceId: id,
      spanId: (batch * 100 + i + 1).toString(16).padStart(16, '0'),
      ...(i === 0 ? {} : { parentSpanId: (batch * 100 + 1).toString(16).padStart(16, '0') }),
      name: `op ${i}`,
      startTimeUnixNano: String(1700000000000000000n + BigInt(batch * 1000 + i)),
      endTimeUnixNano: String(1700000000100000000n + BigInt(batch * 1000 + i)),
      status: i === 3 ? { code: 2 } : {},
    }));
    const json = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] };
    return decodeJson(SIGNALS.traces, JSON.stringify(json));
  };
  let cut = 0;
  for (let batch = 0; batch < 120; batch++) {
    store.addRequest('traces', batchOf(batch % 7 === 0 ? 'b' : 'a', batch), batch);
    const trace = /** @type {import('../../server/store/store.js').TraceSpans} */ (store.traces.get(id));
    const kept = summaryOf(trace);
    const seen = trace.compacted;
    if (seen > 0) cut++;
    trace.summary = null;
    const fresh = summaryOf(trace);
    trace.summary = kept;
    assert.equal(summaryOf(trace), kept, 'the kept summary was brought up to date, not made again');
    // Services are compared as a set: a kept summary lists them in the order they first came, a fresh one in the order of what is stored.
    const shown = (/** @type {any} */ s) => ({ ...s, facts: undefined, services: [...s.services].sort() });
    assert.deepEqual(shown(kept), shown(fresh), `after batch ${batch}`);
  }
  assert.ok(cut > 0, 'the list was cut');
});

test('a large trace summary read in steps, while spans arrive and leave between them, says what one read at once says', async () => {
  const store = new Store({ maxSpans: 36_000 });
  const id = '2'.padStart(32, '0');
  let batch = 0;
  const add = () => {
    batch++;
    const spans = Array.from({ length: 500 }, (_, i) => ({
      traceId: id,
      spanId: (batch * 1000 + i + 1).toString(16).padStart(16, '0'),
      ...(batch === 1 && i === 0 ? {} : { parentSpanId: '1'.padStart(16, '0') }),
      name: `op ${i}`,
      startTimeUnixNano: String(1700000000000000000n + BigInt(batch * 1000 + i)),
      endTimeUnixNano: String(1700000000100000000n + BigInt(batch * 1000 + i)),
      status: i === 7 ? { code: 2 } : {},
    }));
    const service = batch % 5 === 0 ? 'b' : 'a';
    const json = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] };
    store.addRequest('traces', decodeJson(SIGNALS.traces, JSON.stringify(json)), batch);
  };
  while (batch < 70) add();
  const trace = /** @type {import('../../server/store/store.js').TraceSpans} */ (store.traces.get(id));
  assert.equal(trace.summary, null);
  let reading = true;
  let addedMeanwhile = 0;
  const arrivals = (async () => {
    while (reading) {
      add();
      addedMeanwhile++;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const steps = readSummaryInSteps(trace, new Slicer(1));
  assert.ok(steps, 'a trace of 35,000 unread spans is read in steps');
  await steps;
  reading = false;
  await arrivals;
  assert.ok(addedMeanwhile > 2, `spans arrived between the steps (${addedMeanwhile} requests)`);
  assert.ok(trace.compacted > 0 || trace.head > 0, 'spans left from the front');
  const kept = summaryOf(trace);
  trace.summary = null;
  const fresh = summaryOf(trace);
  const shown = (/** @type {any} */ s) => ({ ...s, facts: undefined, services: [...s.services].sort() });
  assert.deepEqual(shown(kept), shown(fresh));
  assert.equal(readSummaryInSteps(trace, new Slicer(1)), undefined, 'an up-to-date summary needs no steps');
});

test("a trace summary's start and end are the least start and the greatest end of its stored spans, read lazily or decoded, through eviction", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  // Around 2^60 nanoseconds, spread over more than 2^33 of them: times differ in both 32-bit halves, or in one.
  const time = () => 1152921504606846976n + BigInt(Math.floor(random() * 2 ** 34)) * (random() < 0.5 ? 1n : 4096n);
  const id = '2'.padStart(32, '0');
  const stores = { lazy: new Store({ maxSpans: 300 }), decoded: new Store({ maxSpans: 300 }) };
  for (let batch = 0; batch < 60; batch++) {
    const spans = Array.from({ length: 20 }, (_, i) => ({
      traceId: id,
      spanId: (batch * 100 + i + 1).toString(16).padStart(16, '0'),
      ...(random() < 0.8 ? { parentSpanId: 'ab'.repeat(8) } : {}),
      name: `op ${i}`,
      ...(random() < 0.1 ? {} : { startTimeUnixNano: String(time()) }),
      endTimeUnixNano: String(time()),
      status: { code: Math.floor(random() * 3) },
    }));
    const json = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 's' } }] }, scopeSpans: [{ spans }] }] };
    stores.lazy.addRequest('traces', decodeProto(SIGNALS.traces, encodeOtlpRequest('traces', json), { lazy: true }), batch);
    stores.decoded.addRequest('traces', decodeJson(SIGNALS.traces, JSON.stringify(json)), batch);
    for (const [how, store] of Object.entries(stores)) {
      const trace = /** @type {import('../../server/store/store.js').TraceSpans} */ (store.traces.get(id));
      const stored = trace.entries.slice(trace.head).map((e) => /** @type {any} */ (e).item);
      const starts = stored.map((s) => BigInt(s.startTimeUnixNano)).filter((t) => t !== 0n);
      const ends = stored.map((s) => BigInt(s.endTimeUnixNano));
      const least = starts.reduce((a, b) => (b < a ? b : a), starts[0] ?? 0n);
      const greatest = ends.reduce((a, b) => (b > a ? b : a));
      const summary = summaryOf(trace);
      assert.equal(summary.start, String(least), `${how}, batch ${batch}: start`);
      assert.equal(summary.end, String(greatest), `${how}, batch ${batch}: end`);
      assert.equal(summary.errorCount, stored.filter((s) => s.status.code === 2).length, `${how}, batch ${batch}: errors`);
      const root = stored.find((s) => s.parentSpanId === '');
      assert.equal(summary.root?.name, root?.name, `${how}, batch ${batch}: root`);
    }
  }
});

test("a trace's start for ranking, read without a summary as spans arrive and leave, is its summary's", () => {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  // Times differ in both 32-bit halves, or in one; a tenth of the spans have none.
  const time = () => 1152921504606846976n + BigInt(Math.floor(random() * 2 ** 34)) * (random() < 0.5 ? 1n : 4096n);
  const stores = { lazy: new Store({ maxSpans: 300 }), decoded: new Store({ maxSpans: 300 }) };
  let ranked = 0;
  for (let batch = 0; batch < 80; batch++) {
    const spans = Array.from({ length: 25 }, (_, i) => ({
      traceId: String(1 + Math.floor(random() * 12)).padStart(32, '0'),
      spanId: (batch * 100 + i + 1).toString(16).padStart(16, '0'),
      name: `op ${i}`,
      ...(random() < 0.1 ? {} : { startTimeUnixNano: String(time()) }),
      endTimeUnixNano: String(time()),
    }));
    const json = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 's' } }] }, scopeSpans: [{ spans }] }] };
    stores.lazy.addRequest('traces', decodeProto(SIGNALS.traces, encodeOtlpRequest('traces', json), { lazy: true }), batch);
    stores.decoded.addRequest('traces', decodeJson(SIGNALS.traces, JSON.stringify(json)), batch);
    for (const [how, store] of Object.entries(stores)) {
      for (const trace of store.eachTrace()) {
        // Half of the traces are asked for now and then only, so that more spans arrive and leave between asks.
        if (Number(BigInt(`0x${trace.traceId}`) % 2n) === 0 && random() < 0.7) continue;
        const starts = trace.entries
          .slice(trace.head)
          .map((e) => BigInt(/** @type {any} */ (e).item.startTimeUnixNano))
          .filter((t) => t !== 0n);
        const least = starts.reduce((a, b) => (b < a ? b : a), starts[0] ?? 0n);
        const hadSummary = trace.summary !== null;
        assert.equal(startNsOf(trace), Number(String(least)), `${how}, batch ${batch}, trace ${trace.traceId}`);
        if (!hadSummary && trace.summary === null) ranked++;
      }
    }
  }
  assert.ok(ranked > 100, `many were ranked without a summary (${ranked})`);
  // A summary, once made, gives the same start.
  for (const store of Object.values(stores)) for (const trace of store.eachTrace()) assert.equal(summaryOf(trace).startNs, startNsOf(trace));
});
