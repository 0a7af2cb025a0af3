// Vitest: the same checkout as examples/node-test, with the collector started once for the file and
// expectations checked on the server. Run with `npx vitest run --root examples/vitest`.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { startCollector } from 'otlp-mock';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

/** The code under test: POST /checkout → charge card. */
function placeOrder(tracer, card) {
  const root = tracer.startSpan('POST /checkout', { kind: SpanKind.SERVER });
  const charge = tracer.startSpan('charge card', { kind: SpanKind.CLIENT, attributes: { 'card.brand': card } }, trace.setSpan(context.active(), root));
  if (card === 'declined') charge.setStatus({ code: SpanStatusCode.ERROR, message: 'card declined' });
  charge.end();
  root.end();
}

let mock;
let provider;

beforeAll(async () => {
  mock = await startCollector();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${mock.urls.http}/v1/traces` }))],
  });
});
afterAll(async () => {
  await provider.shutdown();
  await mock.stop();
});
beforeEach(() => mock.client.clear());

test('a declined card is an error span under the checkout', async () => {
  placeOrder(provider.getTracer('checkout'), 'declined');
  // Throws with otlp-mock's explanation when it does not hold: Vitest prints it as the failure.
  await mock.client.expect({
    timeoutMs: 5000,
    expectations: [{ signal: 'spans', where: { name: 'charge card', error: true }, childOf: { where: { name: 'POST /checkout' } }, count: { exactly: 1 } }],
  });
});

test('the exporter is retried after a 503, and the report says so', async () => {
  const rule = await mock.client.faults.add({ action: 'unavailable', signals: 'traces', times: 1 });
  placeOrder(provider.getTracer('checkout'), 'visa');
  await mock.client.waitForSpans({ name: 'charge card' }, { count: 1, timeoutMs: 10_000 });
  const report = await mock.client.faults.report(rule.id);
  expect(report.ok, report.message).toBe(true);
});
