// The flame graph and trace comparison in real headless Chromium: spans too narrow to draw at the zoom are
// grouped into blocks that say how many spans and errors they stand for (they used to be left out without a
// word), and two traces are compared on one time scale with their errors marked, the second picked from a list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';
import { hex, postJson, traceRequest } from '../helpers/ui-data.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;

const NOW = Date.now();
const WIDE = 'f1'.repeat(16);
const SHORT = 'f2'.repeat(16);
const LONG = 'f3'.repeat(16);
const CALLS = 50;
const LEAVES = 25;

/** A 2 s root, 50 calls of 30 ms, each with 25 leaves of 1 ms (the first one of none); every 7th leaf failed. */
function wideTrace() {
  /** @type {import('../helpers/ui-data.js').SpanSpec[]} */
  const spans = [{ service: 'frontend', name: 'GET /cart', spanId: hex(1), startMs: NOW - 10_000, durMs: 2000 }];
  let id = 2;
  let leaf = 0;
  for (let c = 0; c < CALLS; c++) {
    const callId = hex(id++);
    const at = NOW - 10_000 + c * 40;
    spans.push({ service: 'checkout', name: `call ${c}`, spanId: callId, parentSpanId: hex(1), startMs: at, durMs: 30 });
    for (let l = 0; l < LEAVES; l++, leaf++)
      spans.push({ service: 'payment', name: 'SELECT', spanId: hex(id++), parentSpanId: callId, startMs: at + l, durMs: l === 0 ? 0 : 1, error: leaf % 7 === 0 });
  }
  return traceRequest(WIDE, spans);
}

/** @param {string} traceId @param {number} startMs @param {number} durMs @param {boolean} fail */
const checkout = (traceId, startMs, durMs, fail) =>
  traceRequest(traceId, [
    { service: 'shop', name: 'POST /checkout', spanId: hex(1), startMs, durMs },
    { service: 'payments', name: 'charge', spanId: hex(2), parentSpanId: hex(1), startMs: startMs + 5, durMs: durMs / 2, error: fail },
  ]);

test('a zoomed-out flame graph groups its tiny spans into blocks that count them and their errors', { skip }, async () => {
  await postJson(ui.collector.urls.http, 'traces', wideTrace());
  const { page } = ui;
  await page.goto(`${ui.collector.urls.ui}/traces/${WIDE}?view=flame`);
  const note = page.locator('.flame-hidden');
  await note.waitFor({ timeout: 10_000 });
  const leaves = CALLS * LEAVES;
  const errors = Math.ceil(leaves / 7);
  assert.equal(Number(await note.getAttribute('data-grouped')), leaves);
  assert.equal(Number(await note.getAttribute('data-group-errors')), errors);
  assert.match(await note.innerText(), new RegExp(`${errors} errors`));
  const groups = page.locator('.flame-group');
  const counted = await groups.evaluateAll((els) =>
    els.reduce((n, e) => [n[0] + Number(e.getAttribute('data-count')), n[1] + Number(e.getAttribute('data-errors'))], [0, 0]),
  );
  assert.deepEqual(counted, [leaves, errors]);
  assert.ok((await page.locator('.flame-group.is-error').count()) > 0);
  // Every call and the root are drawn on their own.
  assert.equal(await page.locator('.flame-block[data-span-id]').count(), CALLS + 1);

  const before = await groups.count();
  assert.equal(await page.locator('.flame-block[data-span-id][data-service="payment"]').count(), 0);
  await groups.first().click();
  await waitFor(async () => (await page.locator('.flame-block[data-span-id][data-service="payment"]').count()) > 0, { what: 'leaves drawn after zooming in' });
  assert.ok((await groups.count()) < before);
});

test('compare picks the second trace from a list, marks errors and draws both sides on one time scale', { skip }, async () => {
  await postJson(ui.collector.urls.http, 'traces', checkout(SHORT, NOW - 3000, 40, false));
  await postJson(ui.collector.urls.http, 'traces', checkout(LONG, NOW - 2000, 800, true));
  const { page } = ui;
  await page.goto(`${ui.collector.urls.ui}/traces/${SHORT}`);
  const pick = page.getByLabel('Compare with a trace of the same root');
  await waitFor(async () => (await pick.locator('option[data-trace-id]').count()) === 1, { what: 'the other checkout offered' });
  await pick.selectOption(LONG);
  await page.waitForURL(new RegExp(`compare=${LONG}`));
  const right = page.locator('[data-side="right"] .compare-row');
  await waitFor(async () => (await right.count()) === 2, { what: 'two spans on the right', timeoutMs: 10_000 });
  assert.equal(await page.locator('[data-side="right"] [data-error]').count(), 1);
  assert.equal(await page.locator('[data-side="left"] [data-error]').count(), 0);
  assert.equal(await page.locator('[data-side="right"] .compare-head [data-errors]').innerText(), '1 error');

  const widths = await page.$$eval('.compare-pane', (panes) =>
    panes.map((p) => {
      const bar = /** @type {HTMLElement} */ (p.querySelector('.compare-row .bar'));
      return bar.getBoundingClientRect().width / /** @type {HTMLElement} */ (bar.parentElement).getBoundingClientRect().width;
    }),
  );
  assert.ok(widths[1] > 0.95, `the longer root fills its cell: ${widths[1]}`);
  assert.ok(widths[0] < 0.1, `the 40 ms root is drawn 40/800 as long: ${widths[0]}`);
  assert.match(await page.locator('[data-side="right"] .compare-delta').first().innerText(), /^\s*\+/);
  assert.deepEqual(ui.pageErrors, []);
});
