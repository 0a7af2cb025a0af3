// The smaller things a daily user reads in real headless Chromium: span kind in the waterfall, flags in words,
// icons that need no emoji font, the opened log record and the chart's series and mode in the URL, histogram
// series overlaid and opened on a live one, metric entries told apart by their whole scope, the Requests
// view's service column and filter, a failing tee's reason, and the trace list's services in a stable order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;
const NOW = Date.now();

const post = (/** @type {string} */ signal, /** @type {any} */ body) => postJson(ui.collector.urls.http, signal, body);
const url = (/** @type {string} */ path) => `${ui.collector.urls.ui}${path}`;

test('a client span and the server span it caused differ in the waterfall; flags read as words', { skip }, async () => {
  const trace = 'd1'.repeat(16);
  const body = traceRequest(trace, [
    { service: 'frontend', name: 'POST', spanId: hex(1), startMs: NOW - 5000, durMs: 30 },
    { service: 'frontend', name: 'POST', spanId: hex(2), parentSpanId: hex(1), startMs: NOW - 4995, durMs: 20 },
  ]);
  const [root, client] = body.resourceSpans[0].scopeSpans[0].spans;
  Object.assign(client, { kind: 3, flags: 769 });
  Object.assign(root, { kind: 2, flags: 1 });
  await post('traces', body);
  const { page } = ui;
  await page.goto(url(`/traces/${trace}?span=${hex(2)}`));
  await page.locator('.span-row').nth(1).waitFor({ timeout: 10_000 });
  assert.deepEqual(await page.$$eval('.span-row', (rows) => rows.map((r) => r.querySelector('[data-kind]')?.getAttribute('data-kind'))), ['server', 'client']);
  assert.equal(await page.locator('[data-flags="769"]').innerText(), 'sampled, parent remote');
  // No glyph that needs an emoji font: the toolbar's icons are SVG.
  assert.ok((await page.locator('button svg.icon[data-icon="download"]').count()) === 1);
});

test('the opened log record and the chart mode are in the URL, and icons are SVG', { skip }, async () => {
  const resource = { attributes: kvs({ 'service.name': 'checkout' }) };
  await post('logs', {
    resourceLogs: [
      {
        resource,
        scopeLogs: [{ scope: { name: 'x' }, logRecords: [{ timeUnixNano: ns(NOW - 1000), severityNumber: 9, body: { stringValue: 'order placed' }, flags: 1 }] }],
      },
    ],
  });
  const { page } = ui;
  await page.goto(url('/logs'));
  await page.getByText('order placed').click();
  await page.waitForURL(/open=/);
  await page.reload();
  const link = page.locator('[data-action="record-link"]');
  await link.waitFor({ timeout: 10_000 });
  assert.equal(await link.locator('svg.icon').count(), 1);
  assert.doesNotMatch(await link.innerText(), /\p{Extended_Pictographic}/u);
  assert.equal(await page.locator('[data-flags="1"]').innerText(), 'sampled');

  const points = [10, 20, 40].map((v, i) => ({ startTimeUnixNano: ns(NOW - 60_000), timeUnixNano: ns(NOW - 30_000 + i * 10_000), asInt: String(v) }));
  await post('metrics', {
    resourceMetrics: [
      {
        resource,
        scopeMetrics: [{ scope: { name: 'x' }, metrics: [{ name: 'orders', unit: '1', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: points } }] }],
      },
    ],
  });
  await page.goto(url('/metrics/checkout/orders'));
  await page.getByRole('button', { name: 'Rate /s' }).click();
  await page.waitForURL(/mode=rate/);
  await page.reload();
  await page.locator('button.on', { hasText: 'Rate /s' }).waitFor({ timeout: 10_000 });
});

/** A histogram point of 10 values in one bucket. @param {number} at @param {number} v */
const hpoint = (at, v, attrs = {}) => ({
  startTimeUnixNano: ns(NOW - 600_000),
  timeUnixNano: ns(at),
  count: '10',
  sum: v * 10,
  min: v,
  max: v,
  explicitBounds: [1, 10, 100],
  bucketCounts: ['0', '10', '0', '0'],
  attributes: kvs(attrs),
});

test('a histogram opens on a series still being sent, overlays others, and keeps them in the URL', { skip }, async () => {
  /** @param {string} instance @param {any[]} dataPoints */
  const of = (instance, dataPoints) => ({
    resource: { attributes: kvs({ 'service.name': 'payment', 'service.instance.id': instance }) },
    scopeMetrics: [
      {
        scope: { name: 'io.opentelemetry.instrumentation.http-server-with-a-long-name' },
        metrics: [{ name: 'latency', unit: 'ms', histogram: { aggregationTemporality: 2, dataPoints } }],
      },
    ],
  });
  // "a-old" stopped 5 minutes ago; "b-live" sends every 10 s.
  await post('metrics', {
    resourceMetrics: [of('a-old', [hpoint(NOW - 320_000, 5), hpoint(NOW - 310_000, 5)]), of('b-live', [hpoint(NOW - 20_000, 5), hpoint(NOW - 10_000, 5)])],
  });
  // The same metric name from another scope whose name differs only at its end.
  await post('metrics', {
    resourceMetrics: [
      {
        resource: { attributes: kvs({ 'service.name': 'payment', 'service.instance.id': 'b-live' }) },
        scopeMetrics: [
          {
            scope: { name: 'io.opentelemetry.instrumentation.http-server-with-a-long-name-v2' },
            metrics: [{ name: 'latency', unit: 'ms', histogram: { aggregationTemporality: 2, dataPoints: [hpoint(NOW - 10_000, 5)] } }],
          },
        ],
      },
    ],
  });
  const { page } = ui;
  await page.goto(url('/metrics?service=payment'));
  const scopes = page.locator('.metric-scope');
  await waitFor(async () => (await scopes.count()) === 2, { what: 'two entries with their scope', timeoutMs: 10_000 });
  const shown = await scopes.evaluateAll((els) => els.map((e) => ({ text: e.getAttribute('data-scope'), cut: e.scrollWidth > e.clientWidth })));
  assert.deepEqual(
    shown.map((s) => s.cut),
    [false, false],
  );
  assert.notEqual(shown[0].text, shown[1].text);

  await page.locator('.metric-item', { has: page.locator('[data-scope$="long-name"]') }).click();
  const on = page.locator('.histogram-series button.on');
  await on.first().waitFor({ timeout: 10_000 });
  assert.equal(await on.count(), 1);
  assert.match(await on.innerText(), /b-live/);
  await page.locator('.histogram-series button', { hasText: 'a-old' }).click();
  await waitFor(async () => (await page.locator('[data-chart="percentiles"] polyline').count()) === 6, { what: 'two series of three percentiles' });
  assert.equal(new URL(page.url()).searchParams.getAll('series').length, 2);
  await page.reload();
  await waitFor(async () => (await page.locator('.histogram-series button.on').count()) === 2, { what: 'both series after a reload', timeoutMs: 10_000 });
});

test('requests show and filter by service; a failing tee says why; a trace lists its services in one order', { skip }, async () => {
  const a = 'e1'.repeat(16);
  const b = 'e2'.repeat(16);
  // The same three services, whose spans arrive in another order in each trace.
  const spans = (/** @type {string[]} */ order) =>
    order.map((service, i) => ({ service, name: `op ${service}`, spanId: hex(i + 1), parentSpanId: i ? hex(1) : '', startMs: NOW - 2000 + i, durMs: 5 }));
  await post('traces', traceRequest(a, spans(['frontend', 'checkout', 'payment'])));
  await post('traces', traceRequest(b, spans(['frontend', 'payment', 'checkout'])));
  const { page } = ui;
  await page.goto(url('/traces?service=frontend'));
  const rows = page.locator(`.traces-table [data-trace-id="${a}"], .traces-table [data-trace-id="${b}"]`);
  await waitFor(async () => (await rows.count()) === 2, { what: 'both traces', timeoutMs: 10_000 });
  const chips = await rows.evaluateAll((els) => els.map((e) => [...e.querySelectorAll('.chip')].map((c) => c.textContent).join(',')));
  assert.deepEqual(chips, ['frontend,checkout,payment', 'frontend,checkout,payment']);

  await page.goto(url('/requests'));
  await page.locator('[data-services="payment"]').first().waitFor({ timeout: 10_000 });
  await page.selectOption('select[aria-label="Service"]', 'checkout');
  await page.waitForURL(/service=checkout/);
  await waitFor(
    async () => {
      const services = await page.$$eval('.req-grid[data-request-id] [data-services]', (els) => els.map((e) => e.getAttribute('data-services')));
      return services.length > 0 && services.every((s) => s?.split(',').includes('checkout'));
    },
    { what: 'only requests that carried checkout' },
  );

  // A target on a port nobody listens on: the client is answered an error, and the target says why.
  await ui.collector.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://127.0.0.1:9' }) });
  const res = await fetch(`${ui.collector.urls.http}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(traceRequest('e3'.repeat(16), spans(['frontend']))),
  });
  assert.notEqual(res.status, 200);
  await page.goto(url('/forward'));
  const failure = page.locator('.forward-failure');
  await failure.waitFor({ timeout: 10_000 });
  assert.match(await failure.innerText(), /last failed.*ECONNREFUSED/s);
  assert.deepEqual(ui.pageErrors, []);
});
