// What an open view asks the server for as telemetry arrives (docs/ui.md, Live updates), in real headless
// Chromium: a list at its top asks only for the rows in view (after its first page, even when the feed's `watching`
// answer came while that page was on its way), scrolled down it keeps the rows it has, and the
// Metrics view asks for its list again when a metric appears, not for every new point of one it shows; the header's
// figures come over the feed, not from GET /api/stats.
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { kvs, ns, postJson } from '../helpers/ui-data.js';
import { waitFor } from '../helpers/wait.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;
const NOW = Date.now();

/** `count` records of one service, the newest `newest` ms ago. @param {string} service @param {number} count @param {number} newest */
const records = (service, count, newest) => ({
  resourceLogs: [
    {
      resource: { attributes: kvs({ 'service.name': service }) },
      scopeLogs: [
        {
          scope: { name: 'live-refetch' },
          logRecords: Array.from({ length: count }, (_, i) => ({ timeUnixNano: ns(NOW - newest - i), severityNumber: 9, body: { stringValue: `${service} ${i}` } })),
        },
      ],
    },
  ],
});

/** One point of a gauge. @param {string} name @param {number} value */
const gauge = (name, value) => ({
  resourceMetrics: [
    {
      resource: { attributes: kvs({ 'service.name': 'live-refetch' }) },
      scopeMetrics: [{ scope: { name: 'live-refetch' }, metrics: [{ name, unit: '1', gauge: { dataPoints: [{ timeUnixNano: ns(Date.now()), asDouble: value }] } }] }],
    },
  ],
});

/** The requests the page makes whose path starts with `path`, as URLs, from now on. @param {string} path */
function asked(path) {
  /** @type {URL[]} */
  const urls = [];
  ui.page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.pathname === path) urls.push(url);
  });
  return urls;
}

/** How many of `urls` there are once a refetch interval (1 s) passes without another. @param {URL[]} urls */
async function settled(urls) {
  for (;;) {
    const count = urls.length;
    await delay(1200);
    if (urls.length === count) return count;
  }
}

/** The live feed's `changed` notices the page receives from now on. */
function notices() {
  /** @type {any[]} */
  const out = [];
  ui.page.on('websocket', (ws) =>
    ws.on('framereceived', ({ payload }) => {
      const msg = JSON.parse(String(payload));
      if (msg.type === 'changed') out.push(msg);
    }),
  );
  return out;
}

test('a list at its top asks only for the rows in view as records arrive; scrolled down, for the rows it holds and those above them', { skip }, async () => {
  await postJson(ui.collector.urls.http, 'logs', records('older', 400, 60_000));
  const logs = asked('/api/logs');
  await ui.page.goto(`${ui.collector.urls.ui}/logs`);
  await waitFor(async () => (await ui.page.locator('.toolbar .total').innerText()) === '400 records', { what: 'the records shown' });

  let seen = logs.length;
  await postJson(ui.collector.urls.http, 'logs', records('arrived', 30, 0));
  await waitFor(async () => (await ui.page.locator('.toolbar .total').innerText()) === '430 records', { what: 'the new records counted' });
  // On a loaded machine the count was seen before the test heard of the request (a clean-clone CI run: none yet).
  await waitFor(() => logs.length > seen, { what: 'the list asked for again' });
  const atTop = logs.slice(seen).map((u) => Number(u.searchParams.get('limit')));
  const inView = await ui.page.locator('.logs-table .vrow').count();
  assert.ok(inView > 0 && inView < 100, `the rows drawn are those in view and a few below, not a first page: ${inView}`);
  assert.ok(atTop.length > 0 && atTop.every((limit) => limit === inView), `asked for the ${inView} rows drawn: ${atTop}`);
  assert.match(await ui.page.locator('.logs-table .tr').nth(1).innerText(), /arrived/, 'the newest records are at the top');

  // Scrolled halfway down, the list loads the rows there (a next page, with a cursor); what arrives above them is asked for too.
  seen = logs.length;
  await ui.page.locator('.logs-table .vlist').evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  await waitFor(() => logs.slice(seen).some((u) => u.searchParams.has('cursor')), { what: 'rows further down asked for' });
  await waitFor(async () => !(await ui.page.locator('.logs-table').innerText()).includes('Loading…'), { what: 'rows further down shown' });
  seen = logs.length;
  await postJson(ui.collector.urls.http, 'logs', records('arrived.later', 10, -1000));
  await waitFor(async () => (await ui.page.locator('.toolbar .total').innerText()) === '440 records', { what: 'the later records counted' });
  const scrolled = logs.slice(seen).map((u) => Number(u.searchParams.get('limit')));
  assert.ok(scrolled.length > 0 && scrolled.every((limit) => limit >= 210), `asked for the rows held and those above them: ${scrolled}`);
  assert.deepEqual(ui.pageErrors, []);
});

test('a watch answered while the first page is on its way refetches only the rows drawn, not a first page again', { skip }, async () => {
  await postJson(ui.collector.urls.http, 'logs', records('first.page', 300, 120_000));
  const logs = asked('/api/logs');
  let held = true;
  // The first page's answer waits for the live feed's `watching` answer, which asks every watched list once more.
  const isList = (/** @type {URL} */ url) => url.pathname === '/api/logs';
  await ui.page.route(isList, async (route) => {
    if (held) {
      held = false;
      await ui.page.locator('.live-controls [data-status="live"]').waitFor();
    }
    await route.continue();
  });
  try {
    await ui.page.goto(`${ui.collector.urls.ui}/logs`);
    await ui.page.locator('.logs-table .vrow .tr:not(.placeholder)').first().waitFor();
    await settled(logs);
  } finally {
    await ui.page.unroute(isList);
  }
  const limits = logs.map((u) => Number(u.searchParams.get('limit')));
  const inView = await ui.page.locator('.logs-table .vrow').count();
  assert.ok(inView > 0 && inView < 100, `rows drawn: ${inView}`);
  assert.deepEqual(limits, [100, inView], 'a first page, then the rows drawn');
  assert.deepEqual(ui.pageErrors, []);
});

test('the Metrics view asks for its list when a metric appears, not for each new point of a metric it lists', { skip }, async () => {
  await postJson(ui.collector.urls.http, 'metrics', gauge('refetch.listed', 1));
  const lists = asked('/api/metrics');
  const changed = notices();
  await ui.page.goto(`${ui.collector.urls.ui}/metrics`);
  await ui.page.locator('.metric-item', { hasText: 'refetch.listed' }).waitFor();
  await waitFor(() => lists.length > 0, { what: 'the list asked for' });
  // Once the feed answers the view's watch, the view asks again for what arrived meanwhile, up to a refetch
  // interval later: counted, that ask made a loaded machine's run see two lists where one was asked for.
  await ui.page.locator('.live-controls [data-status="live"]').waitFor();
  const before = await settled(lists);
  for (let value = 2; value <= 3; value++) {
    const seen = changed.length;
    await postJson(ui.collector.urls.http, 'metrics', gauge('refetch.listed', value));
    const notice = await waitFor(() => changed.slice(seen).find((m) => m.feeds.metrics?.added), { what: 'a notice of the new point' });
    assert.equal(notice.feeds.metrics.metrics, 0, 'a point of a metric already stored is no new metric');
  }
  await postJson(ui.collector.urls.http, 'metrics', gauge('refetch.arrived', 1));
  await ui.page.locator('.metric-item', { hasText: 'refetch.arrived' }).waitFor();
  assert.equal(lists.length - before, 1, 'one list asked for: the one that shows the new metric');
  assert.deepEqual(ui.pageErrors, []);
});

test("the header's figures come over the live feed as telemetry arrives; the page never asks GET /api/stats", { skip }, async () => {
  const stats = asked('/api/stats');
  await ui.page.goto(`${ui.collector.urls.ui}/requests`);
  await ui.page.locator('.live-controls [data-status="live"]').waitFor();
  const logsCount = ui.page.locator('.counts .count-item[data-signal="logs"] b');
  const before = Number((await ui.collector.api('/api/stats')).signals.logs.stored);
  await waitFor(async () => (await logsCount.innerText()) === String(before), { what: 'the stored records in the header' });
  await postJson(ui.collector.urls.http, 'logs', records('header', 3, 1000));
  // Stats are sent every 2 s when they changed.
  await waitFor(async () => (await logsCount.innerText()) === String(before + 3), { timeoutMs: 5000, what: 'the new records in the header' });
  assert.equal(stats.length, 0, 'no ask of GET /api/stats');
  assert.deepEqual(ui.pageErrors, []);
});
