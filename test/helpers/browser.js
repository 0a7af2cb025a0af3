// The set-up every browser suite shares: the web UI built, a collector started, headless Chromium launched (and,
// when asked, one page open with its errors collected); all of it closed after the suite.
import { before, after } from 'node:test';
import { chromiumMissing, launchChromium, collectPageErrors } from '../../scripts/chromium.js';
import { startTestCollector } from './collector.js';
import { buildWeb } from '../../scripts/build-web.js';

/**
 * @typedef {{ skip: string|false, collector: import('./collector.js').TestCollector,
 *   browser: import('playwright-core').Browser, page: import('playwright-core').Page, pageErrors: string[] }} BrowserSuite
 */

/**
 * Registers the suite's `before` and `after`; the fields are set once `before` has run. `skip` is the reason
 * Chromium cannot run here, if there is one (pass it as each test's `skip`).
 * @param {{ collector?: Parameters<typeof startTestCollector>[0], page?: boolean }} [options]
 * @returns {BrowserSuite}
 */
export function browserSuite({ collector: collectorOptions, page = false } = {}) {
  const suite = /** @type {BrowserSuite} */ (/** @type {unknown} */ ({ skip: chromiumMissing, pageErrors: [] }));
  before(async () => {
    if (suite.skip) return;
    await buildWeb({ log: () => {} });
    suite.collector = await startTestCollector(collectorOptions);
    suite.browser = await launchChromium();
    if (!page) return;
    suite.page = await suite.browser.newPage({ viewport: { width: 1400, height: 900 } });
    collectPageErrors(suite.page, suite.pageErrors);
  });
  after(async () => {
    await suite.browser?.close();
    await suite.collector?.stop();
  });
  return suite;
}
