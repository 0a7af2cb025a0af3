// Playwright Test: otlp-mock and the shop page (Vite's dev server) started by webServer, on fixed high
// ports rather than 4317-4319 and 5173 so the run cannot take or reuse a collector that is already running.
// Run from the repository root: npx playwright test -c examples/playwright/playwright.config.js
import { defineConfig } from '@playwright/test';

const ports = { grpc: 14417, http: 14418, ui: 14419, page: 14420 };

export default defineConfig({
  testDir: '.',
  // One collector for the whole run, cleared by each test: one test at a time.
  workers: 1,
  reporter: 'list',
  // Out of the source tree (node_modules is ignored by git).
  outputDir: '../../node_modules/.cache/otlp-mock/playwright-results',
  use: {
    baseURL: `http://127.0.0.1:${ports.page}`,
    // Debian's Chromium: Playwright's own browser download is not available everywhere this runs.
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] },
  },
  webServer: [
    {
      // `npx otlp-mock ...` in a project that installs otlp-mock; this is the repository's own CLI.
      command: `node ../../server/cli.js --grpc-port ${ports.grpc} --http-port ${ports.http} --ui-port ${ports.ui} --print none`,
      url: `http://127.0.0.1:${ports.ui}/api/health`,
      reuseExistingServer: false,
    },
    {
      command: `../../node_modules/.bin/vite --host 127.0.0.1 --port ${ports.page} --strictPort`,
      url: `http://127.0.0.1:${ports.page}`,
      env: { VITE_OTLP_ENDPOINT: `http://127.0.0.1:${ports.http}` },
      reuseExistingServer: false,
    },
  ],
});
