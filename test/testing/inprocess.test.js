// In-process use through the package's own name: free ports by default, a client included, and several
// collectors in one process that share nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCollector } from 'otlp-mock';
import { OtlpMock } from 'otlp-mock/client';
import { spans, logs, send } from './data.js';

test('two collectors in one process each see only their own data, rules and journal', async () => {
  const [a, b] = await Promise.all([startCollector(), startCollector()]);
  try {
    for (const c of [a, b]) {
      assert.ok(c.client instanceof OtlpMock);
      assert.equal(c.client.url, c.urls.ui);
      for (const url of Object.values(c.urls)) {
        assert.ok(!['4317', '4318', '4319'].includes(new URL(url).port), `${url} is on a free port, not a standard one`);
      }
    }
    assert.equal(new Set([...Object.values(a.urls), ...Object.values(b.urls)]).size, 6);

    await b.client.faults.add({ action: 'unavailable', signals: 'logs' });
    await send(a, 'traces', spans('alpha', ['a1', 'a2']));
    await send(b, 'traces', spans('beta', ['b1']));
    assert.equal(await send(a, 'logs', logs('alpha', ['hello'])), 200, "b's fault rule does not reach a");
    assert.equal(await send(b, 'logs', logs('beta', ['hello'])), 503);

    const [spansA, spansB] = await Promise.all([a.client.waitForSpans({}, { count: 2 }), b.client.waitForSpans({}, { count: 1 })]);
    assert.deepEqual(
      spansA.map((s) => s.service),
      ['alpha', 'alpha'],
    );
    assert.deepEqual(
      spansB.map((s) => s.service),
      ['beta'],
    );
    assert.deepEqual(
      (await a.client.requests()).map((r) => r.outcome),
      ['accepted', 'accepted'],
    );
    assert.deepEqual(
      (await b.client.requests()).map((r) => r.outcome),
      ['faulted', 'accepted'],
    );
    assert.equal((await a.client.faults.list()).length, 0);

    await a.client.clear();
    assert.equal((await a.client.spans()).length, 0);
    assert.equal((await b.client.spans()).length, 1, 'clearing a leaves b alone');
    assert.equal(a.store.stats().traces.stored, 0);
    assert.equal(b.store.stats().traces.stored, 1);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('stop closes every listener', async () => {
  const c = await startCollector();
  await c.stop();
  for (const url of [c.urls.ui + '/api/health', c.urls.http + '/v1/traces']) {
    await assert.rejects(fetch(url, { method: 'POST' }), TypeError);
  }
});

test('with an admin token the in-process client sends it; a request without it is refused', async (t) => {
  const collector = await startCollector({ adminToken: 'in-process-secret' });
  t.after(() => collector.stop());
  assert.equal((await collector.client.stats()).signals.traces.stored, 0);
  assert.equal((await fetch(`${collector.urls.ui}/api/stats`)).status, 401);
});
