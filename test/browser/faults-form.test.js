// The Faults form in real headless Chromium: a number field holding something else than a number (a typo such as
// "abc") is marked, named, and nothing is sent, so a typo can never become a rule that faults every request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { collectPageErrors } from '../../scripts/chromium.js';

const ui = browserSuite();
const skip = ui.skip;

/** A page on the Faults view, with the rules it posts recorded. */
async function openFaults() {
  const page = await ui.browser.newPage({ viewport: { width: 1300, height: 900 } });
  /** @type {string[]} */
  const errors = [];
  collectPageErrors(page, errors);
  /** @type {unknown[]} */
  const posted = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/faults') posted.push(req.postDataJSON());
  });
  await page.goto(`${ui.collector.urls.ui}/faults`);
  await page.getByRole('button', { name: /^Add .* rule$/ }).waitFor({ timeout: 10_000 });
  return { page, posted, errors };
}

test('typing "abc" as a probability shows which field is wrong and sends nothing', { skip }, async () => {
  await ui.collector.client.faults.clear();
  const { page, posted, errors } = await openFaults();
  await page.getByLabel('Probability').fill('abc');
  const fieldError = page.locator('[data-field-error="probability"]');
  await fieldError.waitFor({ timeout: 5000 });
  assert.match(/** @type {string} */ (await fieldError.textContent()), /not a number/);
  assert.equal(await fieldError.getAttribute('title'), 'Probability: "abc" is not a number');
  assert.equal(await page.getByLabel('Probability').getAttribute('aria-invalid'), 'true');

  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  const formError = page.locator('.form-actions .error-text');
  await formError.waitFor({ timeout: 5000 });
  assert.equal(await formError.textContent(), 'Not added: Probability: "abc" is not a number');
  await page.screenshot({ path: '/tmp/faults-form-abc.png', fullPage: true });
  assert.deepEqual(posted, [], 'no rule was sent');
  assert.deepEqual(await ui.collector.client.faults.list(), []);

  // Each number field is checked the same way, the action's own options too.
  await page.getByLabel('Probability').fill('0.5');
  await page.getByLabel('Times').fill('2x');
  await page.getByLabel('Retry after (ms)').fill('1 000');
  assert.deepEqual(await page.locator('[data-field-error]').evaluateAll((els) => els.map((el) => el.getAttribute('data-field-error'))), ['times', 'retryAfterMs']);
  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  await page.locator('.form-actions .error-text', { hasText: 'Retry after (ms): "1 000" is not a number' }).waitFor({ timeout: 5000 });
  assert.match(/** @type {string} */ (await formError.textContent()), /^Not added: Times: "2x" is not a number; Retry after/);
  assert.deepEqual(posted, []);

  // Numbers again: the rule goes out with them as numbers.
  await page.getByLabel('Times').fill('2');
  await page.getByLabel('Retry after (ms)').fill('1000');
  assert.equal(await page.locator('[data-field-error]').count(), 0);
  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  await page.locator('tr[data-rule-id]').waitFor({ timeout: 5000 });
  assert.deepEqual(posted, [{ action: 'throttle', times: 2, probability: 0.5, retryAfterMs: 1000 }]);
  const [rule] = await ui.collector.client.faults.list();
  assert.equal(rule.probability, 0.5);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a gRPC code may be a number or a name; anything else is refused before sending', { skip }, async () => {
  await ui.collector.client.faults.clear();
  const { page, posted } = await openFaults();
  await page.getByLabel('Action').selectOption('status');
  await page.getByLabel('gRPC code').fill('14.5.1');
  await page.locator('[data-field-error="grpcCode"]').waitFor({ timeout: 5000 });
  await page.getByLabel('gRPC code').fill('UNAVAILABLE');
  assert.equal(await page.locator('[data-field-error]').count(), 0);
  await page.getByRole('button', { name: /^Add .* rule$/ }).click();
  await page.locator('tr[data-rule-id]').waitFor({ timeout: 5000 });
  assert.deepEqual(posted, [{ action: 'status', grpcCode: 'UNAVAILABLE', retryAfterMs: 1000 }]);
  await page.close();
});
