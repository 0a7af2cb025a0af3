// What peers' UIs have, in real headless Chromium: operations per service, several attribute filters at once, a
// duration scatter plot of the listed traces, the critical path, per-trace statistics, the service map with the
// traces of an edge, and several filters on log records at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;
const NOW = Date.now();
const url = (/** @type {string} */ path) => `${ui.collector.urls.ui}${path}`;

/**
 * frontend GET /cart (100 ms) → checkout POST /checkout (90 ms) → payment charge (60 ms, failed in trace 2), and a
 * checkout "audit" span run while the charge was under way: off the critical path. @param {number} i
 */
function cart(i) {
  const at = NOW - 20_000 + i * 1000;
  return traceRequest(hex(0xb00 + i, 32), [
    { service: 'frontend', name: 'GET /cart', spanId: hex(1), startMs: at, durMs: 100, attrs: { 'user.tier': i % 2 ? 'gold' : 'free', region: 'eu' } },
    { service: 'checkout', name: 'POST /checkout', spanId: hex(2), parentSpanId: hex(1), startMs: at + 10, durMs: 90 },
    { service: 'checkout', name: 'audit', spanId: hex(3), parentSpanId: hex(2), startMs: at + 35, durMs: 10 },
    { service: 'payment', name: 'charge', spanId: hex(4), parentSpanId: hex(2), startMs: at + 30, durMs: 60, error: i === 2 },
  ]);
}

test('operations, several attribute filters, the scatter plot, the critical path and the statistics tab', { skip }, async () => {
  for (let i = 0; i < 4; i++) await postJson(ui.collector.urls.http, 'traces', cart(i));
  const { page } = ui;
  await page.goto(url('/traces?service=checkout'));
  const ops = page.getByLabel('Operation');
  await waitFor(async () => (await ops.locator('option').count()) === 3, { what: 'the checkout operations', timeoutMs: 10_000 });
  assert.deepEqual(await ops.locator('option').allTextContents(), ['All operations', 'POST /checkout (4)', 'audit (4)']);

  await page.goto(url('/traces?attr=user.tier%3Dgold%3B%20region%3Deu'));
  const rows = page.locator('.traces-table [data-trace-id]');
  await waitFor(async () => (await rows.count()) === 2, { what: 'the two gold traces', timeoutMs: 10_000 });
  await page.goto(url('/traces?attr=user.tier%3Dgold%3B%20region%3Dus'));
  await page.getByText('No trace matches these filters.').waitFor({ timeout: 10_000 });

  await page.goto(url('/traces'));
  const dots = page.locator('.scatter circle.dot');
  await waitFor(async () => (await dots.count()) === 4, { what: 'a dot per trace', timeoutMs: 10_000 });
  assert.equal(await page.locator('.scatter circle.dot.is-error').count(), 1);
  await page.locator(`.scatter circle[data-trace-id="${hex(0xb02, 32)}"]`).click();
  await page.waitForURL(new RegExp(`/traces/${hex(0xb02, 32)}`));

  await page.locator('.span-row').nth(3).waitFor({ timeout: 10_000 });
  const critical = await page.$$eval('.span-row', (els) => els.map((e) => [e.getAttribute('data-span-id'), e.classList.contains('critical')]));
  assert.deepEqual(critical, [
    [hex(1), true],
    [hex(2), true],
    [hex(4), true],
    [hex(3), false],
  ]);

  await page.locator('[data-view="stats"]').click();
  const table = page.getByRole('table', { name: 'Trace statistics' });
  await table.waitFor();
  const stats = await table
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-operation'), ...['count', 'total', 'self'].map((k) => tr.querySelector(`[data-stat="${k}"]`)?.textContent)]),
    );
  // Self time: GET /cart 100 − 90 = 10 ms; POST /checkout 90 − 60 (the charge, the audit within it) = 30 ms.
  assert.deepEqual(stats, [
    ['charge', '1', '60ms', '60ms'],
    ['POST /checkout', '1', '90ms', '30ms'],
    ['GET /cart', '1', '100ms', '10ms'],
    ['audit', '1', '10ms', '10ms'],
  ]);
});

test('the service map draws who calls whom, and an edge lists its traces', { skip }, async () => {
  const { page } = ui;
  await page.goto(url('/map'));
  const edges = page.locator('.map-edge');
  await waitFor(async () => (await edges.count()) === 2, { what: 'two edges', timeoutMs: 10_000 });
  assert.deepEqual((await edges.evaluateAll((els) => els.map((e) => [e.getAttribute('data-edge'), e.textContent]))).sort(), [
    ['checkout>payment', '4 calls · 1 failed'],
    ['frontend>checkout', '4 calls'],
  ]);
  assert.equal(await page.locator('.map-edge.has-errors').getAttribute('data-edge'), 'checkout>payment');
  // Left to right: frontend, checkout, payment.
  const xs = await page.$$eval('.map-node rect', (rs) => rs.map((r) => [r.parentElement?.getAttribute('data-service'), Number(r.getAttribute('x'))]));
  const x = Object.fromEntries(xs);
  assert.ok(x.frontend < x.checkout && x.checkout < x.payment, JSON.stringify(x));

  await page.locator('.map-edge[data-edge="checkout>payment"] .edge-hit').click({ force: true });
  await page.waitForURL(/edge=checkout%3Epayment|edge=checkout>payment/);
  const listed = page.locator('.edge-traces [data-trace-id]');
  await waitFor(async () => (await listed.count()) === 4, { what: 'the edge traces' });
  await page.locator('input[type="checkbox"]').check();
  await waitFor(async () => (await edges.count()) === 1, { what: 'the failed call only' });
  await waitFor(async () => (await listed.count()) === 1, { what: 'one trace' });
  await listed.click();
  await page.waitForURL(new RegExp(`/traces/${hex(0xb02, 32)}`));
});

test('log records filter on several attributes at once', { skip }, async () => {
  const record = (/** @type {string} */ body, /** @type {Record<string, string>} */ attrs) => ({
    timeUnixNano: ns(NOW - 1000),
    severityNumber: 9,
    body: { stringValue: body },
    attributes: kvs(attrs),
  });
  await postJson(ui.collector.urls.http, 'logs', {
    resourceLogs: [
      {
        resource: { attributes: kvs({ 'service.name': 'checkout' }) },
        scopeLogs: [
          {
            scope: { name: 'x' },
            logRecords: [
              record('paid by card in eu', { method: 'card', region: 'eu' }),
              record('paid by card in us', { method: 'card', region: 'us' }),
              record('invoice in eu', { method: 'invoice', region: 'eu' }),
            ],
          },
        ],
      },
    ],
  });
  const { page } = ui;
  await page.goto(url('/logs?attr=method%3Dcard%3Bregion%3Deu'));
  const rows = page.locator('.logs-table .log-grid[aria-expanded]');
  await waitFor(async () => (await rows.count()) === 1, { what: 'one record', timeoutMs: 10_000 });
  assert.match(await rows.innerText(), /paid by card in eu/);
  assert.deepEqual(ui.pageErrors, []);
});
