// Headless Chromium for the UI's tests, benchmarks and screenshots: Debian's package driven by
// playwright-core (Playwright's own browser download does not work everywhere this runs).
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Why a browser test cannot run here, or false. Developers without Chromium still run the rest of the
 * suite; CI installs it, and under CI=true a missing browser is a failure, not a skip.
 */
export const chromiumMissing =
  !existsSync(CHROMIUM_PATH) && !process.env.CI ? `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium); CI=1 makes this a failure` : false;

export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * Collects what a page throws or logs as an error, so a test can assert there was none.
 * @param {import('playwright-core').Page} page @param {string[]} errors
 */
export function collectPageErrors(page, errors) {
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
}
