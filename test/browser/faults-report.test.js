// The Faults view shows each rule's retry report: the verdict by the OTLP retry rules, and the gaps measured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { postOtlp } from '../helpers/http.js';
import { spans } from '../testing/data.js';
import { waitFor } from '../helpers/wait.js';

// A batch not retried is "waiting" 1.5 s before "did not retry" (8.5 s by default), so a test can see both.
const ui = browserSuite({ collector: { retryWindowMs: 1500 } });
const skip = ui.skip;

test('a rule whose 429 was retried at once shows "retried too soon" with the gap; one not yet hit shows no report', { skip }, async () => {
  const rule = await ui.collector.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 3000 });
  const idle = await ui.collector.client.faults.add({ action: 'reject', signals: 'logs' });
  const body = JSON.stringify(spans('checkout', ['POST /pay']));
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/traces', body, 'application/json')).status, 429);
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/traces', body, 'application/json')).status, 200);

  const page = await ui.browser.newPage();
  await page.goto(`${ui.collector.urls.ui}/faults`);
  const report = page.locator(`[data-report-for="${rule.id}"]`);
  await report.waitFor({ timeout: 10_000 });
  assert.equal(await report.locator('.badge').textContent(), 'retried too soon');
  assert.equal(await report.locator('.badge.error').count(), 1);
  assert.match(
    /** @type {string} */ (await report.textContent()),
    /HTTP 429: retryable, Retry-After 3 s, but it waited only \d+ ms; 2 attempts, gaps \d+ ms; delivered on attempt 2/,
  );
  assert.equal(await page.locator(`[data-report-for="${idle.id}"]`).count(), 0);
  await page.close();
});

test('a rule the server refuses is explained in words next to the form, not as raw JSON', { skip }, async () => {
  const page = await ui.browser.newPage();
  await page.goto(`${ui.collector.urls.ui}/faults`);
  await page.getByLabel('Probability').fill('7');
  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  const error = page.locator('.fault-form .error-text');
  await error.waitFor({ timeout: 10_000 });
  const text = /** @type {string} */ (await error.textContent());
  assert.match(text, /probability/);
  assert.doesNotMatch(text, /^\s*\{/, "the server's message, not its JSON body");
  await page.close();
});

test("a batch's attempts are drawn on one time axis, under its rule and on each request's page", { skip }, async () => {
  await ui.collector.client.faults.clear();
  const rule = await ui.collector.client.faults.add({ action: 'throttle', signals: 'logs', times: 1, retryAfterMs: 1000 });
  const body = JSON.stringify({
    resourceLogs: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'timeline' } }] }, scopeLogs: [{ logRecords: [{ body: { stringValue: 'once' } }] }] },
    ],
  });
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/logs', body, 'application/json')).status, 429);
  const [faulted] = (await ui.collector.api('/api/requests?signal=logs&limit=1')).requests;
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/logs', body, 'application/json')).status, 200);

  const page = await ui.browser.newPage();
  await page.goto(`${ui.collector.urls.ui}/faults`);
  const timeline = page.locator(`[data-report-for="${rule.id}"] .attempts`);
  await timeline.waitFor({ timeout: 10_000 });
  assert.equal(await timeline.getAttribute('data-attempts'), '2');
  assert.deepEqual(await timeline.locator('.attempt').evaluateAll((els) => els.map((el) => el.className.split(' ')[1])), ['attempt-faulted', 'attempt-accepted']);
  assert.equal(await timeline.locator('.attempt-wait').count(), 1, 'where Retry-After asked the exporter to wait');

  // The retry came at once, so its bar may cover the first one's: the legend names each attempt apart.
  await timeline.locator('.attempts-legend a').first().click();
  await page.waitForURL(new RegExp(`/requests/${faulted.id}$`));
  const onPage = page.locator('.request-detail .attempts');
  await onPage.waitFor({ timeout: 10_000 });
  assert.equal(await onPage.locator('.attempt').count(), 2);
  assert.equal(await onPage.locator('.attempt.current').getAttribute('data-attempt'), String(faulted.id));
  assert.match(/** @type {string} */ (await onPage.locator('.attempts-legend').textContent()), /#1 429 faulted.*waited .* → #2 200 accepted/);
  await page.close();
});

/** When the newest journal entry was answered, in ms. */
async function lastAnswered() {
  const [entry] = (await ui.collector.api('/api/requests?limit=1')).requests;
  return Date.parse(entry.time) + entry.durationMs;
}

test('a batch not retried yet is "waiting", uncoloured, with when it becomes final; then the verdict the retry earns', { skip }, async () => {
  await ui.collector.client.faults.clear();
  const throttle = await ui.collector.client.faults.add({ action: 'throttle', signals: 'traces', times: 1, retryAfterMs: 1000 });
  const body = JSON.stringify(spans('waiting-report', ['GET /cart']));
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/traces', body, 'application/json')).status, 429);
  const answered = await lastAnswered();

  const page = await ui.browser.newPage({ viewport: { width: 1300, height: 700 } });
  await page.goto(`${ui.collector.urls.ui}/faults`);
  const badge = page.locator(`[data-report-for="${throttle.id}"] .badge`);
  await badge.waitFor({ timeout: 10_000 });
  assert.equal(await badge.textContent(), 'waiting');
  assert.deepEqual(await badge.evaluate((el) => [...el.classList]), ['badge'], 'neither the failure colour nor the pass colour');
  const finalAt = page.locator(`[data-report-for="${throttle.id}"] [data-final-at]`);
  assert.match(/** @type {string} */ (await finalAt.textContent()), /final at .* unless a retry comes/);
  // Retry-After 1 s and a second of grace: later than the 1.5 s window.
  assert.equal(Date.parse(/** @type {string} */ (await finalAt.getAttribute('data-final-at'))) - answered, 2000);
  await page.screenshot({ path: '/tmp/faults-report-waiting.png', fullPage: true });

  // The client waits what Retry-After asked, then sends the batch again: the verdict becomes the one it earned.
  await waitFor(() => Date.now() >= answered + 1000, { what: 'the Retry-After to pass' });
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/traces', body, 'application/json')).status, 200);
  await page.locator(`[data-report-for="${throttle.id}"] .badge.ok`, { hasText: 'honoured Retry-After' }).waitFor({ timeout: 10_000 });
  assert.equal(await finalAt.count(), 0);
  await page.close();
});

test('a batch never retried turns from "waiting" to "did not retry" once the window has passed', { skip }, async () => {
  await ui.collector.client.faults.clear();
  const rule = await ui.collector.client.faults.add({ action: 'unavailable', signals: 'traces', times: 1 });
  const body = JSON.stringify(spans('never-retried', ['GET /cart']));
  assert.equal((await postOtlp(ui.collector.urls.http, '/v1/traces', body, 'application/json')).status, 503);
  const answered = await lastAnswered();
  const page = await ui.browser.newPage({ viewport: { width: 1300, height: 700 } });
  await page.goto(`${ui.collector.urls.ui}/faults`);
  const badge = page.locator(`[data-report-for="${rule.id}"] .badge`);
  await badge.waitFor({ timeout: 10_000 });
  // The page may open after the window has passed on a slow machine: "waiting" is asserted only when it could be.
  if (Date.now() < answered + 1400) assert.equal(await badge.textContent(), 'waiting');
  await page.locator(`[data-report-for="${rule.id}"] .badge.error`, { hasText: 'did not retry' }).waitFor({ timeout: 10_000 });
  assert.ok(Date.now() >= answered + 1500, 'not before the window has passed');
  assert.match(/** @type {string} */ (await page.locator(`[data-report-for="${rule.id}"]`).textContent()), /not retried within 1\.5 s of the answer/);
  await page.screenshot({ path: '/tmp/faults-report-did-not-retry.png', fullPage: true });
  await page.close();
});
