// Wait-for queries: answered when the data arrives, 408 with an explanation when it does not, many waiters
// woken by one request, and a waiter whose client hangs up is freed.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startCollector } from '../../server/index.js';
import { spans, logs, gauge, send, waiterCount, waitersReach } from './data.js';

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let collector;
/** @param {string} path @param {RequestInit} [init] */
const get = async (path, init) => {
  const res = await fetch(collector.urls.ui + path, init);
  return { status: res.status, body: await res.json() };
};

before(async () => {
  collector = await startCollector();
});
after(() => collector.stop());
beforeEach(() => collector.client.clear());

test('a waiting query is answered by data that arrives after it started', async () => {
  const started = Date.now();
  const answer = get('/api/spans?service=checkout&minCount=2&timeoutMs=20000');
  await waitersReach(collector, 1);
  assert.equal(await send(collector, 'traces', spans('checkout', ['GET /cart'])), 200);
  assert.equal(await send(collector, 'traces', spans('web', ['GET /'])), 200);
  assert.equal(await waiterCount(collector), 1, 'one matching span of two does not answer the wait');
  assert.equal(await send(collector, 'traces', spans('checkout', ['POST /pay'])), 200);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.total, 2);
  assert.deepEqual(
    body.spans.map((/** @type {any} */ s) => s.name),
    ['GET /cart', 'POST /pay'],
  );
  assert.ok(Date.now() - started < 10000, 'answered when the data came, not at the timeout');
  assert.equal(await waiterCount(collector), 0);
});

test('a query that already matches is answered at once', async () => {
  await send(collector, 'traces', spans('checkout', ['a', 'b', 'c']));
  const { status, body } = await get('/api/spans?service=checkout&minCount=3');
  assert.equal(status, 200);
  assert.equal(body.total, 3);
});

test('a wait that runs out answers 408 with what matched and why the rest did not', async () => {
  await send(collector, 'traces', spans('checkout', ['GET /cart', 'SELECT']));
  await send(collector, 'traces', spans('cart', ['a', 'b', 'c']));
  await send(collector, 'traces', spans('web', ['GET /']));
  const { status, body } = await get('/api/spans?service=checkout&minCount=3&timeoutMs=150');
  assert.equal(status, 408);
  assert.equal(body.total, 2);
  assert.equal(body.spans.length, 2);
  assert.equal(body.error, '2 of 3 spans with service=checkout after 150 ms; 6 spans stored in all; 4 spans from other services (cart: 3, web: 1)');

  const two = await get('/api/spans?service=checkout&name=POST%20%2Fpay&minCount=1&timeoutMs=0');
  assert.equal(two.status, 408);
  assert.match(
    two.body.error,
    /^0 of 1 spans with service=checkout and name=POST \/pay after 0 ms; of the 6 spans stored, 2 have service=checkout, 0 have name=POST \/pay; /,
  );
  assert.equal(await waiterCount(collector), 0);
});

test('100 concurrent waiters are all released by one request', async () => {
  const waits = Array.from({ length: 100 }, (_, i) =>
    get(`/api/${i % 2 ? 'spans' : 'requests'}?${i % 2 ? 'service=burst' : 'signal=traces'}&minCount=1&timeoutMs=20000`),
  );
  await waitersReach(collector, 100);
  const started = Date.now();
  await send(collector, 'traces', spans('burst', ['one']));
  const answers = await Promise.all(waits);
  const elapsed = Date.now() - started;
  for (const { status, body } of answers) {
    assert.equal(status, 200);
    assert.equal(body.total, 1);
  }
  assert.equal(await waiterCount(collector), 0);
  assert.ok(elapsed < 5000, `released in ${elapsed} ms`);
});

test('a client that hangs up frees its waiter', async () => {
  const abort = new AbortController();
  const answer = fetch(collector.urls.ui + '/api/logs?service=never&minCount=1&timeoutMs=60000', { signal: abort.signal });
  await waitersReach(collector, 1);
  abort.abort();
  await assert.rejects(answer, { name: 'AbortError' });
  await waitersReach(collector, 0);
  // Data arriving for the departed waiter finds nobody to answer, and the API keeps working.
  await send(collector, 'logs', logs('never', ['late']));
  assert.equal((await get('/api/logs?service=never')).body.total, 1);
});

test('logs, metrics (counted in data points) and the journal can be waited for', async () => {
  const logWait = get('/api/logs?body=paid&minCount=2&timeoutMs=20000');
  const metricWait = get('/api/metrics?name=queue.depth&minCount=3&timeoutMs=20000');
  const faultedWait = get('/api/requests?outcome=faulted&signal=metrics&minCount=1&timeoutMs=20000');
  await waitersReach(collector, 3);
  const rule = await collector.client.faults.add({ action: 'unavailable', signals: 'metrics', times: 1 });
  try {
    await send(collector, 'logs', logs('shop', ['order paid', 'order shipped', 'refund paid']));
    assert.equal(await send(collector, 'metrics', gauge('shop', 'queue.depth', [1, 2, 3])), 503);
    assert.equal(await send(collector, 'metrics', gauge('shop', 'queue.depth', [4, 5])), 200);
    assert.equal(await send(collector, 'metrics', gauge('shop', 'queue.depth', [6])), 200);
    const [l, m, r] = await Promise.all([logWait, metricWait, faultedWait]);
    assert.equal(l.status, 200);
    assert.deepEqual(
      l.body.logs.map((/** @type {any} */ x) => x.body),
      ['order paid', 'refund paid'],
    );
    assert.equal(m.status, 200);
    assert.equal(m.body.points, 3);
    assert.deepEqual(
      m.body.metrics[0].dataPoints.map((/** @type {any} */ p) => p.asDouble),
      [4, 5, 6],
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.requests[0].fault.id, rule.id);
  } finally {
    await collector.client.faults.clear();
  }
});

test('timeoutMs alone waits for one item; out-of-range values are refused', async () => {
  const one = get('/api/spans?service=solo&timeoutMs=20000');
  await waitersReach(collector, 1);
  await send(collector, 'traces', spans('solo', ['x']));
  assert.equal((await one).status, 200);

  assert.equal((await get('/api/spans?minCount=1&timeoutMs=300001')).status, 400);
  assert.equal((await get('/api/spans?minCount=0')).status, 400);
  const openApi = (await get('/api/openapi.json')).body;
  const names = openApi.paths['/api/metrics'].get.parameters.map((/** @type {any} */ p) => p.name);
  assert.ok(names.includes('minCount') && names.includes('timeoutMs'));
});
