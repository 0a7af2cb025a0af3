// proto/ and server/otlp/schema.js: the field facts the wire depends on, the responses and error
// bodies we encode, the canonical-model round trip, and what the official exporters actually send.
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { trace, context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoggerProvider, InMemoryLogRecordExporter, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, MetricReader, AggregationType } from '@opentelemetry/sdk-metrics';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import {
  badRequestDetail,
  decodeRetryInfo,
  decodeStatus,
  encodeExportResponse,
  encodeRequest,
  encodeRetryInfo,
  encodeStatus,
  exportResponseJson,
  oracleDecode,
  requestType,
  responseType,
  retryInfoDetail,
  statusJson,
  toProtoObject,
} from '../../server/otlp/schema.js';
import { decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { fixtureFiles } from '../../fixtures/generate.js';
import { exportOrThrow } from '../helpers/exporters.js';

/** @typedef {'traces'|'metrics'|'logs'} SignalName */
/** @type {SignalName[]} */
const SIGNAL_NAMES = ['traces', 'metrics', 'logs'];

/** @param {SignalName} name */
function signal(name) {
  return /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName(name));
}

const root = requestType('traces').root;

// [message, field, number, type, repeated?] from the OTLP specification (opentelemetry-proto v1.x).
/** @type {[string, string, number, string, boolean?][]} */
const FIELD_FACTS = [
  ['opentelemetry.proto.common.v1.AnyValue', 'intValue', 3, 'int64'],
  ['opentelemetry.proto.common.v1.AnyValue', 'kvlistValue', 6, 'KeyValueList'],
  ['opentelemetry.proto.common.v1.AnyValue', 'bytesValue', 7, 'bytes'],
  ['opentelemetry.proto.common.v1.InstrumentationScope', 'droppedAttributesCount', 4, 'uint32'],
  ['opentelemetry.proto.common.v1.EntityRef', 'descriptionKeys', 4, 'string', true],
  ['opentelemetry.proto.resource.v1.Resource', 'entityRefs', 3, 'opentelemetry.proto.common.v1.EntityRef', true],
  ['opentelemetry.proto.trace.v1.ResourceSpans', 'schemaUrl', 3, 'string'],
  ['opentelemetry.proto.trace.v1.Span', 'traceId', 1, 'bytes'],
  ['opentelemetry.proto.trace.v1.Span', 'parentSpanId', 4, 'bytes'],
  ['opentelemetry.proto.trace.v1.Span', 'flags', 16, 'fixed32'],
  ['opentelemetry.proto.trace.v1.Span', 'kind', 6, 'SpanKind'],
  ['opentelemetry.proto.trace.v1.Span', 'startTimeUnixNano', 7, 'fixed64'],
  ['opentelemetry.proto.trace.v1.Span', 'droppedLinksCount', 14, 'uint32'],
  ['opentelemetry.proto.trace.v1.Span', 'status', 15, 'Status'],
  ['opentelemetry.proto.trace.v1.Span.Event', 'timeUnixNano', 1, 'fixed64'],
  ['opentelemetry.proto.trace.v1.Span.Link', 'flags', 6, 'fixed32'],
  ['opentelemetry.proto.trace.v1.Status', 'code', 3, 'StatusCode'],
  ['opentelemetry.proto.logs.v1.LogRecord', 'observedTimeUnixNano', 11, 'fixed64'],
  ['opentelemetry.proto.logs.v1.LogRecord', 'flags', 8, 'fixed32'],
  ['opentelemetry.proto.logs.v1.LogRecord', 'eventName', 12, 'string'],
  ['opentelemetry.proto.metrics.v1.Metric', 'exponentialHistogram', 10, 'ExponentialHistogram'],
  ['opentelemetry.proto.metrics.v1.Metric', 'metadata', 12, 'opentelemetry.proto.common.v1.KeyValue', true],
  ['opentelemetry.proto.metrics.v1.NumberDataPoint', 'asInt', 6, 'sfixed64'],
  ['opentelemetry.proto.metrics.v1.NumberDataPoint', 'attributes', 7, 'opentelemetry.proto.common.v1.KeyValue', true],
  ['opentelemetry.proto.metrics.v1.NumberDataPoint', 'flags', 8, 'uint32'],
  ['opentelemetry.proto.metrics.v1.HistogramDataPoint', 'bucketCounts', 6, 'fixed64', true],
  ['opentelemetry.proto.metrics.v1.HistogramDataPoint', 'max', 12, 'double'],
  ['opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint', 'scale', 6, 'sint32'],
  ['opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint', 'zeroThreshold', 14, 'double'],
  ['opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.Buckets', 'bucketCounts', 2, 'uint64', true],
  ['opentelemetry.proto.metrics.v1.SummaryDataPoint', 'quantileValues', 6, 'ValueAtQuantile', true],
  ['opentelemetry.proto.metrics.v1.Exemplar', 'filteredAttributes', 7, 'opentelemetry.proto.common.v1.KeyValue', true],
  ['opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess', 'rejectedSpans', 1, 'int64'],
  ['opentelemetry.proto.collector.metrics.v1.ExportMetricsPartialSuccess', 'rejectedDataPoints', 1, 'int64'],
  ['opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess', 'errorMessage', 2, 'string'],
  ['google.rpc.Status', 'details', 3, 'google.protobuf.Any', true],
  ['google.rpc.RetryInfo', 'retryDelay', 1, 'google.protobuf.Duration'],
  ['google.rpc.BadRequest.FieldViolation', 'description', 2, 'string'],
];

test('the schema carries the OTLP field numbers and types', () => {
  for (const [message, name, id, type, repeated = false] of FIELD_FACTS) {
    const field = root.lookupType(message).fields[name];
    assert.ok(field, `${message}.${name} exists`);
    assert.equal(field.id, id, `${message}.${name} number`);
    assert.equal(field.type, type, `${message}.${name} type`);
    assert.equal(field.repeated, repeated, `${message}.${name} repeated`);
  }
});

test('proto3 optional and oneof fields are marked as such', () => {
  const histogram = root.lookupType('opentelemetry.proto.metrics.v1.HistogramDataPoint');
  for (const name of ['sum', 'min', 'max']) assert.ok(histogram.fields[name].partOf?.isProto3Optional, `HistogramDataPoint.${name}`);
  const metric = root.lookupType('opentelemetry.proto.metrics.v1.Metric');
  assert.deepEqual(metric.oneofs.data.oneof, ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary']);
  const severity = root.lookupEnum('opentelemetry.proto.logs.v1.SeverityNumber');
  assert.equal(severity.values.SEVERITY_NUMBER_FATAL4, 24);
});

test('the export services are gRPC services with one Export method', () => {
  for (const name of SIGNAL_NAMES) {
    const row = signal(name);
    const service = root.lookupService(row.grpcService);
    const method = service.methods[row.grpcMethod];
    assert.equal(method.resolvedRequestType, requestType(name));
    assert.equal(method.resolvedResponseType, responseType(name));
  }
});

test('requestType and responseType accept a name or a signal row, and reject unknown signals', () => {
  assert.equal(requestType('logs').fullName, '.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  assert.equal(responseType(signal('metrics')).fullName, '.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse');
  assert.throws(() => requestType(/** @type {any} */ ('events')), TypeError);
});

test('export responses: full success is empty in protobuf and an empty partialSuccess in JSON, precomputed; partial success names the signal’s count', () => {
  const rejected = { traces: 'rejectedSpans', metrics: 'rejectedDataPoints', logs: 'rejectedLogRecords' };
  for (const name of SIGNAL_NAMES) {
    assert.equal(encodeExportResponse(name, null).length, 0);
    assert.equal(encodeExportResponse(name, null), encodeExportResponse(signal(name), null));
    assert.equal(exportResponseJson(name, null), '{"partialSuccess":{}}');

    const partial = { rejected: 2, errorMessage: 'span name must not be empty' };
    const decoded = /** @type {any} */ (responseType(name).toObject(responseType(name).decode(encodeExportResponse(name, partial)), { longs: String }));
    assert.deepEqual(decoded, { partialSuccess: { [rejected[name]]: '2', errorMessage: partial.errorMessage } });
    assert.equal(exportResponseJson(name, partial), `{"partialSuccess":{"${rejected[name]}":"2","errorMessage":"span name must not be empty"}}`);
  }
});

test('google.rpc.Status round-trips with RetryInfo and BadRequest details', () => {
  const bytes = encodeStatus(14, 'collector is busy', [retryInfoDetail(1500), badRequestDetail('must not be empty', 'resourceSpans[0].scopeSpans[0].spans[3].name')]);
  assert.deepEqual(decodeStatus(bytes), {
    code: 14,
    message: 'collector is busy',
    details: [
      { typeUrl: 'type.googleapis.com/google.rpc.RetryInfo', value: { retryDelay: { seconds: 1, nanos: 500_000_000 } } },
      {
        typeUrl: 'type.googleapis.com/google.rpc.BadRequest',
        value: { fieldViolations: [{ field: 'resourceSpans[0].scopeSpans[0].spans[3].name', description: 'must not be empty', reason: '' }] },
      },
    ],
  });
  assert.deepEqual(decodeStatus(encodeStatus(3, 'bad')), { code: 3, message: 'bad', details: [] });
});

test('an unknown detail type is kept as its packed bytes', () => {
  const Status = root.lookupType('google.rpc.Status');
  const bytes = Status.encode(Status.fromObject({ code: 9, details: [{ type_url: 'type.googleapis.com/example.Other', value: Buffer.from([1, 2, 3]) }] })).finish();
  const status = decodeStatus(bytes);
  assert.equal(status.details[0].typeUrl, 'type.googleapis.com/example.Other');
  assert.deepEqual([.../** @type {Uint8Array} */ (status.details[0].value)], [1, 2, 3]);
});

test('statusJson writes the proto3 JSON mapping: @type, and durations as seconds with 0, 3, 6 or 9 decimals', () => {
  assert.equal(
    statusJson(14, 'busy', [retryInfoDetail(1500)]),
    '{"code":14,"message":"busy","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}',
  );
  assert.equal(statusJson(3, 'bad'), '{"code":3,"message":"bad"}');
  const delays = [
    [2000, '2s'],
    [0, '0s'],
    [250, '0.250s'],
    [0.0015, '0.000001500s'],
    [1.5, '0.001500s'],
    [90_000, '90s'],
  ];
  for (const [ms, text] of delays) {
    assert.equal(JSON.parse(statusJson(14, '', [retryInfoDetail(/** @type {number} */ (ms))])).details[0].retryDelay, text, `${ms} ms`);
  }
  assert.deepEqual(JSON.parse(statusJson(3, 'bad', [badRequestDetail('no spans')])).details, [
    { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: 'no spans' }] },
  ]);
});

test('RetryInfo encodes a google.protobuf.Duration', () => {
  assert.deepEqual(decodeRetryInfo(encodeRetryInfo(2500)), { retryDelay: { seconds: 2, nanos: 500_000_000 } });
  assert.deepEqual(decodeRetryInfo(encodeRetryInfo(0)), { retryDelay: { seconds: 0, nanos: 0 } });
  assert.deepEqual(decodeRetryInfo(new Uint8Array(0)), { retryDelay: { seconds: 0, nanos: 0 } });
  // seconds=3 (field 1 varint), nanos=7 (field 2 varint) inside retry_delay (field 1): the documented layout.
  assert.deepEqual([...encodeRetryInfo(3000.000007)], [0x0a, 0x04, 0x08, 0x03, 0x10, 0x07]);
});

test('toProtoObject converts ids, 64-bit strings and bytes, and leaves proto3 defaults out', () => {
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'b', value: { bytesValue: '3q2+7w==' } }], droppedAttributesCount: 0, entityRefs: [] },
        scopeSpans: [
          {
            scope: { name: '', version: '', attributes: [], droppedAttributesCount: 0 },
            spans: [
              {
                traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
                spanId: '00f067aa0ba902b7',
                parentSpanId: '',
                name: 'x',
                kind: 2,
                startTimeUnixNano: '18446744073709551615',
                endTimeUnixNano: '0',
              },
            ],
            schemaUrl: '',
          },
        ],
      },
    ],
  };
  const proto = toProtoObject('traces', request);
  const span = proto.resourceSpans[0].scopeSpans[0].spans[0];
  assert.deepEqual([...span.traceId], [...Buffer.from('4bf92f3577b34da6a3ce929d0e0e4736', 'hex')]);
  assert.ok(/** @type {any} */ (protobuf.util.Long).isLong(span.startTimeUnixNano));
  assert.equal(span.startTimeUnixNano.toString(), '18446744073709551615');
  assert.equal(span.startTimeUnixNano.unsigned, true);
  assert.equal('endTimeUnixNano' in span, false);
  assert.equal('parentSpanId' in span, false);
  assert.deepEqual(proto.resourceSpans[0].scopeSpans[0].scope, {});
  assert.deepEqual([...proto.resourceSpans[0].resource.attributes[0].value.bytesValue], [0xde, 0xad, 0xbe, 0xef]);
  const decoded = oracleDecode('traces', encodeRequest('traces', request));
  assert.equal(decoded.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano, '18446744073709551615');
});

test('canonical → encodeRequest → decode is the identity on the fixtures', () => {
  for (const name of SIGNAL_NAMES) {
    const canonical = decodeProto(signal(name), readFileSync(new URL(`../../fixtures/${name}.pb`, import.meta.url)));
    assert.deepStrictEqual(oracleDecode(name, encodeRequest(name, canonical)), canonical);
  }
});

test('the committed fixtures are what fixtures/generate.js writes', () => {
  for (const [file, content] of fixtureFiles()) {
    const onDisk = readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));
    assert.ok(onDisk.equals(Buffer.from(content)), `fixtures/${file} is stale: run node fixtures/generate.js`);
  }
});

// ---- what the official exporters send ----

/** A stand-in collector that keeps each request body. */
async function captureServer() {
  /** @type {Map<string, Buffer[]>} */
  const bodies = new Map();
  const server = http.createServer((req, res) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const list = bodies.get(req.url ?? '') ?? [];
      list.push(Buffer.concat(chunks));
      bodies.set(req.url ?? '', list);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Decodes with both decoders, checks they agree and returns the result. @param {SignalName} name @param {Uint8Array} bytes */
function decodeBoth(name, bytes) {
  const decoded = oracleDecode(name, bytes);
  assert.deepStrictEqual(decodeProto(signal(name), bytes), decoded);
  return decoded;
}

/** @param {any[]} attributes */
function attributeMap(attributes) {
  return Object.fromEntries(attributes.map((kv) => [kv.key, kv.value]));
}

test('bytes from the official OTLP/HTTP protobuf exporters decode to what the SDK recorded', async (t) => {
  const collector = await captureServer();
  t.after(() => collector.close());
  const resource = resourceFromAttributes({ 'service.name': 'schema-test', 'host.cpus': 8, 'process.args': ['a', 'b'] });

  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('schema-scope', '1.2.3');
  const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET', ratio: 0.25, ok: true } });
  const child = tracer.startSpan(
    'child',
    { kind: SpanKind.CLIENT, links: [{ context: parent.spanContext(), attributes: { why: 'batch' } }] },
    trace.setSpan(context.active(), parent),
  );
  child.recordException(new Error('boom'));
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
  child.end();
  parent.end();
  await exportOrThrow(new OTLPTraceExporter({ url: `${collector.url}/v1/traces` }), spans.getFinishedSpans());

  const traces = decodeBoth('traces', /** @type {Buffer[]} */ (collector.bodies.get('/v1/traces'))[0]);
  const [group] = traces.resourceSpans;
  assert.deepEqual(attributeMap(group.resource.attributes)['host.cpus'], { intValue: '8' });
  assert.deepEqual(group.scopeSpans[0].scope.name, 'schema-scope');
  const byName = Object.fromEntries(group.scopeSpans[0].spans.map((/** @type {any} */ s) => [s.name, s]));
  const { traceId, spanId } = parent.spanContext();
  assert.equal(byName.parent.traceId, traceId);
  assert.equal(byName.parent.spanId, spanId);
  assert.equal(byName.child.parentSpanId, spanId);
  assert.equal(byName.parent.kind, 2);
  assert.deepEqual(attributeMap(byName.parent.attributes).ratio, { doubleValue: 0.25 });
  assert.equal(byName.child.status.code, 2);
  assert.equal(byName.child.events[0].name, 'exception');
  assert.equal(byName.child.links[0].spanId, spanId);
  // Sampled, and the OTLP 1.1 bits saying whether the parent is remote.
  assert.equal(byName.child.flags & 0x1ff, 0x101);
  assert.equal(byName.child.links[0].flags & 0xff, 1);
  assert.ok(BigInt(byName.parent.endTimeUnixNano) >= BigInt(byName.parent.startTimeUnixNano));
  assert.ok(BigInt(byName.parent.startTimeUnixNano) > 2n ** 53n);

  const logs = new InMemoryLogRecordExporter();
  const logger = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: logs })] }).getLogger('schema-logs', '9');
  logger.emit({
    severityNumber: 17,
    severityText: 'ERROR',
    body: { reason: 'declined', amounts: [1, 2.5] },
    eventName: 'payment.failed',
    attributes: { big: 2 ** 40 },
    context: trace.setSpan(context.active(), parent),
  });
  await exportOrThrow(new OTLPLogExporter({ url: `${collector.url}/v1/logs` }), logs.getFinishedLogRecords());

  const logRequest = decodeBoth('logs', /** @type {Buffer[]} */ (collector.bodies.get('/v1/logs'))[0]);
  const record = logRequest.resourceLogs[0].scopeLogs[0].logRecords[0];
  assert.equal(record.eventName, 'payment.failed');
  assert.equal(record.severityNumber, 17);
  assert.equal(record.traceId, traceId);
  assert.equal(record.flags, 1);
  assert.deepEqual(attributeMap(record.attributes).big, { intValue: String(2 ** 40) });
  assert.deepEqual(attributeMap(record.body.kvlistValue.values).amounts, { arrayValue: { values: [{ intValue: '1' }, { doubleValue: 2.5 }] } });

  const reader = new (class extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  })();
  const meters = new MeterProvider({
    resource,
    readers: [reader],
    views: [{ instrumentName: 'latency.exp', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }],
  });
  const meter = meters.getMeter('schema-metrics');
  meter.createCounter('requests').add(3, { route: '/a' });
  meter.createUpDownCounter('inflight').add(-2);
  meter.createHistogram('latency').record(12.5);
  const exp = meter.createHistogram('latency.exp');
  for (const v of [0.5, 3, 3, 1000]) exp.record(v);
  meter.createGauge('temperature').record(21.5);
  const { resourceMetrics } = await reader.collect();
  await exportOrThrow(new OTLPMetricExporter({ url: `${collector.url}/v1/metrics` }), resourceMetrics);

  const metricRequest = decodeBoth('metrics', /** @type {Buffer[]} */ (collector.bodies.get('/v1/metrics'))[0]);
  const metrics = Object.fromEntries(metricRequest.resourceMetrics[0].scopeMetrics[0].metrics.map((/** @type {any} */ m) => [m.name, m]));
  assert.equal(metrics.requests.sum.isMonotonic, true);
  assert.equal(metrics.requests.sum.aggregationTemporality, 2);
  assert.equal(metrics.inflight.sum.isMonotonic, false);
  assert.equal(metrics.latency.histogram.dataPoints[0].count, '1');
  assert.equal(metrics.latency.histogram.dataPoints[0].max, 12.5);
  const expPoint = metrics['latency.exp'].exponentialHistogram.dataPoints[0];
  assert.equal(expPoint.count, '4');
  assert.equal(expPoint.sum, 1006.5);
  assert.ok(expPoint.positive.bucketCounts.length > 0);
  assert.equal(metrics.temperature.gauge.dataPoints[0].asDouble, 21.5);
});
