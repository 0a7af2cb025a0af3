// A test that clears the collector in-process (`collector.store.clear()`, `collector.journal.clear()`) empties
// every open page as DELETE /api/telemetry does: the live feed hears it from the store and the journal, not
// from a route. Real headless Chromium, pages left open, no reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCollector } from 'otlp-mock';
import { chromiumMissing, launchChromium, collectPageErrors } from '../../scripts/chromium.js';
import { buildWeb } from '../../scripts/build-web.js';
import { waitFor } from '../helpers/wait.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';

const skip = chromiumMissing;
const NOW = Date.now();

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let collector;
/** @type {import('playwright-core').Browser} */
let browser;
/** @type {string[]} */
const pageErrors = [];

/** @param {number} n */
const trace = (n) =>
  traceRequest(hex(n, 32), [
    { service: 'shop', name: 'GET /cart', spanId: hex(1), startMs: NOW - 3000, durMs: 40 },
    { service: 'shop', name: 'SELECT cart', spanId: hex(2), parentSpanId: hex(1), startMs: NOW - 2990, durMs: 10 },
  ]);

const logs = {
  resourceLogs: [
    {
      resource: { attributes: kvs({ 'service.name': 'shop' }) },
      scopeLogs: [
        {
          scope: { name: 'clear-test' },
          logRecords: [1, 2, 3].map((i) => ({ timeUnixNano: ns(NOW - i * 1000), severityNumber: 9, body: { stringValue: `record ${i}` } })),
        },
      ],
    },
  ],
};

before(async () => {
  if (skip) return;
  await buildWeb({ log: () => {} });
  collector = await startCollector({ host: '127.0.0.1' });
  for (const n of [1, 2]) await postJson(collector.urls.http, 'traces', trace(n));
  await postJson(collector.urls.http, 'logs', logs);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await collector?.stop();
});

/** Opens a view and marks its document, so that a reload (which would make a new one) shows. @param {string} path */
async function open(path) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  collectPageErrors(page, pageErrors);
  await page.goto(`${collector.urls.ui}${path}`);
  await page.evaluate(() => Object.assign(window, { openedOnce: true }));
  return {
    page,
    total: () => page.locator('.toolbar .total').innerText(),
    reloaded: async () => !(await page.evaluate(() => 'openedOnce' in window)),
  };
}

test('store.clear() and journal.clear() in-process empty the open Traces, Logs and Requests views without a reload', { skip }, async () => {
  const traces = await open('/traces');
  const records = await open('/logs');
  const requests = await open('/requests');
  await waitFor(async () => (await traces.total()) === '2 traces', { what: 'two traces shown', timeoutMs: 10_000 });
  await waitFor(async () => (await records.total()) === '3 records', { what: 'three records shown', timeoutMs: 10_000 });
  await waitFor(async () => (await requests.total()) === '3 requests', { what: 'three requests shown', timeoutMs: 10_000 });

  collector.store.clear();
  await waitFor(async () => (await traces.total()) === '0 traces', { what: 'the Traces view emptied', timeoutMs: 10_000 });
  await waitFor(async () => (await records.total()) === '0 records', { what: 'the Logs view emptied', timeoutMs: 10_000 });
  assert.equal(await requests.total(), '3 requests', 'the journal was not cleared');

  collector.journal.clear();
  await waitFor(async () => (await requests.total()) === '0 requests', { what: 'the Requests view emptied', timeoutMs: 10_000 });

  await postJson(collector.urls.http, 'traces', trace(3));
  await waitFor(async () => (await traces.total()) === '1 trace', { what: 'a trace sent after the clearing shown', timeoutMs: 10_000 });
  for (const view of [traces, records, requests]) assert.equal(await view.reloaded(), false, `${view.page.url()} was reloaded`);
  assert.deepEqual(pageErrors, []);
});
