// Byte budgets: the store evicts by bytes as well as by count, tells its observers, and counts it; the journal
// keeps faulted bodies within its own budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../server/store/store.js';
import { Journal } from '../../server/store/journal.js';
import { keptBytes } from '../../server/store/budget.js';
import { decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { sampleRequest, encodePb } from '../helpers/payloads.js';
import { startTestCollector } from '../helpers/collector.js';
import { rawRequest } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

const traces = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));

/** @param {number} i */
function spanRequest(i) {
  const json = sampleRequest('traces', { service: `s${i}`, traceId: i.toString(16).padStart(32, '0') });
  const bytes = encodePb('traces', json);
  return { request: decodeProto(traces, bytes, { lazy: true }), bytes: bytes.length };
}

test('the store evicts by bytes, oldest first, and observers see every eviction', () => {
  // the largest of the ten (s10 is a byte longer than s1)
  const size = keptBytes('traces', spanRequest(10).bytes, 1, false);
  const store = new Store({ maxSpans: 1000, maxSpanBytes: size * 3 });
  let evictedSeen = 0;
  store.subscribe((batch) => {
    evictedSeen += batch.evicted.length;
    assert.ok(batch.bytes > 0);
  });
  for (let i = 1; i <= 10; i++) {
    const { request, bytes } = spanRequest(i);
    store.addRequest('traces', request, i, keptBytes('traces', bytes, 1, false));
  }
  const stats = store.stats().traces;
  assert.equal(stats.stored, 3);
  assert.equal(stats.evicted, 7);
  assert.equal(stats.evictedForBytes, 7);
  assert.equal(evictedSeen, 7);
  assert.ok(stats.bytes <= size * 3);
  assert.equal(stats.byteBudget, size * 3);
  assert.deepEqual(
    [...store.ring('traces')].map((e) => e.ctx.requestId),
    [8, 9, 10],
  );
  assert.deepEqual([...store.eachTrace()].length, 3);
  assert.equal(store.fits('traces', size * 3), true);
  assert.equal(store.fits('traces', size * 3 + 1), false);
});

test('the journal keeps unstored bodies within its budget, newest kept', () => {
  const journal = new Journal({ maxRequests: 100, maxBodyBytes: 1000 });
  for (let id = 1; id <= 5; id++) {
    journal.record(/** @type {any} */ ({ id, transport: 'http', outcome: 'faulted' }), { id }, 400);
  }
  assert.deepEqual([...journal.unstoredBodies.keys()], [4, 5]);
  assert.equal(journal.bodyBytes, 800);
  journal.record(/** @type {any} */ ({ id: 6, transport: 'http', outcome: 'faulted' }), { id: 6 }, 5000);
  assert.equal(journal.unstoredBodies.has(6), false, 'a body larger than the whole budget is not kept');
  assert.equal(journal.entries.size, 6);
});

test('faulted requests over HTTP keep their bodies only within --max-journal-bytes', async () => {
  const c = await startTestCollector({ maxJournalBytes: 64 * 1024, faults: [{ action: 'unavailable' }] });
  try {
    const big = sampleRequest('logs', { service: 'big' });
    big.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: 'x'.repeat(30_000) };
    for (let i = 0; i < 6; i++) {
      const res = await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(big) });
      assert.equal(res.status, 503);
    }
    await waitFor(() => c.journal.entries.size === 6);
    const bodies = (await c.api('/api/stats')).requests.bodies;
    assert.ok(bodies.bytes <= 64 * 1024 && bodies.bytes === c.journal.bodyBytes, JSON.stringify(bodies));
    assert.ok(bodies.stored >= 1 && bodies.stored < 6, JSON.stringify(bodies));
    assert.equal(bodies.byteBudget, 64 * 1024);
    const newest = (await c.api('/api/requests?limit=1')).requests[0];
    // Kept as decoded, its items built on the first ask: both asks show what was sent.
    for (let ask = 0; ask < 2; ask++) {
      const { body } = await c.api(`/api/requests/${newest.id}`);
      assert.equal(body.resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue, 'x'.repeat(30_000));
    }
  } finally {
    await c.stop();
  }
});

test('big attributes over OTLP/JSON stay within the span budget and are evicted by bytes', async () => {
  const budget = 2 * 1024 * 1024;
  const c = await startTestCollector({ maxSpanBytes: budget });
  try {
    for (let i = 0; i < 20; i++) {
      const json = sampleRequest('traces', { service: 'fat', traceId: (i + 1).toString(16).padStart(32, '0') });
      json.resourceSpans[0].scopeSpans[0].spans[0].attributes = [{ key: 'blob', value: { stringValue: 'y'.repeat(300_000) } }];
      const res = await rawRequest(c.urls.http + '/v1/traces', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
      assert.equal(res.status, 200);
    }
    const stats = (await c.api('/api/stats')).signals.traces;
    assert.ok(stats.bytes <= budget);
    assert.ok(stats.evictedForBytes >= 13, JSON.stringify(stats));
    assert.equal(stats.stored + stats.evicted, 20);
  } finally {
    await c.stop();
  }
});
