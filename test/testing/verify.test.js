// POST /api/verify: every kind of expectation met and unmet, with the failure text a test would show.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { startCollector } from '../../server/collector.js';
import { OtlpMockAssertionError } from '../../server/client/index.js';

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let mock;
/** @type {BasicTracerProvider} */
let tracing;

before(async () => {
  mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
  tracing = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${mock.urls.http}/v1/traces` }))],
  });
});
after(async () => {
  await tracing.shutdown();
  await mock.stop();
});
beforeEach(() => mock.client.clear());

/** The code under test: POST /pay (server) → charge card (client, an error) → SELECT (client, db.system=postgres). */
async function pay(amount = 42) {
  const tracer = tracing.getTracer('shop');
  const root = tracer.startSpan('POST /pay', { kind: SpanKind.SERVER, attributes: { 'http.route': '/pay', 'http.response.status_code': 200 } });
  const inRoot = trace.setSpan(context.active(), root);
  const charge = tracer.startSpan('charge card', { kind: SpanKind.CLIENT, attributes: { amount, 'card.brand': 'visa', tags: ['a', 'b'] } }, inRoot);
  const query = tracer.startSpan('SELECT accounts', { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgres' } }, trace.setSpan(inRoot, charge));
  query.end();
  charge.setStatus({ code: SpanStatusCode.ERROR, message: 'declined' });
  charge.end();
  root.end();
  await tracing.forceFlush();
}

/** @param {import('../../server/client/index.js').VerifyRequest} body */
const verify = (body) => mock.client.verify(body);

test('the plainest form, as the issue writes it: met, then unmet with the nearest candidate and what else arrived', async () => {
  await pay();
  const plain = { timeoutMs: 5000, expectations: [{ signal: /** @type {const} */ ('spans'), where: { service: 'checkout', name: 'POST /pay' }, count: { exactly: 1 } }] };
  const met = await verify(plain);
  assert.equal(met.ok, true, met.message);
  assert.equal(met.message, 'the expectation holds (after 0 ms)\n  ✓ spans with service=checkout, name=POST /pay: expected exactly 1, found 1');

  const unmet = await verify({ timeoutMs: 0, expectations: [{ signal: 'spans', where: { service: 'checkout', name: 'POST /payment' }, count: { exactly: 1 } }] });
  assert.equal(unmet.ok, false);
  const lines = unmet.message.split('\n');
  assert.equal(lines[0], '1 of 1 expectation not met (checked once: timeoutMs is 0)');
  assert.equal(lines[1], '  ✗ spans with service=checkout, name=POST /payment: expected exactly 1, found 0');
  assert.equal(lines[2], '      nearest:');
  assert.match(lines[3], /^ {8}span "(POST \/pay|charge card|SELECT accounts)" \(checkout, trace [0-9a-f]{8}\): name "[^"]+", wanted name=POST \/payment$/);
  assert.match(unmet.message, /\n {2}also stored, matched by no expectation:\n {4}3 spans — checkout: "(POST \/pay|SELECT accounts|charge card)", "/);
  assert.deepEqual(
    unmet.expectations[0].candidates[0].differs.map((d) => d.wanted),
    ['name=POST /payment'],
  );
});

test('counts: exactly, atLeast, atMost, none and a plain number, each met and unmet', async () => {
  await pay();
  await pay();
  const roots = { signal: /** @type {const} */ ('spans'), where: { name: 'POST /pay' } };
  const cases = [
    [{ exactly: 2 }, true, 'expected exactly 2, found 2'],
    [{ exactly: 1 }, false, 'expected exactly 1, found 2'],
    [2, true, 'expected exactly 2, found 2'],
    [{ atLeast: 2 }, true, 'expected at least 2, found 2'],
    [{ atLeast: 3 }, false, 'expected at least 3, found 2'],
    [{ atMost: 2 }, true, 'expected at most 2, found 2'],
    [{ atMost: 1 }, false, 'expected at most 1, found 2'],
    [{ atLeast: 1, atMost: 3 }, true, 'expected 1 to 3, found 2'],
    [{ none: true }, false, 'expected none, found 2'],
  ];
  for (const [count, ok, text] of cases) {
    const r = await verify({ expectations: [{ ...roots, count: /** @type {any} */ (count) }] });
    assert.equal(r.ok, ok, `${JSON.stringify(count)}: ${r.message}`);
    assert.ok(r.message.includes(`spans with name=POST /pay: ${text}`), r.message);
  }
  const tooMany = await verify({ expectations: [{ ...roots, count: { exactly: 1 } }] });
  assert.match(tooMany.message, /\n {6}found span "POST \/pay" \(checkout, trace [0-9a-f]{8}\)\n {6}found span "POST \/pay"/);
  const none = await verify({ expectations: [{ signal: 'spans', where: { name: 'refund' }, count: { none: true } }] });
  assert.equal(none.ok, true, none.message);
});

test('attribute operators: equals, notEquals, contains, matches, exists, greaterThan, lessThan, atLeast, atMost', async () => {
  await pay(42);
  /** @type {[Record<string, any>, boolean, string][]} */
  const cases = [
    [{ 'card.brand': 'visa' }, true, ''],
    [{ 'card.brand': 'amex' }, false, 'card.brand "visa", wanted card.brand=amex'],
    [{ 'card.brand': { notEquals: 'amex' } }, true, ''],
    [{ 'card.brand': { notEquals: 'visa' } }, false, 'card.brand "visa", wanted card.brand!=visa'],
    [{ 'card.brand': { contains: 'is' } }, true, ''],
    [{ tags: { contains: 'b' } }, true, ''],
    [{ tags: { contains: 'c' } }, false, 'tags ["a","b"], wanted tags contains "c"'],
    [{ 'card.brand': { matches: '^v.s' } }, true, ''],
    [{ 'card.brand': { matches: '^mc' } }, false, 'card.brand "visa", wanted card.brand matches /^mc/'],
    [{ 'card.brand': { exists: true } }, true, ''],
    [{ 'card.cvv': { exists: false } }, true, ''],
    [{ 'card.cvv': { exists: true } }, false, 'card.cvv absent, wanted card.cvv present'],
    [{ amount: { greaterThan: 40 } }, true, ''],
    [{ amount: { greaterThan: 42 } }, false, 'amount 42, wanted amount>42'],
    [{ amount: { lessThan: 43, atLeast: 42, atMost: 42 } }, true, ''],
    [{ amount: { lessThan: 10 } }, false, 'amount 42, wanted amount<10'],
  ];
  for (const [attributes, ok, differs] of cases) {
    const r = await verify({ expectations: [{ signal: 'spans', where: { name: 'charge card' }, attributes, count: 1 }] });
    assert.equal(r.ok, ok, `${JSON.stringify(attributes)}: ${r.message}`);
    if (!ok) assert.ok(r.message.includes(`span "charge card" (checkout, trace `) && r.message.includes(`: ${differs}`), `${JSON.stringify(attributes)}:\n${r.message}`);
  }
});

test('kind, status, root, childOf and descendantOf, met and unmet, and duration bounds through where', async () => {
  await pay();
  /** @type {[Record<string, any>, boolean, string][]} */
  const cases = [
    [{ where: { name: 'POST /pay' }, kind: 'server', root: true }, true, ''],
    [{ where: { name: 'POST /pay' }, kind: 'client' }, false, 'kind server, wanted kind=client'],
    [{ where: { name: 'charge card' }, status: 'error' }, true, ''],
    [{ where: { name: 'charge card' }, status: 'ok' }, false, 'status error, wanted status=ok'],
    [{ where: { name: 'charge card' }, root: true }, false, 'a child span, wanted root'],
    [{ attributes: { 'db.system': 'postgres' }, childOf: { where: { name: 'charge card' }, status: 'error' } }, true, ''],
    [{ attributes: { 'db.system': 'postgres' }, childOf: { where: { name: 'POST /pay' } } }, false, 'parent "charge card" (checkout), wanted child of (name=POST /pay)'],
    [{ attributes: { 'db.system': 'postgres' }, descendantOf: { kind: 'server', attributes: { 'http.route': '/pay' } } }, true, ''],
    [{ attributes: { 'db.system': 'postgres' }, descendantOf: { kind: 'consumer' } }, false, 'wanted descendant of (kind=consumer)'],
    [{ where: { name: 'POST /pay', maxDurationMs: 60000 } }, true, ''],
    [{ where: { name: 'POST /pay', minDurationMs: 60000 } }, false, ', wanted minDurationMs=60000'],
  ];
  for (const [selector, ok, differs] of cases) {
    const r = await verify({ expectations: [{ signal: 'spans', ...selector }] });
    assert.equal(r.ok, ok, `${JSON.stringify(selector)}: ${r.message}`);
    if (!ok) assert.ok(r.message.includes(differs), `${JSON.stringify(selector)}:\n${r.message}`);
  }
});

test('logs and data points, met and unmet; nothingElse names what no expectation accounts for', async () => {
  const logs = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${mock.urls.http}/v1/logs` }) })],
  });
  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${mock.urls.http}/v1/metrics` }), exportIntervalMillis: 3_600_000 });
  const meters = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'checkout' }), readers: [reader] });
  try {
    logs.getLogger('shop').emit({ severityNumber: 17, severityText: 'ERROR', body: 'card declined', attributes: { 'order.id': 'o-1' } });
    logs.getLogger('shop').emit({ severityNumber: 9, severityText: 'INFO', body: 'order placed' });
    meters.getMeter('shop').createCounter('orders').add(3, { outcome: 'declined' });
    await logs.forceFlush();
    await meters.forceFlush();

    const met = await verify({
      timeoutMs: 5000,
      expectations: [
        { signal: 'logs', where: { service: 'checkout', severity: 17, body: 'declined' }, attributes: { 'order.id': { matches: '^o-' } }, count: 1 },
        { signal: 'metrics', where: { name: 'orders' }, attributes: { outcome: 'declined' } },
      ],
    });
    assert.equal(met.ok, true, met.message);

    const unmet = await verify({
      expectations: [
        { name: 'the decline is logged as a warning', signal: 'logs', where: { severity: 13, maxSeverity: 16 }, count: 1 },
        { signal: 'metrics', where: { name: 'orders' }, attributes: { outcome: 'paid' } },
      ],
    });
    assert.equal(unmet.ok, false);
    assert.match(unmet.message, /✗ the decline is logged as a warning: log records with severity>=13, severity<=16: expected exactly 1, found 0/);
    assert.match(unmet.message, /log "card declined" \(checkout, severity 17\): severity 17, wanted severity<=16/);
    assert.match(unmet.message, /data point of "orders" \(checkout, \{"outcome":"declined"\}\): outcome "declined", wanted outcome=paid/);

    const onlyErrors = await verify({ nothingElse: 'checkout', expectations: [{ signal: 'logs', where: { severity: 17 } }] });
    assert.equal(onlyErrors.ok, false);
    assert.match(onlyErrors.message, /^unexpected items from checkout \(checked once: timeoutMs is 0\)/);
    assert.match(onlyErrors.message, /✗ nothing else from checkout, but:\n {6}log "order placed" \(checkout, severity 9\)/);
    const everything = await verify({
      nothingElse: ['checkout'],
      expectations: [
        { signal: 'logs', where: { severity: 17 } },
        { signal: 'logs', where: { maxSeverity: 16 } },
      ],
    });
    assert.equal(everything.ok, true, everything.message);
  } finally {
    await logs.shutdown();
    await meters.shutdown();
  }
});

test('waits on the server until every expectation holds, and answers as the span arrives', async () => {
  const started = Date.now();
  const pending = verify({ timeoutMs: 20000, expectations: [{ signal: 'spans', where: { name: 'SELECT accounts' }, descendantOf: { root: true, kind: 'server' } }] });
  await pay();
  const r = await pending;
  assert.equal(r.ok, true, r.message);
  assert.ok(Date.now() - started < 10000);
  const timedOut = await verify({ timeoutMs: 300, expectations: [{ signal: 'spans', where: { name: 'never' } }] });
  assert.equal(timedOut.ok, false);
  assert.match(timedOut.message, /^1 of 1 expectation not met after 300 ms/);
});

test('the client: expect() throws the server message; mistakes are 400s that name the field', async () => {
  await pay();
  await mock.client.expect([{ signal: 'spans', where: { name: 'charge card' }, status: 'error' }]);
  await assert.rejects(mock.client.expect([{ signal: 'spans', where: { name: 'refund' } }]), (err) => {
    assert.ok(err instanceof OtlpMockAssertionError);
    assert.match(err.message, /✗ spans with name=refund: expected at least 1, found 0/);
    return true;
  });
  /** @type {[any, RegExp][]} */
  const mistakes = [
    [{ expectations: [{ signal: 'spans', where: { servcie: 'checkout' } }] }, /expectations\[0\]\.where: unknown parameter 'servcie'; did you mean 'service'\?/],
    [{ expectations: [{ signal: 'traces' }] }, /expectations\[0\]\.signal: must be one of spans, logs, metrics, profiles/],
    [{ expectations: [{ signal: 'spans', count: { exact: 1 } }] }, /expectations\[0\]\.count\.exact: unknown; count takes exactly, atLeast, atMost, none/],
    [{ expectations: [{ signal: 'logs', kind: 'server' }] }, /expectations\[0\]\.kind: unknown field \(only spans have kind\)/],
    [{ expectations: [{ signal: 'spans', attributes: { a: { like: 'x' } } }] }, /expectations\[0\]\.attributes\.a\.like: unknown operator/],
    [{ expectations: [{ signal: 'spans', where: { minCount: 2 } }] }, /expectations\[0\]\.where\.minCount: chooses a page or waits/],
    [{ expectations: [{ signal: 'spans', childOf: { kind: 'sever' } }] }, /expectations\[0\]\.childOf\.kind: must be a span kind/],
    [{ expectations: [] }, /expectations: must be a list of at least one expectation/],
  ];
  for (const [body, message] of mistakes) {
    await assert.rejects(mock.client.verify(body), (err) => {
      assert.equal(/** @type {any} */ (err).status, 400);
      assert.match(/** @type {Error} */ (err).message, message);
      return true;
    });
  }
});

test('"also stored" names the five largest services and counts the rest, so that the line adds up to its total', async () => {
  // Eight services: service i has i + 1 spans, 36 in all; three services (6 spans) go unnamed.
  const resourceSpans = Array.from({ length: 8 }, (_, i) => ({
    resource: { attributes: [{ key: 'service.name', value: { stringValue: `svc-${i}` } }] },
    scopeSpans: [
      {
        spans: Array.from({ length: i + 1 }, (_, j) => ({
          traceId: (i * 16 + j + 1).toString(16).padStart(32, '0'),
          spanId: (j + 1).toString(16).padStart(16, '0'),
          name: `op ${i}`,
          kind: 1,
          startTimeUnixNano: '1000',
          endTimeUnixNano: '2000',
        })),
      },
    ],
  }));
  const imported = await fetch(`${mock.urls.ui}/api/import?signal=traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    body: JSON.stringify({ resourceSpans }),
  });
  assert.equal(imported.status, 200, await imported.text());
  const unmet = await verify({ timeoutMs: 0, expectations: [{ signal: 'spans', where: { name: 'nothing like it' } }] });
  const line = unmet.message.split('\n').find((l) => l.includes('36 spans —'));
  assert.equal(
    line,
    '    36 spans — svc-7: "op 7" ×8; svc-6: "op 6" ×7; svc-5: "op 5" ×6; svc-4: "op 4" ×5; svc-3: "op 3" ×4; 3 more services with 6 spans',
    unmet.message,
  );
});
