// The README's "Point any OpenTelemetry SDK at it" environments, read from the README itself and run with the
// official JS exporters against a started collector: if the README changes, this test checks the new text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { startTestCollector } from '../helpers/collector.js';
import { exportOrThrow } from '../helpers/exporters.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/**
 * What an application's auto-configuration does with OTEL_EXPORTER_OTLP_PROTOCOL (as @opentelemetry/sdk-node
 * does): the JS exporters each speak one wire, so the protocol chooses the package.
 */
const EXPORTERS = /** @type {Record<string, { traces: any, metrics: any, logs: any, contentType: string, transport: string }>} */ ({
  grpc: { traces: GrpcTraceExporter, metrics: GrpcMetricExporter, logs: GrpcLogExporter, contentType: 'application/grpc', transport: 'grpc' },
  'http/protobuf': { traces: ProtoTraceExporter, metrics: ProtoMetricExporter, logs: ProtoLogExporter, contentType: 'application/x-protobuf', transport: 'http' },
  'http/json': { traces: JsonTraceExporter, metrics: JsonMetricExporter, logs: JsonLogExporter, contentType: 'application/json', transport: 'http' },
});

/**
 * The shell block under the SDK heading: groups of `export NAME=value` lines, each under a `# label`.
 * @returns {{ label: string, env: Record<string, string> }[]}
 */
function documentedEnvironments() {
  const section = README.split(/^## Point any OpenTelemetry SDK at it$/m)[1];
  assert.ok(section, 'the README has a "## Point any OpenTelemetry SDK at it" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the section starts with a sh code block');
  return block[1]
    .trim()
    .split(/\n\s*\n/)
    .map((group) => {
      const lines = group.split('\n');
      const label = lines
        .filter((l) => l.startsWith('#'))
        .map((l) => l.replace(/^#\s*/, ''))
        .join(' ');
      /** @type {Record<string, string>} */
      const env = {};
      for (const line of lines.filter((l) => !l.startsWith('#'))) {
        const m = /^export ([A-Z_]+)=(\S+)$/.exec(line.trim());
        assert.ok(m, `"${line}" is an export line`);
        env[m[1]] = m[2];
      }
      return { label, env };
    });
}

/** The query the README suggests after exporting, e.g. `curl 'localhost:4319/api/spans?service=checkout'`. */
function documentedQuery() {
  const m = /curl '(localhost:4319)(\/api\/spans\?service=([\w.-]+))'/.exec(README);
  assert.ok(m, 'the README shows a curl query of /api/spans by service');
  return { path: m[2], service: m[3] };
}

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** The documented default ports, as this test's collector got them. @type {Record<string, number>} */
let ports;

before(async () => {
  collector = await startTestCollector();
  ports = { 4317: Number(new URL(collector.urls.grpc).port), 4318: Number(new URL(collector.urls.http).port), 4319: Number(new URL(collector.urls.ui).port) };
});

after(async () => {
  await collector.stop();
});

/** Every OTEL_* variable is this test's to set; none from the shell running the tests leaks in. */
function clearOtelEnv() {
  for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
}

/** The documented URL, on this collector's port for the documented one, host name unchanged. @param {string} value */
function onTestPorts(value) {
  return value.replace(/:(431[789])\b/, (_, port) => `:${ports[port]}`);
}

/**
 * Exports a span, a log record and a metric through SDK providers whose exporters are built from the environment
 * alone (no url in code), and shuts them down.
 * @param {typeof EXPORTERS[string]} wire @param {string} service
 */
async function exportEverySignal(wire, service) {
  const resource = resourceFromAttributes({ 'service.name': service });
  const tracing = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new wire.traces())] });
  tracing.getTracer('readme').startSpan('GET /cart').end();
  await tracing.forceFlush();
  await tracing.shutdown();

  const logging = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: new wire.logs() })] });
  logging.getLogger('readme').emit({ body: 'cart viewed' });
  await logging.forceFlush();
  await logging.shutdown();

  const reader = new PeriodicExportingMetricReader({ exporter: new wire.metrics(), exportIntervalMillis: 3_600_000 });
  const metering = new MeterProvider({ resource, readers: [reader] });
  metering.getMeter('readme').createCounter('cart.views').add(1);
  await metering.forceFlush();
  await metering.shutdown();
}

const environments = documentedEnvironments();

test('the README documents one environment per wire, each with an endpoint and a protocol', () => {
  assert.deepEqual(environments.map((e) => e.env.OTEL_EXPORTER_OTLP_PROTOCOL).sort(), ['grpc', 'http/json', 'http/protobuf']);
  for (const { label, env } of environments) assert.deepEqual(Object.keys(env).sort(), ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL'], label);
});

for (const { label, env } of environments) {
  test(`README "${label}": the official exporters deliver spans, logs and metrics, and the README's query finds them`, async (t) => {
    t.after(clearOtelEnv);
    const wire = EXPORTERS[env.OTEL_EXPORTER_OTLP_PROTOCOL];
    assert.ok(wire, `"${env.OTEL_EXPORTER_OTLP_PROTOCOL}" is a protocol an SDK knows`);
    clearOtelEnv();
    for (const [name, value] of Object.entries(env)) process.env[name] = onTestPorts(value);

    const { path, service } = documentedQuery();
    await collector.clear();
    await exportEverySignal(wire, service);

    const query = await fetch(`http://localhost:${ports[4319]}${path}`);
    assert.equal(query.status, 200);
    assert.deepEqual(
      (await query.json()).spans.map((/** @type {any} */ s) => s.name),
      ['GET /cart'],
    );
    const logs = await collector.waitForCount('logs', `service=${service}`, 1);
    assert.equal(logs[0].body, 'cart viewed');
    const metrics = await collector.waitForCount('metrics', `service=${service}`, 1);
    assert.equal(metrics[0].name, 'cart.views');
    // The journal proves the wire: shutting a meter provider down exports its cumulative sum once more.
    const { requests } = await collector.api('/api/requests?order=asc');
    assert.deepEqual([...new Set(requests.map((/** @type {any} */ r) => r.signal))], ['traces', 'logs', 'metrics']);
    for (const r of requests) assert.deepEqual([r.transport, r.contentType.split(';')[0], r.outcome], [wire.transport, wire.contentType, 'accepted'], r.signal);
  });
}

test('what the README warns of: the gRPC port with the default http/protobuf protocol fails with "Parse Error: Expected HTTP/"', async (t) => {
  t.after(clearOtelEnv);
  clearOtelEnv();
  const grpcEndpoint = environments.find((e) => e.env.OTEL_EXPORTER_OTLP_PROTOCOL === 'grpc')?.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  assert.ok(grpcEndpoint);
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = onTestPorts(grpcEndpoint);
  assert.ok(README.includes('`Parse Error: Expected HTTP/`'));
  const exporter = new ProtoTraceExporter();
  const tracing = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'misrouted' }), spanProcessors: [] });
  const span = /** @type {any} */ (tracing.getTracer('readme').startSpan('lost'));
  span.end();
  await assert.rejects(exportOrThrow(exporter, [span]), /Parse Error: Expected HTTP\//);
  await exporter.shutdown();
  await tracing.shutdown();
});
