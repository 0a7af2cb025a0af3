// node --test: a collector inside the test process, the official OTLP exporter, and expectations checked on
// the server (a failure prints otlp-mock's explanation: what was missing, the nearest spans, what else arrived).
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startCollector } from 'otlp-mock';
import { snapshotDiff } from 'otlp-mock/client';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

/** The code under test: POST /checkout → reserve stock, charge card. */
function placeOrder(tracer, card) {
  const root = tracer.startSpan('POST /checkout', { kind: SpanKind.SERVER, attributes: { 'http.route': '/checkout' } });
  const inOrder = trace.setSpan(context.active(), root);
  tracer.startSpan('reserve stock', { kind: SpanKind.CLIENT, attributes: { items: 2 } }, inOrder).end();
  const charge = tracer.startSpan('charge card', { kind: SpanKind.CLIENT, attributes: { 'card.brand': card } }, inOrder);
  if (card === 'declined') charge.setStatus({ code: SpanStatusCode.ERROR, message: 'card declined' });
  charge.end();
  root.end();
}

let mock;
let provider;

before(async () => {
  mock = await startCollector();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${mock.urls.http}/v1/traces` }))],
  });
});
after(async () => {
  await provider.shutdown();
  await mock.stop();
});
beforeEach(async () => {
  await mock.client.clear();
  await mock.client.faults.clear();
});

test('an order is traced', async () => {
  placeOrder(provider.getTracer('checkout'), 'visa');
  await mock.client.expect({
    timeoutMs: 5000,
    expectations: [
      { signal: 'spans', where: { service: 'checkout', name: 'POST /checkout' }, kind: 'server', root: true, count: { exactly: 1 } },
      { signal: 'spans', where: { name: 'charge card' }, childOf: { where: { name: 'POST /checkout' } }, attributes: { 'card.brand': 'visa' } },
      { signal: 'spans', status: 'error', count: { none: true } },
    ],
  });
});

test('the trace matches its golden snapshot', async () => {
  placeOrder(provider.getTracer('checkout'), 'visa');
  await mock.client.waitForSpans({ service: 'checkout' }, { count: 3 });
  const golden = {
    traces: [
      {
        trace: 'T1',
        spans: [
          {
            name: 'POST /checkout',
            service: 'checkout',
            scope: 'checkout',
            kind: 'server',
            attributes: { 'http.route': '/checkout' },
            children: [
              { name: 'charge card', service: 'checkout', scope: 'checkout', kind: 'client', attributes: { 'card.brand': 'visa' } },
              { name: 'reserve stock', service: 'checkout', scope: 'checkout', kind: 'client', attributes: { items: 2 } },
            ],
          },
        ],
      },
    ],
  };
  const { traces } = await mock.client.snapshot({ signal: 'traces' });
  assert.equal(snapshotDiff(golden, { traces }), '');
});

test('the exporter waits as Retry-After says', async () => {
  const rule = await mock.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 1000 });
  provider.getTracer('checkout').startSpan('retried').end();
  await mock.client.waitForSpans({ name: 'retried' }, { timeoutMs: 10_000 });
  const report = await mock.client.faults.report(rule.id);
  assert.equal(report.verdict, 'honoured Retry-After', report.message);
});
