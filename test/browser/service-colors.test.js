// A service's colour in real headless Chromium: given by the server in order of first arrival (GET /api/services,
// `color`), so it is the same in every view, after a reload, and in a new tab that shows the services in another
// order (colours were once handed out by the page, in the order it happened to show services).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { collectPageErrors } from '../../scripts/chromium.js';
import { waitFor } from '../helpers/wait.js';

const ui = browserSuite();
const skip = ui.skip;

const SERVICES = ['frontend', 'checkout', 'payment'];
// The UI's first palette colours (web/src/format.ts PALETTE), as the browser computes them.
const FIRST_COLORS = ['#3b82f6', '#f25d0d', '#2bab92'];

/** @param {string} service @param {number} i */
async function send(service, i) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const hex = (/** @type {number} */ n, /** @type {number} */ w) => n.toString(16).padStart(w, '0');
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: service } }] };
  const traces = {
    resourceSpans: [
      {
        resource,
        scopeSpans: [
          {
            scope: { name: 'colors' },
            spans: [
              {
                traceId: hex(0xc0 + i, 32),
                spanId: hex(i + 1, 16),
                name: `GET /${service}`,
                kind: 2,
                startTimeUnixNano: String(now),
                endTimeUnixNano: String(now + 2_000_000n),
              },
            ],
          },
        ],
      },
    ],
  };
  const logs = {
    resourceLogs: [
      {
        resource,
        scopeLogs: [{ scope: { name: 'colors' }, logRecords: [{ timeUnixNano: String(now), severityNumber: 9, body: { stringValue: `hello from ${service}` } }] }],
      },
    ],
  };
  for (const [path, body] of /** @type {const} */ ([
    ['/v1/traces', traces],
    ['/v1/logs', logs],
  ])) {
    const res = await fetch(`${ui.collector.urls.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
  }
}

/**
 * The colour each service is drawn in on a page, once every shown service has its colour; fails when one
 * service shows two colours.
 * @param {import('playwright-core').Page} page @param {string[]} expected services the page shows
 */
async function colorsOn(page, expected) {
  return waitFor(
    async () => {
      const shown = await page.evaluate(() =>
        [...document.querySelectorAll('[data-service]')].map((el) => [
          el.getAttribute('data-service') ?? '',
          getComputedStyle(el).getPropertyValue('--service-color').trim(),
        ]),
      );
      /** @type {Record<string, string>} */
      const byService = {};
      for (const [service, color] of shown) {
        if (!color || color === '#8b929c') return null;
        if (byService[service] && byService[service] !== color) throw new Error(`${service} is drawn in ${byService[service]} and ${color}`);
        byService[service] = color;
      }
      return expected.every((s) => s in byService) ? byService : null;
    },
    { timeoutMs: 10_000, what: `colours for ${expected.join(', ')}` },
  );
}

test('each service keeps the colour of its arrival order across views, reloads and a new tab', { skip }, async () => {
  for (const [i, service] of SERVICES.entries()) await send(service, i);
  const { services } = await ui.collector.api('/api/services');
  assert.deepEqual(Object.fromEntries(services.map((/** @type {any} */ s) => [s.name, s.color])), { frontend: 0, checkout: 1, payment: 2 });
  const want = Object.fromEntries(SERVICES.map((s, i) => [s, FIRST_COLORS[i]]));

  // A tab that shows payment first, then the others.
  const first = await ui.browser.newContext({ viewport: { width: 1300, height: 800 } });
  const page = await first.newPage();
  /** @type {string[]} */
  const errors = [];
  collectPageErrors(page, errors);
  await page.goto(`${ui.collector.urls.ui}/logs?service=payment`);
  assert.deepEqual(await colorsOn(page, ['payment']), { payment: want.payment });
  await page.goto(`${ui.collector.urls.ui}/traces`);
  assert.deepEqual(await colorsOn(page, SERVICES), want, 'the traces list');
  await page.screenshot({ path: '/tmp/service-colors-traces.png' });
  await page.goto(`${ui.collector.urls.ui}/logs`);
  assert.deepEqual(await colorsOn(page, SERVICES), want, 'the logs view');
  await page.reload();
  assert.deepEqual(await colorsOn(page, SERVICES), want, 'the logs view after a reload');
  assert.deepEqual(errors, []);

  // Another tab, which shows checkout first: the same colours.
  const second = await ui.browser.newContext({ viewport: { width: 1300, height: 800 } });
  const other = await second.newPage();
  await other.goto(`${ui.collector.urls.ui}/traces?service=checkout`);
  assert.deepEqual(await colorsOn(other, ['checkout']), { checkout: want.checkout });
  await other.goto(`${ui.collector.urls.ui}/logs`);
  assert.deepEqual(await colorsOn(other, SERVICES), want, 'the logs view of another tab');
  await first.close();
  await second.close();
});

test('a service that arrives while a page is open gets the next colour there too', { skip }, async () => {
  const context = await ui.browser.newContext({ viewport: { width: 1300, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${ui.collector.urls.ui}/logs`);
  await colorsOn(page, SERVICES);
  await send('shipping', 3);
  assert.equal((await colorsOn(page, [...SERVICES, 'shipping'])).shipping, '#cb0b7e');
  await context.close();
});
