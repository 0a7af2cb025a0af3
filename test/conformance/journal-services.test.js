// What the Requests and Forward views read: each journal entry names the services whose resources it carried and
// /api/requests filters on them; a forward target keeps the reason of its last call that did not succeed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { hex, postJson, traceRequest } from '../helpers/ui-data.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
before(async () => {
  collector = await startTestCollector();
});
after(() => collector?.stop());

const spans = (/** @type {string[]} */ services) => services.map((service, i) => ({ service, name: 'op', spanId: hex(i + 1), startMs: Date.now(), durMs: 1 }));

test('a request lists the services it carried, and ?service= finds the requests of one', async () => {
  await postJson(collector.urls.http, 'traces', traceRequest('a1'.repeat(16), spans(['frontend', 'checkout'])));
  await postJson(collector.urls.http, 'traces', traceRequest('a2'.repeat(16), spans(['payment'])));
  const all = await collector.api('/api/requests?order=asc');
  assert.deepEqual(
    all.requests.map((/** @type {any} */ r) => r.services),
    [['frontend', 'checkout'], ['payment']],
  );
  const checkout = await collector.api('/api/requests?service=checkout');
  assert.deepEqual(
    checkout.requests.map((/** @type {any} */ r) => r.services),
    [['frontend', 'checkout']],
  );
  assert.equal(checkout.total, 1);
  assert.equal((await collector.api('/api/requests?service=nobody')).total, 0);
  const bad = await fetch(`${collector.urls.ui}/api/requests?service=a&service=b`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /'service' is given 2 times/);
});

test('a target that fails keeps the reason of its last failure', async () => {
  const target = await collector.api('/api/forward', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9' }),
  });
  try {
    assert.equal(target.lastFailure, null);
    const res = await fetch(`${collector.urls.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(traceRequest('a3'.repeat(16), spans(['frontend']))),
    });
    assert.equal(res.status, 502);
    const [state] = (await collector.api('/api/forward')).targets;
    assert.equal(state.failed, 1);
    assert.equal(state.lastFailure.outcome, 'failed');
    assert.equal(state.lastFailure.status, null);
    assert.match(state.lastFailure.message, /ECONNREFUSED/);
    assert.ok(Date.now() - Date.parse(state.lastFailure.time) < 10_000);
  } finally {
    await collector.api('/api/forward', { method: 'DELETE' });
  }
});
