// GET /api/faults/:id/report: the official exporters judged by the OTLP retry rules, from the journal.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startCollector } from '../../server/collector.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';
import { postOtlp } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { retryReport, RETRY_WINDOW_MS } from '../../server/faults/report.js';
import { spans } from './data.js';

/** A window shorter than the default 8.5 s, so that "did not retry" becomes final within a test's patience. */
const WINDOW_MS = 1500;

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let mock;

before(async () => {
  mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0, retryWindowMs: WINDOW_MS });
});
after(() => mock.stop());
beforeEach(async () => {
  await mock.client.clear();
  await mock.client.faults.clear();
});

/** Finished spans to hand to an exporter directly, so the test sees the export's own result. */
function finishedSpans() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'checkout' }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  provider.getTracer('shop').startSpan('POST /pay').end();
  return memory.getFinishedSpans();
}

test('the JS HTTP exporter through throttle (times=2, retryAfterMs=1000): "honoured Retry-After", with the measured gaps', async () => {
  const rule = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 2, retryAfterMs: 1000 });
  const exporter = createExporter('traces', { wire: 'json', compression: 'none' }, mock.urls);
  try {
    await exportOrThrow(exporter, finishedSpans());
  } finally {
    await exporter.shutdown();
  }
  const report = await mock.client.faults.report(rule.id);
  assert.equal(report.verdict, 'honoured Retry-After', report.message);
  assert.equal(report.ok, true);
  assert.equal(report.chains.length, 1);
  const [chain] = report.chains;
  assert.deepEqual(
    chain.attempts.map((a) => [a.status, a.outcome, a.fault]),
    [
      [429, 'faulted', rule.id],
      [429, 'faulted', rule.id],
      [200, 'accepted', null],
    ],
  );
  assert.equal(chain.waitMs, 1000);
  assert.equal(chain.gapsMs.length, 2);
  for (const gap of chain.gapsMs) assert.ok(gap >= 995 && gap < 5000, `gap ${gap} ms`);
  assert.equal(chain.outcome, 'delivered');
  assert.match(
    report.message,
    /^honoured Retry-After: HTTP 429: retryable, Retry-After 1 s: waited at least 1000 ms each time; 3 attempts, gaps \d+ ms, \d+ ms; delivered on attempt 3$/,
  );

  // Each request's page finds the same batch, whichever of its attempts it shows.
  for (const { id } of chain.attempts) {
    const { attempts } = await mock.client.call('GET', `/api/requests/${id}/attempts`);
    assert.deepEqual(attempts, chain.attempts, `the attempts of request ${id}`);
  }
});

test('the JS gRPC exporter through unavailable: "did not retry", which breaks the rules', async () => {
  const rule = await mock.client.faults.add({ action: 'unavailable', signals: 'traces', times: 1 });
  const exporter = createExporter('traces', { wire: 'grpc', compression: 'none' }, mock.urls);
  try {
    await assert.rejects(exportOrThrow(exporter, finishedSpans()));
  } finally {
    await exporter.shutdown();
  }
  // The exporter has given up, but the report cannot know that: it waits out the window first.
  const report = await waitFor(
    async () => {
      const r = await mock.client.faults.report(rule.id);
      return r.final ? r : null;
    },
    { timeoutMs: 10_000, what: 'the report to become final' },
  );
  assert.equal(report.verdict, 'did not retry', report.message);
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.chains[0].attempts.map((a) => [a.status, a.outcome]),
    [[14, 'faulted']],
  );
  assert.equal(report.message, 'did not retry: gRPC code 14: retryable, yet it was not retried within 1.5 s of the answer; 1 attempt; no further attempt');
});

test('the JS HTTP exporter through reject: "did not retry a non-retryable error"', async () => {
  const rule = await mock.client.faults.add({ action: 'reject', signals: 'traces' });
  const exporter = createExporter('traces', { wire: 'proto', compression: 'none' }, mock.urls);
  try {
    await assert.rejects(exportOrThrow(exporter, finishedSpans()));
  } finally {
    await exporter.shutdown();
  }
  const report = await mock.client.faults.report(rule.id);
  assert.equal(report.verdict, 'did not retry a non-retryable error', report.message);
  assert.equal(report.ok, true);
});

test('a client that retries at once after Retry-After, and one that retries a 400, are named; an unknown rule is a 404', async () => {
  const url = mock.urls.http;
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  const throttle = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 2000 });
  assert.equal((await postOtlp(url, '/v1/traces', body, 'application/json')).status, 429);
  assert.equal((await postOtlp(url, '/v1/traces', body, 'application/json')).status, 200);
  const soon = await mock.client.faults.report(throttle.id);
  assert.equal(soon.verdict, 'retried too soon', soon.message);
  assert.equal(soon.ok, false);
  assert.match(soon.message, /HTTP 429: retryable, Retry-After 2 s, but it waited only \d+ ms/);

  await mock.client.faults.clear();
  const reject = await mock.client.faults.add({ action: 'reject', signals: 'traces', times: 1 });
  await postOtlp(url, '/v1/traces', body, 'application/json');
  await postOtlp(url, '/v1/traces', body, 'application/json');
  const retried = await mock.client.faults.report(reject.id);
  assert.equal(retried.verdict, 'retried a non-retryable error', retried.message);

  const quiet = await mock.client.faults.add({ action: 'unavailable', signals: 'logs' });
  assert.equal((await mock.client.faults.report(quiet.id)).verdict, 'not triggered');
  await assert.rejects(mock.client.faults.report('f999'), /404 no fault rule f999/);
});

/** The end of a journal entry's answer, in ms. @param {{ time: string, durationMs: number }} e */
const answeredAt = (e) => Date.parse(e.time) + e.durationMs;

test('a throttle with retryAfterMs 3000 is "waiting" at once, until the Retry-After and a second have passed', async () => {
  const rule = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 3000 });
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 429);
  const report = await mock.client.faults.report(rule.id);
  assert.equal(report.verdict, 'waiting', report.message);
  assert.equal(report.ok, true, 'a batch still waiting is no failure');
  assert.equal(report.final, false);
  assert.deepEqual(report.counts, { waiting: 1 });
  const [chain] = report.chains;
  assert.equal(chain.outcome, 'waiting');
  const [entry] = mock.journal.entries;
  // Retry-After 3 s is longer than the 1.5 s window: it decides, with a second of grace.
  assert.equal(Date.parse(/** @type {string} */ (chain.finalAt)) - answeredAt(entry), 4000);
  assert.equal(report.finalAt, chain.finalAt);
  assert.match(
    report.message,
    /^waiting: HTTP 429: retryable, Retry-After 3 s; no retry yet, and the exporter's wait has not passed; 1 attempt; waiting for attempt 2 until \d\d:\d\d:\d\d\.\d{3} UTC \([\d.]+ s\)$/,
  );
});

test('waiting, then "did not retry" once the window has passed with no retry', async () => {
  const rule = await mock.client.faults.add({ action: 'unavailable', signals: 'traces', times: 1 });
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 503);
  const first = await mock.client.faults.report(rule.id);
  assert.deepEqual([first.verdict, first.ok, first.final], ['waiting', true, false]);
  const finalAt = Date.parse(/** @type {string} */ (first.finalAt));
  const report = await waitFor(
    async () => {
      const r = await mock.client.faults.report(rule.id);
      return r.final ? r : null;
    },
    { timeoutMs: 10_000, what: 'the report to become final' },
  );
  assert.ok(Date.now() >= finalAt, 'not final before its finalAt');
  assert.deepEqual([report.verdict, report.ok, report.finalAt, report.chains[0].outcome], ['did not retry', false, null, 'not retried']);
  assert.deepEqual(report.counts, { 'did not retry': 1 });
});

test('waiting, then "honoured Retry-After" when the client retries after the wait asked', async () => {
  const rule = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 1000 });
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 429);
  assert.equal((await mock.client.faults.report(rule.id)).verdict, 'waiting');
  const [faulted] = mock.journal.entries;
  // The client does what Retry-After: 1 asks: it waits a second, then sends the batch again.
  await waitFor(() => Date.now() >= answeredAt(faulted) + 1000, { what: 'the Retry-After to pass' });
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 200);
  const report = await mock.client.faults.report(rule.id);
  assert.deepEqual([report.verdict, report.ok, report.final, report.finalAt], ['honoured Retry-After', true, true, null]);
  assert.equal(report.chains[0].outcome, 'delivered');
});

test('the default window is 8.5 s after the answer (the longest first backoff, 7.5 s, and a second), longer when Retry-After is', async () => {
  assert.equal(RETRY_WINDOW_MS, 8500);
  const plain = await mock.client.faults.add({ action: 'unavailable', signals: 'traces', times: 1 });
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 503);
  const [entry] = mock.journal.entries;
  const rule = /** @type {any} */ (mock.faults.get(plain.id));
  const at = (/** @type {number} */ ms) => retryReport(mock.journal, rule, { now: answeredAt(entry) + ms });
  assert.equal(at(0).verdict, 'waiting');
  assert.equal(at(8499).verdict, 'waiting');
  assert.equal(at(8499).chains[0].finalAt, new Date(answeredAt(entry) + 8500).toISOString());
  assert.equal(at(8500).verdict, 'did not retry');
  assert.match(at(8500).message, /not retried within 8\.5 s of the answer/);

  await mock.client.faults.clear();
  const long = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 12_000 });
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', body, 'application/json')).status, 429);
  const throttled = /** @type {any} */ ([...mock.journal.entries].find((e) => e.fault?.id === long.id));
  const rule2 = /** @type {any} */ (mock.faults.get(long.id));
  assert.equal(retryReport(mock.journal, rule2, { now: answeredAt(throttled) + 12_999 }).verdict, 'waiting');
  assert.equal(retryReport(mock.journal, rule2, { now: answeredAt(throttled) + 13_000 }).verdict, 'did not retry');
});

test('the headline and counts: a waiting batch is not a failure beside batches that retried', async () => {
  // The rule faults only requests with this header: a retry sent without it goes through.
  const rule = await mock.client.faults.add({ action: 'unavailable', signals: 'traces', match: { headers: { 'x-fault': 'yes' } } });
  const fault = { 'x-fault': 'yes' };
  // Two batches of another size each: the first retried at once (no wait was asked), the second not yet.
  const one = JSON.stringify(spans('checkout', ['a']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', one, 'application/json', fault)).status, 503);
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', one, 'application/json')).status, 200);
  const two = JSON.stringify(spans('checkout', ['b', 'c']));
  assert.equal((await postOtlp(mock.urls.http, '/v1/traces', two, 'application/json', fault)).status, 503);
  const report = await mock.client.faults.report(rule.id);
  assert.deepEqual(
    report.chains.map((c) => c.verdict),
    ['retried', 'waiting'],
  );
  assert.deepEqual([report.verdict, report.ok, report.final], ['waiting', true, false]);
  assert.deepEqual(report.counts, { retried: 1, waiting: 1 });
});

test('a request that arrived before the faulted one is never taken for its retry, however close their times', () => {
  const at = Date.parse('2026-01-01T00:00:00.000Z');
  /** @param {number} id @param {number} ms @param {string} fault @param {number} status */
  const entry = (id, ms, fault, status) => ({
    id,
    time: new Date(at + ms).toISOString(),
    durationMs: 0,
    outcome: 'faulted',
    signal: 'traces',
    transport: 'http',
    userAgent: 'test',
    items: 1,
    fault: { id: fault, action: 'unavailable' },
    response: { status },
  });
  // f1's 503, then 4 ms later f2's 429 for the same batch: within the journal's 5 ms tolerance of each other.
  const journal = /** @type {any} */ ({ entries: [entry(1, 0, 'f1', 503), entry(2, 4, 'f2', 429)] });
  const rule = /** @type {any} */ ({ id: 'f2', action: 'throttle', retryAfterMs: 1000, matched: 1, applied: 1 });
  const report = retryReport(journal, rule, { now: at + 4, windowMs: 1000 });
  assert.deepEqual(
    report.chains[0].attempts.map((a) => a.id),
    [2],
  );
  assert.equal(report.verdict, 'waiting', report.message);
});
