// Listing traces by service: short traces are matched by reading their spans, so a scan of a store of many small
// traces leaves no summary behind on each; the answer is the one the summaries give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../server/store/store.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { listing } from '../../server/query/engine.js';
import { summaryOf } from '../../server/query/traces.js';

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
