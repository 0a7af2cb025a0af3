// Logs, metrics, requests and resources in real headless Chromium: attribute filters, histogram
// percentiles, series toggles, time windows, exemplars, units, the request body as a searchable tree
// with links to what it carried, and a page per service instance.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing, launchChromium, collectPageErrors } from '../../scripts/chromium.js';
import { startTestCollector } from '../helpers/collector.js';
import { waitFor } from '../helpers/wait.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';
import { buildWeb } from '../../scripts/build-web.js';

const skip = chromiumMissing;

const NOW = Date.now();
const TRACE = 'ee'.repeat(16);

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {import('playwright-core').Browser} */
let browser;
/** @type {import('playwright-core').Page} */
let page;
/** @type {string[]} */
const pageErrors = [];

const resource = (/** @type {Record<string, any>} */ extra) => ({
  attributes: kvs({ 'service.name': 'api', 'telemetry.sdk.name': 'opentelemetry', 'telemetry.sdk.language': 'go', 'telemetry.sdk.version': '1.30.0', ...extra }),
});

function metrics() {
  const at = (/** @type {number} */ ago) => ns(NOW - ago);
  return {
    resourceMetrics: [
      {
        resource: resource({ 'service.instance.id': 'api-1' }),
        scopeMetrics: [
          {
            scope: { name: 'ui-test' },
            metrics: [
              {
                name: 'req.duration',
                unit: 's',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    { startTimeUnixNano: at(60_000), timeUnixNano: at(40_000), count: '10', sum: 3, explicitBounds: [0.1, 0.5, 1], bucketCounts: ['0', '10', '0', '0'] },
                    {
                      startTimeUnixNano: at(60_000),
                      timeUnixNano: at(20_000),
                      count: '20',
                      sum: 10.5,
                      explicitBounds: [0.1, 0.5, 1],
                      bucketCounts: ['0', '10', '10', '0'],
                      exemplars: [{ timeUnixNano: at(25_000), asDouble: 0.8, traceId: TRACE, spanId: hex(1) }],
                    },
                  ],
                },
              },
              {
                name: 'payload.size',
                unit: 'By',
                exponentialHistogram: {
                  aggregationTemporality: 1,
                  dataPoints: [40_000, 20_000].map((ago) => ({
                    startTimeUnixNano: at(ago + 10_000),
                    timeUnixNano: at(ago),
                    count: '8',
                    sum: 20,
                    scale: 0,
                    zeroCount: '0',
                    positive: { offset: 0, bucketCounts: ['4', '4'] },
                  })),
                },
              },
              {
                name: 'mem.used',
                unit: 'By',
                gauge: {
                  dataPoints: [
                    { timeUnixNano: ns(NOW - 3 * 86_400_000), asInt: '1000000', attributes: kvs({ pool: 'a' }) },
                    ...[30_000, 20_000, 10_000].flatMap((ago, i) => [
                      { timeUnixNano: at(ago), asInt: String((5 + i) * 1024 * 1024), attributes: kvs({ pool: 'a' }) },
                      { timeUnixNano: at(ago), asInt: String((20 + i) * 1024 * 1024), attributes: kvs({ pool: 'b' }) },
                    ]),
                  ],
                },
              },
              {
                name: 'http.requests',
                unit: '{request}',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [30_000, 20_000].map((ago, i) => ({ startTimeUnixNano: at(60_000), timeUnixNano: at(ago), asInt: String(120_000 + i * 50_000) })),
                },
              },
            ],
          },
        ],
      },
    ],
  };
}

function logs() {
  return {
    resourceLogs: [
      {
        resource: resource({ 'service.instance.id': 'api-2' }),
        scopeLogs: [
          {
            scope: { name: 'ui-test' },
            logRecords: [
              {
                timeUnixNano: ns(NOW - 5000),
                severityNumber: 9,
                body: { stringValue: 'paid by card' },
                attributes: kvs({ 'payment.method': 'card' }),
                traceId: TRACE,
                spanId: hex(1),
              },
              { timeUnixNano: ns(NOW - 4000), severityNumber: 9, body: { stringValue: 'paid by invoice' }, attributes: kvs({ 'payment.method': 'invoice' }) },
            ],
          },
        ],
      },
    ],
  };
}

before(async () => {
  if (skip) return;
  await buildWeb({ log: () => {} });
  collector = await startTestCollector();
  const http = collector.urls.http;
  await postJson(http, 'metrics', metrics());
  await postJson(http, 'logs', logs());
  await postJson(http, 'traces', {
    resourceSpans: traceRequest(TRACE, [
      { service: 'api', name: 'GET /orders', spanId: hex(1), startMs: NOW - 6000, durMs: 30 },
      { service: 'api', name: 'SELECT orders', spanId: hex(2), parentSpanId: hex(1), startMs: NOW - 5990, durMs: 10 },
    ]).resourceSpans.map((rs) => ({ ...rs, resource: resource({ 'service.instance.id': 'api-1' }) })),
  });
  collector.faults.add({ action: 'throttle', signals: ['logs'], times: 1, retryAfterMs: 1000 });
  await fetch(`${http}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(logs()) });
  await collector.waitForCount('requests', '', 4);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  collectPageErrors(page, pageErrors);
});

after(async () => {
  await browser?.close();
  await collector?.stop();
});

const total = () => page.locator('.toolbar .total').innerText();

test('the Logs view filters on any attribute', { skip }, async () => {
  await page.goto(`${collector.urls.ui}/logs`);
  await waitFor(async () => (await total()) === '2 records', { what: 'two records', timeoutMs: 10_000 });
  await page.getByLabel('Attribute').fill('payment.method=invoice');
  await page.waitForURL(/attr=payment.method%3Dinvoice/);
  await waitFor(async () => (await total()) === '1 record', { what: 'one record' });
  assert.match(await page.locator('.log-grid.tr').first().innerText(), /paid by invoice/);
  await page.getByLabel('Attribute').fill('payment.method');
  await waitFor(async () => (await total()) === '2 records', { what: 'both have the attribute' });
  assert.deepEqual(pageErrors, []);
});

/** @param {string} series */
const values = async (series) =>
  ((await page.locator(`[data-chart="percentiles"] polyline[data-series="${series}"]`).getAttribute('data-values')) ?? '')
    .split(' ')
    .map((v) => +Number(v).toPrecision(9))
    .join(' ');

test('histograms show P50/P90/P99 over time from explicit and exponential buckets, with exemplars linked to traces', { skip }, async () => {
  await page.goto(`${collector.urls.ui}/metrics/api/req.duration`);
  await page.locator('[data-chart="percentiles"] polyline').first().waitFor({ state: 'attached', timeout: 10_000 });
  // Cumulative: the first point counts 10 values in (0.1, 0.5]; the second adds 10 in (0.5, 1].
  assert.equal(await values('P50'), '0.3 0.75');
  assert.equal(await values('P90'), '0.46 0.95');
  // Seconds on the axis and in the facts.
  const axis = await page.locator('[data-chart="percentiles"] .y-label').allTextContents();
  assert.ok(
    axis.some((l) => /ms$/.test(l)),
    `axis labels ${axis.join(' | ')}`,
  );
  const exemplar = page.locator(`[data-chart="percentiles"] [data-exemplar="/traces/${TRACE}?span=${hex(1)}"]`);
  assert.equal(await exemplar.count(), 1);
  await exemplar.click();
  await page.waitForURL(new RegExp(`/traces/${TRACE}\\?span=${hex(1)}$`));

  await page.goto(`${collector.urls.ui}/metrics/api/payload.size`);
  await page.locator('[data-chart="percentiles"] polyline').first().waitFor({ state: 'attached', timeout: 10_000 });
  // Buckets (1, 2] and (2, 4] with 4 values each.
  assert.equal(await values('P50'), '2 2');
  assert.equal(await values('P90'), '3.6 3.6');
  const buckets = await page.locator('svg[aria-label="Bucket counts"] text').allTextContents();
  assert.ok(buckets.includes('2 B') && buckets.includes('4 B'), `bucket labels ${buckets.join(' | ')}`);
  assert.deepEqual(pageErrors, []);
});

test('charts show units, keep their axis labels inside, toggle series from the legend and take a time window', { skip }, async () => {
  await page.goto(`${collector.urls.ui}/metrics/api/mem.used`);
  const lines = page.locator('.chart polyline');
  await waitFor(async () => (await lines.count()) === 2, { what: 'two lines', timeoutMs: 10_000 });
  const labels = await page.locator('.chart .y-label').allTextContents();
  assert.ok(
    labels.some((l) => / MiB$/.test(l)),
    `byte labels: ${labels.join(' | ')}`,
  );
  const lefts = await page.locator('.chart .y-label').evaluateAll((els) => els.map((e) => /** @type {SVGTextElement} */ (e).getBBox().x));
  assert.ok(
    lefts.every((x) => x >= 0),
    `labels start inside the chart: ${lefts.join(', ')}`,
  );
  assert.equal(await page.locator('.chart-legend .legend-item').count(), 2);

  await page.locator('.chart-legend .legend-item[data-series="pool=a"]').click();
  await waitFor(async () => (await lines.count()) === 1, { what: 'pool=a hidden' });
  assert.equal(await lines.first().getAttribute('data-series'), 'pool=b');
  await page.locator('.chart-legend .legend-item[data-series="pool=a"]').click();
  await waitFor(async () => (await lines.count()) === 2, { what: 'pool=a back' });
  const all = await page.locator('polyline[data-series="pool=a"]').getAttribute('data-values');
  assert.equal(all?.split(' ').length, 4);

  await page.getByLabel('Time range').selectOption({ label: 'Last hour' });
  await page.waitForURL(/from=\d{13}/);
  await waitFor(async () => (await page.locator('polyline[data-series="pool=a"]').getAttribute('data-values'))?.split(' ').length === 3, {
    what: 'the old point left out',
  });

  await page.goto(`${collector.urls.ui}/metrics/api/http.requests`);
  await page.locator('.chart polyline').first().waitFor({ timeout: 10_000 });
  const counts = await page.locator('.chart .y-label').allTextContents();
  assert.ok(
    counts.every((l) => l === '0' || / requests$/.test(l)),
    `request labels: ${counts.join(' | ')}`,
  );
  assert.ok(
    counts.some((l) => /^\d+(\.\d+)?k requests$/.test(l)),
    `compact labels: ${counts.join(' | ')}`,
  );
  assert.deepEqual(pageErrors, []);
});

test('a request shows its body as a folding tree with search, links what it carried, and the fault column fits', { skip }, async () => {
  await page.goto(`${collector.urls.ui}/requests?signal=traces`);
  await page.locator('.req-grid.tr').first().click();
  await page.locator('.json-tree').waitFor({ timeout: 10_000 });
  const search = page.getByLabel('Search the body');
  await search.fill('select orders');
  await page.locator('[data-hits="1"]').waitFor();
  assert.equal(await page.locator('.json-tree mark').innerText(), 'SELECT orders');
  // A branch folds; search results unfold it again.
  await search.fill('');
  const first = page.locator('.jt-node .jt-toggle').nth(1);
  await first.click();
  assert.equal(await first.getAttribute('aria-expanded'), 'false');
  await page.locator(`[data-carried="trace"]`).click();
  await page.waitForURL(new RegExp(`/traces/${TRACE}$`));

  await page.goto(`${collector.urls.ui}/requests?signal=logs&outcome=accepted`);
  await page.locator('.req-grid.tr').first().click();
  await page.locator('[data-carried="logs"]').click();
  await page.waitForURL(/\/logs\?request=\d+$/);
  await waitFor(async () => (await total()) === '2 records', { what: "the request's records" });

  await page.goto(`${collector.urls.ui}/requests?outcome=faulted`);
  const cell = page.locator('.req-grid.tr .td').last();
  await cell.waitFor({ timeout: 10_000 });
  const fit = await cell.evaluate((el) => ({ whole: el.scrollWidth <= el.clientWidth, right: el.getBoundingClientRect().right, text: el.textContent }));
  assert.ok(fit.whole && fit.right <= 1440, `fault cell ${JSON.stringify(fit)}`);
  assert.match(fit.text ?? '', /^throttle f\d+$/);
  assert.deepEqual(pageErrors, []);
});

test('the Resources page lists each instance with its SDK, user agent and counts, linked to its data', { skip }, async () => {
  await page.goto(`${collector.urls.ui}/resources`);
  const rows = page.locator('.resource-row');
  await waitFor(async () => (await rows.count()) === 2, { what: 'two instances', timeoutMs: 10_000 });
  const one = rows.filter({ hasText: 'service.instance.id=api-1' });
  assert.match(await one.innerText(), /opentelemetry go 1\.30\.0/);
  assert.match(await one.locator('td.num').nth(0).innerText(), /^2$/);
  assert.match(await one.locator('td.num').nth(2).innerText(), /^\d+$/);
  await one.click();
  await page.locator('[data-user-agent]').first().waitFor();
  await one.locator('[data-link="traces"]').click();
  await page.waitForURL(/\/traces\?service=api&attr=service.instance.id%3Dapi-1$/);
  await waitFor(async () => (await total()) === '1 trace', { what: "the instance's trace" });

  await page.goto(`${collector.urls.ui}/resources`);
  await rows.filter({ hasText: 'service.instance.id=api-2' }).locator('[data-link="logs"]').click();
  await page.waitForURL(/\/logs\?service=api&attr=service.instance.id%3Dapi-2$/);
  await waitFor(async () => (await total()) === '2 records', { what: "the instance's records" });
  assert.deepEqual(pageErrors, []);
});

test('bidirectional controls in telemetry show as visible marks, so a name reads as it was sent', { skip }, async () => {
  const traceId = 'bd'.repeat(16);
  const rlo = '\u202e';
  const request = traceRequest(traceId, [{ service: `inv${rlo}oice`, name: `open ${rlo}gnp.exe`, spanId: hex(9), startMs: NOW - 1000, durMs: 5 }]);
  request.resourceSpans[0].scopeSpans[0].spans[0].attributes = kvs({ [`file${rlo}.name`]: `${rlo}txt.sh` });
  await postJson(collector.urls.http, 'traces', request);
  await page.goto(`${collector.urls.ui}/traces/${traceId}`);
  const name = page.locator('.span-name').first();
  await name.waitFor({ timeout: 10_000 });
  assert.equal(await name.innerText(), 'open ⟨U+202E⟩gnp.exe');
  await page.locator(`[data-span-id="${hex(9)}"]`).click();
  const panel = page.getByRole('complementary', { name: 'Span details' });
  await panel.getByText('⟨U+202E⟩txt.sh', { exact: true }).waitFor({ timeout: 5000 });
  assert.match(await panel.innerText(), /file⟨U\+202E⟩\.?\s*name/);
  assert.doesNotMatch(await page.locator('body').innerText(), /\u202e/, 'no raw control character is on the page');
  assert.deepEqual(pageErrors, []);
});
