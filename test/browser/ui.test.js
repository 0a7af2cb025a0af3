// The web UI in real headless Chromium: telemetry sent by the official exporters while the page is open
// shows up without a reload, traces open as waterfalls, a fault added in the UI shapes the next export,
// and hostile attribute values stay text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing, launchChromium, collectPageErrors } from '../../scripts/chromium.js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { startTestCollector } from '../helpers/collector.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';
import { waitFor } from '../helpers/wait.js';
import { buildWeb } from '../../scripts/build-web.js';
import { protoBody } from '../../bench/workload.js';
import { postOtlp } from '../helpers/http.js';

const XSS = '<img src=x onerror=alert(1)>';

const skip = chromiumMissing;

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {import('playwright-core').Browser} */
let browser;
/** @type {import('playwright-core').Page} */
let page;
/** @type {string[]} */
const dialogs = [];
/** @type {string[]} */
const pageErrors = [];

const resource = resourceFromAttributes({ 'service.name': 'ui-test-shop', 'service.version': '1.0.0' });

/** Spans made by the SDK, kept in memory so the test decides when and over which wire they are exported. */
function makeTrace() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('ui-test', '1.0.0');
  const root = tracer.startSpan('GET /checkout', { kind: SpanKind.SERVER, attributes: { 'http.route': '/checkout' } }, ROOT_CONTEXT);
  const child = tracer.startSpan(
    `charge ${XSS}`,
    { kind: SpanKind.CLIENT, attributes: { 'payment.note': XSS, 'payment.amount': 42.5 } },
    trace.setSpan(ROOT_CONTEXT, root),
  );
  child.addEvent('retry', { attempt: 2 });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'card declined' });
  child.end();
  root.end();
  return { spans: memory.getFinishedSpans(), traceId: root.spanContext().traceId, childId: child.spanContext().spanId };
}

/** @param {string} traceId */
function makeLogs(traceId) {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('ui-test');
  const context = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1 });
  logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'ui-test order accepted', context });
  logger.emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: `ui-test payment failed ${XSS}`, context });
  return memory.getFinishedLogRecords();
}

before(async () => {
  if (skip) return;
  await buildWeb({ log: () => {} });
  collector = await startTestCollector();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  collectPageErrors(page, pageErrors);
  await page.goto(`${collector.urls.ui}/traces`);
  await page.waitForSelector('[data-status="live"]', { timeout: 10_000 });
  // A reload would lose this marker: every later check proves the data came in live.
  await page.evaluate(() => {
    /** @type {any} */ (window).__sameDocument = true;
  });
});

after(async () => {
  await browser?.close();
  await collector?.stop();
});

async function sameDocument() {
  assert.equal(await page.evaluate(() => /** @type {any} */ (window).__sameDocument), true, 'the page was reloaded');
}

/** @type {ReturnType<typeof makeTrace>} */
let sent;

test('a trace exported while the page is open appears in the traces list without a reload', { skip }, async () => {
  sent = makeTrace();
  await exportOrThrow(createExporter('traces', { wire: 'proto', compression: 'none' }, collector.urls), sent.spans);
  const row = page.locator(`[data-trace-id="${sent.traceId}"]`);
  await row.waitFor({ timeout: 5000 });
  assert.match(await row.innerText(), /GET \/checkout/);
  assert.match(await row.innerText(), /ui-test-shop/);
  await sameDocument();
});

test('logs and metrics exported while their views are open appear live', { skip }, async () => {
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  await page.waitForURL(/\/logs$/);
  await exportOrThrow(createExporter('logs', { wire: 'grpc', compression: 'gzip' }, collector.urls), makeLogs(sent.traceId));
  await page.getByText('ui-test order accepted').waitFor({ timeout: 5000 });
  await page.getByText(`ui-test payment failed ${XSS}`).waitFor({ timeout: 5000 });

  await page.getByRole('link', { name: 'Metrics', exact: true }).click();
  await page.waitForURL(/\/metrics$/);
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({ exporter: createExporter('metrics', { wire: 'json', compression: 'none' }, collector.urls), exportIntervalMillis: 60_000 }),
    ],
  });
  const orders = meterProvider.getMeter('ui-test').createCounter('ui_test.orders', { unit: '{order}', description: 'orders placed' });
  orders.add(3, { region: 'eu' });
  orders.add(1, { region: 'us' });
  await meterProvider.forceFlush();
  await meterProvider.shutdown();
  const item = page.locator('.metric-item', { hasText: 'ui_test.orders' });
  await item.waitFor({ timeout: 5000 });
  await item.click();
  await page.locator('.chart svg polyline').first().waitFor({ state: 'attached', timeout: 5000 });
  // forceFlush and shutdown each export the cumulative counts: one point or two per line, of one value.
  const lines = await page
    .locator('.chart svg polyline')
    .evaluateAll((els) => els.map((l) => [l.getAttribute('data-series'), [...new Set(l.getAttribute('data-values')?.split(' '))]]));
  assert.deepEqual(
    lines,
    [
      ['region=eu', ['3']],
      ['region=us', ['1']],
    ],
    'one line per attribute set, with its own value',
  );
  await sameDocument();
});

test('the trace opens as a waterfall; hostile attribute values render as text and run nothing', { skip }, async () => {
  await page.getByRole('link', { name: 'Traces', exact: true }).click();
  await page.locator(`[data-trace-id="${sent.traceId}"]`).click();
  await page.waitForURL(new RegExp(`/traces/${sent.traceId}$`));
  await waitFor(async () => (await page.locator('.span-row').count()) === 2, { what: 'two waterfall rows' });
  const rows = await page.locator('.span-row .span-name').allInnerTexts();
  assert.deepEqual(rows, ['GET /checkout', `charge ${XSS}`]);

  await page.locator(`[data-span-id="${sent.childId}"]`).click();
  const panel = page.getByRole('complementary', { name: 'Span details' });
  await panel.getByText(XSS, { exact: true }).waitFor({ timeout: 5000 });
  assert.match(await panel.innerText(), /card declined/);
  assert.match(await panel.innerText(), /retry/);
  assert.equal(await page.locator('img[src="x"]').count(), 0, 'no element was created from the attribute value');
  assert.deepEqual(dialogs, [], 'no dialog opened');
});

test('a throttle rule added in the Faults view answers the next export with 429, shown in the Requests view', { skip }, async () => {
  await page.getByRole('link', { name: 'Faults', exact: true }).click();
  await page.getByRole('button', { name: 'throttle', exact: true }).click();
  await page.getByLabel('Times').fill('1');
  await page.getByRole('button', { name: 'Add throttle rule' }).click();
  const rule = page.locator('[data-rule-id]');
  await rule.waitFor({ timeout: 5000 });
  const [stored] = collector.faults.list();
  assert.equal(stored.action, 'throttle');
  assert.equal(stored.times, 1);

  const before = (await collector.api('/api/requests?limit=1')).requests[0]?.id ?? 0;
  // The exporter retries the 429 after the rule's Retry-After, and the retry is accepted.
  await exportOrThrow(createExporter('traces', { wire: 'proto', compression: 'gzip' }, collector.urls), makeTrace().spans);
  const after = (await collector.api('/api/requests?signal=traces')).requests.filter((/** @type {any} */ r) => r.id > before).reverse();
  assert.deepEqual(
    after.map((/** @type {any} */ r) => [r.response.status, r.fault?.action ?? null]),
    [
      [429, 'throttle'],
      [200, null],
    ],
  );
  await waitFor(async () => /\b1\b/.test(await rule.locator('td').nth(7).innerText()), { what: 'the rule to count one application' });

  await page.getByRole('link', { name: 'Requests', exact: true }).click();
  const faulted = page.locator(`[data-request-id="${after[0].id}"]`);
  await faulted.waitFor({ timeout: 5000 });
  assert.match(await faulted.innerText(), /429/);
  assert.match(await faulted.innerText(), /throttle/);
  await faulted.click();
  await page.getByText('too many requests', { exact: false }).first().waitFor({ timeout: 5000 });
  await page.locator('.json-tree').waitFor({ timeout: 5000 });
  assert.match(await page.locator('.json-tree').innerText(), /resourceSpans: \[/);
  await sameDocument();
  assert.deepEqual(dialogs, []);
  assert.deepEqual(pageErrors, []);
});

test('the traces list counts every stored trace, as the server does, and the oldest one opens whole', { skip }, async () => {
  // 24 requests of 512 spans, in traces of 8 spans: more than one page of the list holds.
  for (let seed = 1; seed <= 24; seed++) {
    const res = await postOtlp(collector.urls.http, '/v1/traces', protoBody(seed), 'application/x-protobuf');
    assert.equal(res.status, 200);
  }
  const stored = await collector.api('/api/traces?limit=100000');
  assert.ok(stored.total > 1000, `${stored.total} traces stored`);
  await page.goto(`${collector.urls.ui}/traces`);
  await page.getByText(`${stored.total.toLocaleString('en-US')} traces`, { exact: true }).waitFor({ timeout: 10_000 });

  // The page loaded one page of rows; the oldest trace still opens, whole, from the server.
  assert.ok((await page.locator('[data-trace-id]').count()) < stored.total);
  const oldest = stored.traces[0];
  await page.goto(`${collector.urls.ui}/traces/${oldest.traceId}`);
  await waitFor(async () => (await page.locator('.span-row').count()) === oldest.spanCount, { what: `${oldest.spanCount} waterfall rows` });
  assert.deepEqual(pageErrors, []);
});

test('logs that arrive after a view fetched but before the live feed watches it still show: the watch starts with a refetch', { skip }, async () => {
  const late = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  collectPageErrors(late, pageErrors);
  /** @type {() => void} */
  let release = () => {};
  const released = new Promise((resolve) => (release = () => resolve(undefined)));
  /** @type {() => void} */
  let watchHeld = () => {};
  const watchSent = new Promise((resolve) => (watchHeld = () => resolve(undefined)));
  // The page's watch reaches the server only once the logs are stored: the notice for them goes to nobody.
  await late.routeWebSocket(/\/api\/live/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage(async (message) => {
      if (String(message).includes('"watch"')) {
        watchHeld();
        await released;
      }
      server.send(message);
    });
  });
  const firstFetch = late.waitForResponse(/\/api\/logs\b/);
  await late.goto(`${collector.urls.ui}/logs`);
  await Promise.all([firstFetch, watchSent]);
  assert.equal(await late.getByText('ui-test late record').count(), 0);

  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  provider.getLogger('ui-test').emit({ severityNumber: SeverityNumber.INFO, body: 'ui-test late record' });
  await exportOrThrow(createExporter('logs', { wire: 'proto', compression: 'none' }, collector.urls), memory.getFinishedLogRecords());
  release();

  await late.getByText('ui-test late record').waitFor({ timeout: 5000 });
  await late.close();
  assert.deepEqual(pageErrors, []);
});
