// The JS client (`otlp-mock/client`) against a real collector.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { OtlpMock, OtlpMockError, OtlpMockTimeoutError } from 'otlp-mock/client';
import { startCollector } from '../../server/index.js';
import { spans, logs, gauge, send, waitersReach } from './data.js';

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let collector;
/** @type {OtlpMock} */
let mock;

before(async () => {
  collector = await startCollector();
  mock = new OtlpMock(collector.urls.ui + '/');
});
after(() => collector.stop());
beforeEach(async () => {
  await mock.clear();
  await mock.faults.clear();
});

test('queries take typed filters, attributes included', async () => {
  const request = spans('shop', ['GET /', 'fail payment']);
  request.resourceSpans[0].scopeSpans[0].spans[1].attributes = [{ key: 'retry', value: { intValue: '2' } }];
  await send(collector, 'traces', request);
  await send(collector, 'logs', logs('shop', ['started', 'stopped']));
  await send(collector, 'metrics', gauge('shop', 'cpu', [0.5]));

  assert.equal((await mock.spans()).length, 2);
  assert.deepEqual(
    (await mock.spans({ error: true })).map((s) => s.name),
    ['fail payment'],
  );
  assert.deepEqual(
    (await mock.spans({ attributes: { retry: 2 } })).map((s) => s.attributes),
    [{ retry: 2 }],
  );
  assert.equal((await mock.spans({ service: 'other' })).length, 0);
  assert.deepEqual(
    (await mock.logs({ body: 'stop' })).map((l) => l.body),
    ['stopped'],
  );
  assert.equal((await mock.metrics({ name: 'cpu' }))[0].dataPoints[0].asDouble, 0.5);
  assert.deepEqual(
    (await mock.requests({ signal: 'logs' })).map((r) => r.items),
    [2],
  );
  assert.equal((await mock.spans({ limit: 1 }))[0].name, 'fail payment');
  const [summary] = await mock.traces({ error: true });
  assert.deepEqual([summary.rootName, summary.services, summary.spanCount, summary.errorCount, summary.durationNanos], ['GET /', ['shop'], 2, 1, '3500000']);
  assert.deepEqual(await mock.traces({ service: 'other' }), []);
  const stats = await mock.stats();
  assert.equal(stats.signals.traces.stored, 2);
  assert.equal(stats.waiters, 0);
});

test('waitFor resolves when the data arrives later', async () => {
  const waiting = mock.waitForSpans({ service: 'late', name: 'work' }, { count: 2, timeoutMs: 20000 });
  await waitersReach(collector, 1);
  await send(collector, 'traces', spans('late', ['work', 'work', 'other']));
  const found = await waiting;
  assert.deepEqual(
    found.map((s) => `${s.service} ${s.name}`),
    ['late work', 'late work'],
  );

  const logWait = mock.waitForLogs({ severity: 9 }, { timeoutMs: 20000 });
  const metricWait = mock.waitForMetrics({ name: 'cpu' }, { count: 2, timeoutMs: 20000 });
  await waitersReach(collector, 2);
  await send(collector, 'logs', logs('late', ['up']));
  await send(collector, 'metrics', gauge('late', 'cpu', [1, 2]));
  assert.equal((await logWait).length, 1);
  assert.equal((await metricWait)[0].dataPoints.length, 2);
  assert.equal((await mock.waitForRequests({ signal: 'metrics' })).length, 1);
});

test("a wait that times out throws the server's explanation and what matched", async () => {
  await send(collector, 'traces', spans('checkout', ['a', 'b']));
  await send(collector, 'traces', spans('cart', ['c']));
  const err = await mock.waitForSpans({ service: 'checkout' }, { count: 3, timeoutMs: 100 }).then(
    () => assert.fail('the wait should time out'),
    (/** @type {unknown} */ e) => e,
  );
  assert.ok(err instanceof OtlpMockTimeoutError);
  assert.ok(err instanceof OtlpMockError);
  assert.equal(err.status, 408);
  assert.equal(err.message, '2 of 3 spans with service=checkout after 100 ms; 3 spans stored in all; 1 spans from other services (cart: 1)');
  assert.deepEqual(
    err.items.map((s) => s.name),
    ['a', 'b'],
  );
});

test('fault rules: add, list, remove, clear; and a test can prove the retry from the journal', async () => {
  const rule = await mock.faults.add({ action: 'unavailable', signals: ['traces'], times: 1, retryAfterMs: 1000 });
  assert.equal(rule.action, 'unavailable');
  assert.equal(rule.remaining, 1);
  const other = await mock.faults.add({ action: 'delay', delayMs: 1, signals: 'logs' });
  assert.deepEqual(
    (await mock.faults.list()).map((r) => r.id),
    [rule.id, other.id],
  );

  assert.equal(await send(collector, 'traces', spans('retry', ['x'])), 503);
  assert.equal(await send(collector, 'traces', spans('retry', ['x'])), 200);
  const journal = await mock.waitForRequests({ signal: 'traces' }, { count: 2 });
  assert.deepEqual(
    journal.map((r) => [r.outcome, r.fault?.id ?? null]),
    [
      ['accepted', null],
      ['faulted', rule.id],
    ],
  );
  assert.deepEqual(
    (await mock.requests({ fault: 'unavailable' })).map((r) => r.response?.status),
    [503],
  );

  await mock.faults.remove(other.id);
  assert.deepEqual(
    (await mock.faults.list()).map((r) => r.id),
    [rule.id],
  );
  await assert.rejects(mock.faults.remove(other.id), (/** @type {any} */ e) => e instanceof OtlpMockError && e.status === 404);
  await assert.rejects(mock.faults.add(/** @type {any} */ ({ action: 'explode' })), (/** @type {any} */ e) => e.status === 400 && /action/.test(e.message));
  await mock.faults.clear();
  assert.deepEqual(await mock.faults.list(), []);
});

test('clear forgets telemetry and the journal; export and import move data between collectors', async () => {
  await send(collector, 'traces', spans('moved', ['one', 'two']));
  const lines = await mock.export({ signal: 'traces' });
  assert.equal(lines.split('\n').filter(Boolean).length, 1);
  await mock.clear();
  assert.deepEqual(await mock.spans(), []);
  assert.deepEqual(await mock.requests(), []);
  assert.deepEqual(await mock.import(lines), { requests: 1, items: { traces: 2, metrics: 0, logs: 0, profiles: 0 } });
  assert.deepEqual(
    (await mock.spans()).map((s) => s.name),
    ['one', 'two'],
  );
});

test('a custom fetch is used for every call', async () => {
  /** @type {string[]} */
  const seen = [];
  const traced = new OtlpMock(collector.urls.ui, {
    fetch: (input, init) => {
      seen.push(`${init?.method} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    },
  });
  await traced.stats();
  await traced.clear();
  assert.deepEqual(seen, ['GET /api/stats', 'DELETE /api/telemetry']);
});

test('page() walks every match with cursors; trace() and services() read one trace and every service', async () => {
  for (let i = 0; i < 5; i++) await send(collector, 'traces', spans('paged', [`root ${i}`, `child ${i}`]));
  const names = [];
  let page = await mock.page('spans', { service: 'paged', limit: 3, order: 'desc' });
  for (;;) {
    assert.equal(page.total, 10);
    names.push(...page.items.map((s) => s.name));
    if (!page.nextCursor) break;
    page = await mock.page('spans', { service: 'paged', limit: 3, order: 'desc', cursor: page.nextCursor });
  }
  assert.deepEqual(
    names,
    [4, 3, 2, 1, 0].flatMap((i) => [`child ${i}`, `root ${i}`]),
  );
  const [newest] = await mock.traces({ limit: 1 });
  const trace = await mock.trace(newest.traceId);
  assert.deepEqual(
    trace.spans.map((s) => s.name),
    ['root 4', 'child 4'],
  );
  assert.equal(trace.summary.spanCount, 2);
  const services = await mock.services();
  assert.deepEqual(
    services.map(({ color, ...s }) => s),
    [{ name: 'paged', spans: 10, logs: 0, points: 0, samples: 0 }],
  );
  assert.ok(Number.isInteger(services[0].color), 'the colour the UI draws the service in');
});

test("a misspelled filter is refused with the server's explanation, not answered with everything", async () => {
  await send(collector, 'traces', spans('shop', ['GET /']));
  await assert.rejects(
    mock.spans(/** @type {any} */ ({ servcie: 'nobody' })),
    (/** @type {any} */ e) =>
      e instanceof OtlpMockError && e.status === 400 && e.message.startsWith("GET /api/spans?servcie=nobody: 400 unknown parameter 'servcie'; did you mean 'service'?"),
  );
});

test('waitForTraces resolves when enough traces match', async () => {
  const waiting = mock.waitForTraces({ service: 'traced' }, { count: 2, timeoutMs: 20000 });
  await waitersReach(collector, 1);
  await send(collector, 'traces', spans('traced', ['one']));
  await send(collector, 'traces', spans('traced', ['two']));
  assert.deepEqual(
    (await waiting).map((t) => t.rootName),
    ['one', 'two'],
  );
});
