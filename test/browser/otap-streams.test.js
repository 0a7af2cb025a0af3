// The Requests view in real headless Chromium with streams from the Go OTAP client: one row per stream among the
// other requests, open then closed as it refetches live, and a stream's row opening to its batches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { otapClient, otapSkip } from '../helpers/otap-client.js';
import { waitFor } from '../helpers/wait.js';
import { postJson } from '../helpers/ui-data.js';

const ui = browserSuite({ page: true });
const send = otapClient();
const skip = ui.skip || otapSkip;
const SHOTS = process.env.OTLP_MOCK_SCREENSHOT_DIR ?? '/tmp';

test('the Requests view shows each OTAP stream as one row, live, that opens to its batches', { skip }, async () => {
  const { page, collector } = ui;
  await send(collector, ['-signal', 'traces', '-batches', '60', '-size', '5', '-streams', '2']);
  await postJson(collector.urls.http, 'logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'one request' } }] }] }] });
  const lingering = send(collector, ['-signal', 'logs', '-batches', '20', '-size', '5', '-linger', '3s']);
  await waitFor(async () => (await collector.api('/api/requests?group=streams')).total === 4);

  await page.goto(`${collector.urls.ui}/requests`);
  const open = page.locator('.stream-row[data-stream-state="open"]');
  await open.waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('.stream-row').count(), 3);
  assert.equal(await page.locator('[data-request-id]').count(), 1);
  assert.equal(await page.locator('.total').getAttribute('data-total'), '4');
  assert.match(await open.innerText(), /20 batches[\s\S]*logs[\s\S]*open/);
  await page.screenshot({ path: `${SHOTS}/otlp-mock-otap-stream-open.png` });

  // Its client half-closes: the row says so without a reload.
  await lingering;
  await page.locator('.stream-row[data-stream-state="closed"]').nth(2).waitFor({ timeout: 10_000 });
  assert.equal(await open.count(), 0);
  assert.match(await page.locator('.stream-row').first().innerText(), /20 batches[\s\S]*closed/);
  await page.screenshot({ path: `${SHOTS}/otlp-mock-otap-stream-closed.png` });

  // A stream's row opens its batches: each a request row as before, under what the stream was.
  const traces = page.locator('.stream-row', { hasText: 'traces' }).first();
  const id = await traces.getAttribute('data-stream-id');
  await traces.click();
  await page.waitForURL(new RegExp(`stream=${id}`));
  await page.locator('.stream-summary .badge.ok').waitFor({ timeout: 10_000 });
  assert.match(await page.locator('.stream-summary').innerText(), /stream #\d+[\s\S]*closed[\s\S]*traces[\s\S]*60 batches · 300 items/);
  await waitFor(async () => (await page.locator('.total').getAttribute('data-total')) === '60');
  assert.equal(await page.locator('.stream-row').count(), 0);
  const first = page.locator('[data-request-id]').first();
  assert.match(await first.innerText(), /otap #59[\s\S]*arrow[\s\S]*traces[\s\S]*0 OK/);
  await page.screenshot({ path: `${SHOTS}/otlp-mock-otap-stream-batches.png` });

  // A batch's page names its stream, and leads back to it.
  await first.click();
  await page.locator(`[data-stream-link="${id}"]`).click();
  await page.waitForURL(new RegExp(`/requests\\?stream=${id}$`));
  await page.locator('.stream-summary .badge.ok').waitFor({ timeout: 10_000 });

  // Escape goes back to the list of streams.
  await page.keyboard.press('Escape');
  await page.locator('.stream-row').first().waitFor();
  assert.doesNotMatch(page.url(), /stream=/);
  assert.deepEqual(ui.pageErrors, []);
});
