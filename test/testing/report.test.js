// GET /api/faults/:id/report: the official exporters judged by the OTLP retry rules, from the journal.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startCollector } from '../../server/collector.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';
import { postOtlp } from '../helpers/http.js';
import { spans } from './data.js';

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let mock;

before(async () => {
  mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
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
  assert.deepEqual(chain.attempts.map((a) => [a.status, a.outcome, a.fault]), [[429, 'faulted', rule.id], [429, 'faulted', rule.id], [200, 'accepted', null]]);
  assert.equal(chain.waitMs, 1000);
  assert.equal(chain.gapsMs.length, 2);
  for (const gap of chain.gapsMs) assert.ok(gap >= 995 && gap < 5000, `gap ${gap} ms`);
  assert.equal(chain.outcome, 'delivered');
  assert.match(report.message, /^honoured Retry-After: HTTP 429: retryable, Retry-After 1 s: waited at least 1000 ms each time; 3 attempts, gaps \d+ ms, \d+ ms; delivered on attempt 3$/);

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
  const report = await mock.client.faults.report(rule.id);
  assert.equal(report.verdict, 'did not retry', report.message);
  assert.equal(report.ok, false);
  assert.deepEqual(report.chains[0].attempts.map((a) => [a.status, a.outcome]), [[14, 'faulted']]);
  assert.equal(report.message, 'did not retry: gRPC code 14: retryable, yet it was not retried; 1 attempt; no further attempt');
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
