// The official OpenTelemetry JS exporters, over real sockets, on every wire (gRPC, HTTP protobuf,
// HTTP JSON) with and without gzip. The same SDK-produced items go through every wire, so what the
// query API returns must be identical, and specific values must survive exactly.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace, SpanKind, SpanStatusCode, ValueType } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { TraceState } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { LoggerProvider, SimpleLogRecordProcessor, InMemoryLogRecordExporter } from '@opentelemetry/sdk-logs';
import { startTestCollector } from '../helpers/collector.js';
import { WIRE_CONFIGS, createExporter, exportOrThrow, describeWire } from '../helpers/exporters.js';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const LINKED_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_IDS = ['eee19b7ec3c1b174', 'b7ad6b7169203331', '00f067aa0ba902b7', '53995c3f42cd8ad8'];
const SERVICE = 'interop-svc';

/** Every attribute type an SDK can carry, with values near the edges of exactness. */
const RICH_ATTRIBUTES = {
  str: 'héllo wörld ✓',
  'empty.str': '',
  'bool.true': true,
  'bool.false': false,
  'int.answer': 42,
  'int.negative': -7,
  'int.max_safe': Number.MAX_SAFE_INTEGER,
  'int.min_safe': Number.MIN_SAFE_INTEGER,
  'double.pi': 3.141592653589793,
  'double.tiny': 5e-324,
  'double.negative': -0.5,
  'array.str': ['a', 'b', ''],
  'array.bool': [true, false],
  'array.int': [1, -2, 3000000000],
  'array.double': [1.5, -2.25],
};

/** An IdGenerator handing out fixed ids so that ids can be checked exactly. */
class FixedIds {
  constructor() {
    this.next = 0;
  }
  generateTraceId() {
    return TRACE_ID;
  }
  generateSpanId() {
    return SPAN_IDS[this.next++ % SPAN_IDS.length];
  }
}

/** @param {string} service */
const resourceFor = (service) => resourceFromAttributes({ 'service.name': service, 'deployment.environment': 'test', 'host.cpu.count': 2 });

/**
 * Makes spans with the real SDK: a server span with every attribute type, an event, an exception and an
 * error status; a client child with a link carrying trace state; an internal grandchild with no attributes.
 */
async function produceSpans() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFor(SERVICE),
    idGenerator: new FixedIds(),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('interop-tracer', '1.2.3');
  const root = tracer.startSpan('GET /checkout', { kind: SpanKind.SERVER, attributes: RICH_ATTRIBUTES, startTime: [1700000000, 123456789] });
  root.addEvent('cache.miss', { 'cache.key': 'cart:42', 'cache.shard': 3 }, [1700000000, 200000001]);
  const failure = new Error('card declined');
  failure.name = 'PaymentError';
  failure.stack = 'PaymentError: card declined\n    at pay (pay.js:1:1)';
  root.recordException(failure, [1700000000, 300000002]);
  root.setStatus({ code: SpanStatusCode.ERROR, message: 'payment declined' });
  const rootCtx = trace.setSpan(context.active(), root);
  const child = tracer.startSpan(
    'SELECT orders',
    {
      kind: SpanKind.CLIENT,
      startTime: [1700000000, 400000000],
      attributes: { 'db.system': 'postgresql', 'db.rows': 12 },
      links: [
        {
          context: { traceId: LINKED_TRACE_ID, spanId: 'b9c7c989f97918e1', traceFlags: 1, traceState: new TraceState('vendor=value,other=1') },
          attributes: { 'link.reason': 'batch', 'link.count': 2 },
        },
      ],
    },
    rootCtx,
  );
  const grandchild = tracer.startSpan('serialize', { startTime: [1700000000, 450000000] }, trace.setSpan(context.active(), child));
  grandchild.end([1700000000, 460000000]);
  child.setStatus({ code: SpanStatusCode.OK });
  child.end([1700000000, 500000000]);
  root.end([1700000000, 987654321]);
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  assert.equal(spans.length, 3);
  return spans;
}

/** Makes one ResourceMetrics with the real SDK: counter, up-down counter, histogram, gauge, observable gauge. */
async function produceMetrics() {
  const memory = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: memory, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ resource: resourceFor(SERVICE), readers: [reader] });
  const meter = provider.getMeter('interop-meter', '2.0.1');
  const counter = meter.createCounter('interop.requests', { description: 'requests served', unit: '{request}' });
  counter.add(5, { route: '/a', 'http.status_code': 200 });
  counter.add(3, { route: '/b', 'http.status_code': 500 });
  counter.add(2, { route: '/a', 'http.status_code': 200 });
  const intCounter = meter.createCounter('interop.bytes', { unit: 'By', valueType: ValueType.INT });
  intCounter.add(4096);
  const upDown = meter.createUpDownCounter('interop.queue.depth', { description: 'queued jobs' });
  upDown.add(10, { queue: 'email' });
  upDown.add(-4, { queue: 'email' });
  const histogram = meter.createHistogram('interop.latency', { description: 'request latency', unit: 'ms' });
  for (const v of [12, 250, 1200, 0.5]) histogram.record(v, { route: '/a' });
  const gauge = meter.createGauge('interop.temperature', { unit: 'Cel' });
  gauge.record(21.5, { room: 'lab' });
  const observable = meter.createObservableGauge('interop.heap', { unit: 'By' });
  observable.addCallback((result) => {
    result.observe(1048576, { kind: 'heap' });
    result.observe(-1.25, { kind: 'delta' });
  });
  await provider.forceFlush();
  const exported = memory.getMetrics();
  await provider.shutdown();
  assert.ok(exported.length >= 1);
  const resourceMetrics = exported[exported.length - 1];
  assert.equal(resourceMetrics.scopeMetrics[0].metrics.length, 6);
  return resourceMetrics;
}

/** Makes log records with the real SDK: every severity band, structured bodies, trace context, an event name. */
async function produceLogs() {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFor(SERVICE), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('interop-logger', '4.5.6');
  const spanContext = { traceId: TRACE_ID, spanId: SPAN_IDS[0], traceFlags: 1 };
  logger.emit({
    timestamp: [1700000001, 1],
    observedTimestamp: [1700000001, 2],
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: 'user logged in',
    attributes: RICH_ATTRIBUTES,
    context: trace.setSpanContext(context.active(), spanContext),
  });
  logger.emit({
    timestamp: [1700000002, 999999999],
    severityNumber: SeverityNumber.ERROR,
    severityText: 'ERROR',
    body: { message: 'payment failed', code: 402, retryable: false, tags: ['billing', 'card'], detail: { provider: 'acme', ratio: 0.25 } },
    eventName: 'payment.failure',
  });
  logger.emit({ timestamp: [1700000003, 0], severityNumber: SeverityNumber.TRACE, severityText: 'TRACE', body: 'verbose' });
  logger.emit({ timestamp: [1700000004, 0], severityNumber: SeverityNumber.FATAL4, severityText: 'FATAL4', body: 12345 });
  logger.emit({ timestamp: [1700000005, 0], severityNumber: SeverityNumber.WARN, body: true, attributes: { 'only.attr': 'x' } });
  await provider.forceFlush();
  const records = memory.getFinishedLogRecords();
  await provider.shutdown();
  assert.equal(records.length, 5);
  return records;
}

/**
 * The API's view without what legitimately differs between two separate requests.
 * @param {any[]} items
 * @param {(item: any) => string} sortKey
 */
function comparable(items, sortKey) {
  return items
    .map((item) => {
      const { requestId, ...rest } = item;
      return rest;
    })
    .sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}

/** @param {any} obj @param {string[]} keys */
const pick = (obj, keys) => Object.fromEntries(keys.map((k) => [k, obj[k]]));

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;

before(async () => {
  collector = await startTestCollector();
});

after(async () => {
  await collector.stop();
});

/**
 * Exports `items` through every wire configuration, one at a time on a cleared collector, and returns what the
 * API shows after each, together with the journal entry of the request.
 * @param {'traces'|'metrics'|'logs'} signal
 * @param {'spans'|'logs'|'metrics'} kind
 * @param {any} items
 * @param {number} expected items the API must show
 */
async function throughEveryWire(signal, kind, items, expected) {
  /** @type {{ config: import('../helpers/exporters.js').WireConfig, items: any[], journal: any }[]} */
  const results = [];
  for (const config of WIRE_CONFIGS) {
    await collector.clear();
    const exporter = createExporter(signal, config, collector.urls);
    try {
      await exportOrThrow(exporter, items);
    } finally {
      await exporter.shutdown();
    }
    const stored = await collector.waitForCount(kind, 'limit=1000', expected);
    assert.equal(stored.length, expected, `${describeWire(config)}: exactly ${expected} ${kind}`);
    const { requests } = await collector.api(`/api/requests?signal=${signal}`);
    assert.equal(requests.length, 1, `${describeWire(config)}: one journal entry`);
    results.push({ config, items: stored, journal: requests[0] });
  }
  return results;
}

/**
 * The gRPC message encoding belongs in the journal as much as HTTP's Content-Encoding: it is how a test proves
 * that its exporter compressed.
 * @param {{ config: import('../helpers/exporters.js').WireConfig, journal: any }[]} results
 */
function checkGrpcEncodingJournal(results) {
  for (const { config, journal } of results) {
    if (config.wire !== 'grpc') continue;
    assert.equal(journal.contentEncoding || 'identity', config.compression === 'gzip' ? 'gzip' : 'identity', describeWire(config));
  }
}

/** @param {{ config: import('../helpers/exporters.js').WireConfig, journal: any }[]} results @param {string} signal */
function checkJournal(results, signal) {
  for (const { config, journal } of results) {
    const label = describeWire(config);
    assert.equal(journal.signal, signal, label);
    assert.equal(journal.transport, config.wire === 'grpc' ? 'grpc' : 'http', label);
    assert.equal(journal.outcome, 'accepted', label);
    if (config.wire === 'proto') assert.match(journal.contentType, /^application\/x-protobuf/, label);
    if (config.wire === 'json') assert.match(journal.contentType, /^application\/json/, label);
    if (config.wire !== 'grpc') assert.equal(journal.contentEncoding || 'identity', config.compression === 'gzip' ? 'gzip' : 'identity', label);
    assert.ok(journal.bytes > 0, `${label}: bytes on the wire recorded`);
    assert.match(String(journal.userAgent), /OTel-OTLP-Exporter-JavaScript/, `${label}: user agent recorded`);
  }
}

describe('traces through every wire', () => {
  /** @type {Awaited<ReturnType<typeof throughEveryWire>>} */
  let results;

  before(async () => {
    results = await throughEveryWire('traces', 'spans', await produceSpans(), 3);
  });

  test('every wire stores identical spans', () => {
    const [first, ...rest] = results;
    const reference = comparable(first.items, (s) => s.spanId);
    for (const r of rest)
      assert.deepEqual(
        comparable(r.items, (s) => s.spanId),
        reference,
        `${describeWire(r.config)} vs ${describeWire(first.config)}`,
      );
  });

  test('the journal records transport, content type and compression', () => checkJournal(results, 'traces'));

  test('the journal records the gRPC message encoding', () => checkGrpcEncodingJournal(results));

  test('ids, nanosecond timestamps, attributes, events, links and status round-trip exactly', () => {
    for (const { config, items } of results) {
      const label = describeWire(config);
      const byName = Object.fromEntries(items.map((s) => [s.name, s]));
      const root = byName['GET /checkout'];
      const child = byName['SELECT orders'];
      const grandchild = byName['serialize'];
      assert.ok(root && child && grandchild, label);

      assert.equal(root.traceId, TRACE_ID, label);
      assert.equal(root.spanId, SPAN_IDS[0], label);
      assert.equal(root.parentSpanId, '', label);
      assert.equal(child.spanId, SPAN_IDS[1], label);
      assert.equal(child.parentSpanId, SPAN_IDS[0], label);
      assert.equal(grandchild.parentSpanId, SPAN_IDS[1], label);

      assert.equal(root.kind, 2, `${label}: SERVER`);
      assert.equal(child.kind, 3, `${label}: CLIENT`);
      assert.equal(grandchild.kind, 1, `${label}: INTERNAL`);

      assert.equal(root.startTimeUnixNano, '1700000000123456789', label);
      assert.equal(root.endTimeUnixNano, '1700000000987654321', label);
      assert.equal(grandchild.startTimeUnixNano, '1700000000450000000', label);
      if (root.durationNanos !== undefined) assert.equal(String(root.durationNanos), '864197532', label);

      assert.deepEqual(root.attributes, RICH_ATTRIBUTES, `${label}: attributes`);
      assert.deepEqual(child.attributes, { 'db.system': 'postgresql', 'db.rows': 12 }, label);
      assert.deepEqual(grandchild.attributes, {}, label);
      assert.equal(root.droppedAttributesCount, 0, label);

      assert.deepEqual(root.status, { code: 2, message: 'payment declined' }, label);
      assert.equal(child.status.code, 1, label);
      assert.equal(grandchild.status.code, 0, label);

      assert.equal(root.events.length, 2, label);
      assert.deepEqual(
        pick(root.events[0], ['timeUnixNano', 'name', 'attributes']),
        { timeUnixNano: '1700000000200000001', name: 'cache.miss', attributes: { 'cache.key': 'cart:42', 'cache.shard': 3 } },
        label,
      );
      assert.equal(root.events[1].name, 'exception', label);
      assert.equal(root.events[1].timeUnixNano, '1700000000300000002', label);
      assert.equal(root.events[1].attributes['exception.type'], 'PaymentError', label);
      assert.equal(root.events[1].attributes['exception.message'], 'card declined', label);

      assert.equal(child.links.length, 1, label);
      assert.deepEqual(
        pick(child.links[0], ['traceId', 'spanId', 'traceState', 'attributes']),
        {
          traceId: LINKED_TRACE_ID,
          spanId: 'b9c7c989f97918e1',
          traceState: 'vendor=value,other=1',
          attributes: { 'link.reason': 'batch', 'link.count': 2 },
        },
        label,
      );

      assert.equal(root.flags & 0xff, 1, `${label}: sampled flag`);
      assert.equal(typeof root.requestId === 'string' || typeof root.requestId === 'number', true, `${label}: span names its request`);
      assert.equal(root.resource['service.name'], SERVICE, label);
      assert.equal(root.resource['deployment.environment'], 'test', label);
      assert.equal(root.resource['host.cpu.count'], 2, label);
      assert.equal(root.service, SERVICE, label);
      assert.deepEqual(root.scope, { name: 'interop-tracer', version: '1.2.3', attributes: {} }, label);
    }
  });
});

describe('metrics through every wire', () => {
  /** @type {Awaited<ReturnType<typeof throughEveryWire>>} */
  let results;

  before(async () => {
    results = await throughEveryWire('metrics', 'metrics', await produceMetrics(), 6);
  });

  /** @param {any} m */
  const key = (m) => m.name;

  test('every wire stores identical metrics', () => {
    const [first, ...rest] = results;
    const reference = comparable(first.items, key);
    for (const r of rest) assert.deepEqual(comparable(r.items, key), reference, `${describeWire(r.config)} vs ${describeWire(first.config)}`);
  });

  test('the journal records transport, content type and compression', () => checkJournal(results, 'metrics'));

  test('the journal records the gRPC message encoding', () => checkGrpcEncodingJournal(results));

  test('types, temporality, values and timestamps round-trip exactly', () => {
    for (const { config, items } of results) {
      const label = describeWire(config);
      const byName = Object.fromEntries(items.map((m) => [m.name, m]));
      for (const m of items) {
        assert.equal(m.service, SERVICE, label);
        assert.equal(m.resource['service.name'], SERVICE, label);
        assert.deepEqual(m.scope, { name: 'interop-meter', version: '2.0.1', attributes: {} }, label);
        for (const p of m.dataPoints) {
          assert.match(p.timeUnixNano, /^\d{19}$/, `${label}: ${m.name} time is a nanosecond decimal string`);
          assert.equal(typeof p.attributes, 'object', label);
          assert.ok(!Array.isArray(p.attributes), `${label}: data point attributes are a plain object`);
        }
      }

      const counter = byName['interop.requests'];
      assert.equal(counter.type, 'sum', label);
      assert.equal(counter.isMonotonic, true, label);
      assert.equal(counter.aggregationTemporality, 2, `${label}: CUMULATIVE`);
      assert.equal(counter.description, 'requests served', label);
      assert.equal(counter.unit, '{request}', label);
      const byRoute = Object.fromEntries(counter.dataPoints.map((/** @type {any} */ p) => [p.attributes.route, p]));
      assert.equal(byRoute['/a'].asDouble, 7, label);
      assert.deepEqual(byRoute['/a'].attributes, { route: '/a', 'http.status_code': 200 }, label);
      assert.equal(byRoute['/b'].asDouble, 3, label);
      assert.match(byRoute['/a'].startTimeUnixNano, /^\d{19}$/, label);

      const bytes = byName['interop.bytes'];
      assert.equal(bytes.type, 'sum', label);
      assert.equal(bytes.dataPoints[0].asInt, '4096', `${label}: INT instruments give asInt as a decimal string`);

      const upDown = byName['interop.queue.depth'];
      assert.equal(upDown.type, 'sum', label);
      assert.equal(upDown.isMonotonic, false, label);
      assert.equal(upDown.dataPoints[0].asDouble, 6, label);

      const histogram = byName['interop.latency'];
      assert.equal(histogram.type, 'histogram', label);
      assert.equal(histogram.unit, 'ms', label);
      assert.equal(histogram.aggregationTemporality, 2, label);
      const hp = histogram.dataPoints[0];
      assert.equal(hp.count, '4', label);
      assert.equal(hp.sum, 1462.5, label);
      assert.equal(hp.min, 0.5, label);
      assert.equal(hp.max, 1200, label);
      assert.equal(hp.bucketCounts.length, hp.explicitBounds.length + 1, label);
      assert.ok(
        hp.bucketCounts.every((/** @type {unknown} */ c) => typeof c === 'string'),
        `${label}: bucket counts are decimal strings`,
      );
      assert.equal(
        hp.bucketCounts.reduce((/** @type {number} */ a, /** @type {string} */ c) => a + Number(c), 0),
        4,
        label,
      );

      const gauge = byName['interop.temperature'];
      assert.equal(gauge.type, 'gauge', label);
      assert.equal(gauge.dataPoints[0].asDouble, 21.5, label);
      assert.deepEqual(gauge.dataPoints[0].attributes, { room: 'lab' }, label);

      const observable = byName['interop.heap'];
      assert.equal(observable.type, 'gauge', label);
      const byKind = Object.fromEntries(observable.dataPoints.map((/** @type {any} */ p) => [p.attributes.kind, p]));
      assert.equal(byKind.heap.asDouble, 1048576, label);
      assert.equal(byKind.delta.asDouble, -1.25, label);
    }
  });
});

describe('logs through every wire', () => {
  /** @type {Awaited<ReturnType<typeof throughEveryWire>>} */
  let results;

  before(async () => {
    results = await throughEveryWire('logs', 'logs', await produceLogs(), 5);
  });

  /** @param {any} l */
  const key = (l) => l.timeUnixNano;

  test('every wire stores identical log records', () => {
    const [first, ...rest] = results;
    const reference = comparable(first.items, key);
    for (const r of rest) assert.deepEqual(comparable(r.items, key), reference, `${describeWire(r.config)} vs ${describeWire(first.config)}`);
  });

  test('the journal records transport, content type and compression', () => checkJournal(results, 'logs'));

  test('the journal records the gRPC message encoding', () => checkGrpcEncodingJournal(results));

  test('bodies, severities, trace context, event names and timestamps round-trip exactly', () => {
    for (const { config, items } of results) {
      const label = describeWire(config);
      const byTime = Object.fromEntries(items.map((l) => [l.timeUnixNano, l]));
      const info = byTime['1700000001000000001'];
      assert.ok(info, `${label}: nanosecond timestamp kept`);
      assert.equal(info.observedTimeUnixNano, '1700000001000000002', label);
      assert.equal(info.severityNumber, 9, label);
      assert.equal(info.severityText, 'INFO', label);
      assert.equal(info.body, 'user logged in', label);
      assert.deepEqual(info.attributes, RICH_ATTRIBUTES, `${label}: attributes`);
      assert.equal(info.traceId, TRACE_ID, label);
      assert.equal(info.spanId, SPAN_IDS[0], label);
      assert.equal(info.flags, 1, label);
      assert.equal(info.service, SERVICE, label);
      assert.deepEqual(info.scope, { name: 'interop-logger', version: '4.5.6', attributes: {} }, label);

      const error = byTime['1700000002999999999'];
      assert.equal(error.severityNumber, 17, label);
      assert.equal(error.eventName, 'payment.failure', label);
      assert.deepEqual(
        error.body,
        { message: 'payment failed', code: 402, retryable: false, tags: ['billing', 'card'], detail: { provider: 'acme', ratio: 0.25 } },
        label,
      );
      assert.equal(error.traceId, '', `${label}: no trace context`);
      assert.equal(error.spanId, '', label);

      assert.equal(byTime['1700000003000000000'].severityNumber, 1, label);
      assert.equal(byTime['1700000004000000000'].severityNumber, 24, label);
      assert.equal(byTime['1700000004000000000'].body, 12345, label);
      assert.equal(byTime['1700000005000000000'].body, true, label);
      assert.equal(byTime['1700000005000000000'].severityText, '', label);
    }
  });
});

describe('the SDK pipelines export on every wire', () => {
  for (const config of WIRE_CONFIGS) {
    const label = describeWire(config);
    const service = `pipeline-${config.wire}-${config.compression}`;

    test(`traces via BatchSpanProcessor and forceFlush (${label})`, async () => {
      const exporter = createExporter('traces', config, collector.urls);
      const provider = new BasicTracerProvider({ resource: resourceFor(service), spanProcessors: [new BatchSpanProcessor(exporter)] });
      const tracer = provider.getTracer('pipeline');
      const parent = tracer.startSpan('parent');
      const parentCtx = trace.setSpan(context.active(), parent);
      tracer.startSpan('child-1', {}, parentCtx).end();
      tracer.startSpan('child-2', { attributes: { n: 2 } }, parentCtx).end();
      parent.end();
      await provider.forceFlush();
      const spans = await collector.waitForCount('spans', `service=${service}&limit=100`, 3);
      await provider.shutdown();
      assert.equal(spans.length, 3);
      const stored = spans.find((s) => s.name === 'parent');
      assert.equal(stored?.spanId, parent.spanContext().spanId);
      for (const s of spans) assert.equal(s.traceId, parent.spanContext().traceId);
      assert.equal(spans.filter((s) => s.parentSpanId === stored.spanId).length, 2);
    });

    test(`metrics via PeriodicExportingMetricReader and forceFlush (${label})`, async () => {
      const exporter = createExporter('metrics', config, collector.urls);
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
      const provider = new MeterProvider({ resource: resourceFor(service), readers: [reader] });
      const meter = provider.getMeter('pipeline');
      meter.createCounter('pipeline.count').add(3, { wire: config.wire });
      meter.createHistogram('pipeline.size').record(17);
      await provider.forceFlush();
      const metrics = await collector.waitForCount('metrics', `service=${service}`, 2);
      await provider.shutdown();
      const count = metrics.find((m) => m.name === 'pipeline.count');
      assert.equal(count?.dataPoints[0].asDouble, 3);
      assert.deepEqual(count?.dataPoints[0].attributes, { wire: config.wire });
    });

    test(`logs via SimpleLogRecordProcessor and forceFlush (${label})`, async () => {
      const exporter = createExporter('logs', config, collector.urls);
      const provider = new LoggerProvider({ resource: resourceFor(service), processors: [new SimpleLogRecordProcessor({ exporter })] });
      const logger = provider.getLogger('pipeline');
      logger.emit({ severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: `hello over ${label}` });
      await provider.forceFlush();
      const logs = await collector.waitForCount('logs', `service=${service}`, 1);
      await provider.shutdown();
      assert.equal(logs[0].body, `hello over ${label}`);
      assert.equal(logs[0].severityNumber, 13);
    });
  }
});
