// Forwarding in the UI: targets are added and removed in the Forward view, an upstream-side rule in the fault form,
// and a request's page shows its calls upstream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing, launchChromium } from '../../scripts/chromium.js';
import { startTestCollector } from '../helpers/collector.js';
import { buildWeb } from '../../scripts/build-web.js';
import { postOtlp } from '../helpers/http.js';
import { spans } from '../testing/data.js';
import { waitFor } from '../helpers/wait.js';

const skip = chromiumMissing;

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {import('../helpers/collector.js').TestCollector} */
let upstream;
/** @type {import('playwright-core').Browser} */
let browser;

before(async () => {
  if (skip) return;
  await buildWeb({ log: () => {} });
  upstream = await startTestCollector();
  collector = await startTestCollector();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await collector?.stop();
  await upstream?.stop();
});

test('targets are added in the Forward view, counted as requests go through, and removed', { skip }, async () => {
  const page = await browser.newPage();
  await page.goto(`${collector.urls.ui}/forward`);
  await page.getByText('Not forwarding').waitFor({ timeout: 10_000 });
  await page.getByLabel('URL').fill(upstream.urls.grpc.replace('http:', 'grpc:'));
  await page.getByLabel('Headers').fill('x-tenant=ui');
  await page.getByRole('button', { name: 'Add target' }).click();
  const row = page.locator('.forward-targets tbody tr');
  await row.first().waitFor({ timeout: 10_000 });
  assert.match(/** @type {string} */ (await row.first().textContent()), /primary.*grpc:\/\/127\.0\.0\.1:\d+.*x-tenant: ui/);

  await page.getByLabel('URL').fill('ftp://nowhere');
  await page.getByRole('button', { name: 'Add target' }).click();
  const error = page.locator('.fault-form .error-text');
  await error.waitFor({ timeout: 10_000 });
  assert.match(/** @type {string} */ (await error.textContent()), /scheme ftp:/);

  assert.equal((await postOtlp(collector.urls.http, '/v1/traces', JSON.stringify(spans('forwarded', ['GET /'])), 'application/json')).status, 200);
  await page.locator('[data-count="accepted"]', { hasText: '1' }).waitFor({ timeout: 10_000 });
  const [target] = (await collector.api('/api/forward')).targets;
  await page.getByRole('button', { name: `Remove ${target.id}` }).click();
  await page.getByText('Not forwarding').waitFor({ timeout: 10_000 });
  await page.close();
});

test('an upstream-side rule from the fault form; the request page shows both legs', { skip }, async () => {
  await collector.api('/api/forward', { method: 'DELETE' });
  for (const url of [upstream.urls.http, upstream.urls.grpc.replace('http:', 'grpc:')])
    await collector.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  const page = await browser.newPage();
  await page.goto(`${collector.urls.ui}/faults`);
  await page.locator('.presets').getByRole('button', { name: 'unavailable' }).click();
  await page.getByLabel('Side').selectOption('upstream');
  await page.getByLabel('Times').fill('1');
  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  await page.locator('.rules tbody tr', { hasText: 'upstream' }).waitFor({ timeout: 10_000 });
  const [rule] = (await collector.api('/api/faults')).faults;
  assert.deepEqual([rule.action, rule.side, rule.times], ['unavailable', 'upstream', 1]);

  assert.equal((await postOtlp(collector.urls.http, '/v1/traces', JSON.stringify(spans('two-legs', ['GET /'])), 'application/json')).status, 503);
  const [entry] = (await collector.api('/api/requests?signal=traces&limit=1')).requests;
  await waitFor(async () => (await collector.api(`/api/requests/${entry.id}`)).tees[0].outcome !== 'pending', { what: 'the tee to answer' });
  await page.goto(`${collector.urls.ui}/requests/${entry.id}`);
  const legs = page.locator('.upstream-legs tbody tr');
  await legs.first().waitFor({ timeout: 10_000 });
  assert.equal(await legs.count(), 2);
  assert.deepEqual(
    [await legs.nth(0).getAttribute('data-outcome'), await legs.nth(1).getAttribute('data-outcome')],
    ['faulted', 'accepted'],
    'the rule (times 1) was used up on the primary call; the tee went through',
  );
  assert.match(/** @type {string} */ (await legs.nth(0).textContent()), /primary.*503.*unavailable/);
  assert.match(/** @type {string} */ (await page.locator('.request-detail').textContent()), /stored here, whatever the upstream answered/);
  await page.close();
});
