// Telemetry made by the real OpenTelemetry SDKs for one service, small and varied, for tests that send it through
// the official exporters and compare what arrives.
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { LoggerProvider, SimpleLogRecordProcessor, InMemoryLogRecordExporter } from '@opentelemetry/sdk-logs';

/** @param {string} service */
export async function sdkSpans(service) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('sdk-items');
  const root = tracer.startSpan('checkout', { attributes: { 'cart.items': 3, 'cart.id': 'c-42', big: Number.MAX_SAFE_INTEGER } });
  root.addEvent('priced', { total: 12.5 });
  root.end();
  tracer.startSpan('charge').end();
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** @param {string} service */
export async function sdkMetrics(service) {
  const memory = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: memory, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': service }), readers: [reader] });
  const meter = provider.getMeter('sdk-items');
  meter.createCounter('forward.requests').add(5, { route: '/a' });
  const histogram = meter.createHistogram('forward.latency', { unit: 'ms' });
  for (const v of [1, 20, 300]) histogram.record(v);
  await provider.forceFlush();
  const exported = memory.getMetrics();
  await provider.shutdown();
  return exported[exported.length - 1];
}

/** @param {string} service */
export async function sdkLogs(service) {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  const logger = provider.getLogger('sdk-items');
  logger.emit({ severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: { msg: 'low stock', sku: 7 }, attributes: { shard: 2 } });
  logger.emit({ severityNumber: SeverityNumber.INFO, body: 'restocked' });
  await provider.forceFlush();
  const records = memory.getFinishedLogRecords();
  await provider.shutdown();
  return records;
}

/** Each signal's producer, what the REST API calls its items, and how many it lists for one call. */
export const SDK_ITEMS = /** @type {const} */ ({
  traces: { kind: 'spans', make: sdkSpans, count: 2 },
  metrics: { kind: 'metrics', make: sdkMetrics, count: 2 },
  logs: { kind: 'logs', make: sdkLogs, count: 2 },
});
