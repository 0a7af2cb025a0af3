// The examples of docs/testing.md, run as a user would run them: node:test, Vitest and Playwright Test in their own
// processes (Playwright's config starts its own collector and page on fixed high ports), pytest with the
// OpenTelemetry Python SDK (a venv that .ci/run fills from PyPI), go test with the OpenTelemetry Go SDK, the last
// two against a collector started here on free ports. Without python3, go or Chromium a developer's run skips
// them and says why; CI=true makes that a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../../server/collector.js';
import { chromiumMissing } from '../../scripts/chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = process.env.OTLP_MOCK_PYTHON ?? join(root, 'node_modules/.cache/otlp-mock/venv/bin/python');
const ci = Boolean(process.env.CI);

/**
 * @param {string} command @param {string[]} args @param {{ cwd: string, env?: Record<string, string> }} options
 * @returns {Promise<{ code: number, output: string }>}
 */
function run(command, args, { cwd, env = {} }) {
  // Without this, a node --test child takes itself for part of this run and runs nothing.
  const { NODE_TEST_CONTEXT, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...inherited, ...env }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (/** @type {any} */ (err).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** @param {string} command */
async function found(command) {
  return (await run(command, ['version'], { cwd: root })).code === 0;
}

/** @param {string} what @param {boolean} present @param {string} install */
function skipUnless(what, present, install) {
  if (present) return false;
  if (ci) return false;
  return `${what} is not installed (${install}); CI=true makes this a failure`;
}

const goSkip = skipUnless('go', await found('go'), 'https://go.dev/dl; .ci/run installs it');
const pythonSkip = skipUnless(`the examples' Python venv (${python})`, existsSync(python), 'bash .ci/run sets it up: python3 -m venv + pip install -r examples/python/requirements.txt');

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let mock;
/** @type {Record<string, string>} */
let env;

before(async () => {
  mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
  env = { OTLP_MOCK_URL: mock.urls.ui, OTEL_EXPORTER_OTLP_ENDPOINT: mock.urls.http };
});
after(() => mock.stop());

test('examples/node-test: node --test with the collector in-process', async () => {
  const { code, output } = await run(process.execPath, ['--test', '--test-reporter=spec', 'checkout.test.js'], { cwd: join(root, 'examples/node-test') });
  assert.equal(code, 0, output);
  assert.match(output, /pass 3/);
});

test('examples/vitest: Vitest with the collector started for the file', async () => {
  const vitest = join(root, 'node_modules/.bin/vitest');
  const { code, output } = await run(vitest, ['run', '--root', 'examples/vitest', '--reporter=verbose'], { cwd: root, env: { NO_COLOR: '1', FORCE_COLOR: '0' } });
  assert.equal(code, 0, output);
  assert.match(output, /Tests\s+2 passed/);
});

test('examples/playwright: Playwright Test, a web page sending through CORS', { skip: chromiumMissing }, async () => {
  const playwright = join(root, 'node_modules/.bin/playwright');
  const { code, output } = await run(playwright, ['test', '-c', 'examples/playwright/playwright.config.js'], {
    cwd: root,
    // FORCE_COLOR=0 too: Playwright sets FORCE_COLOR=1 for its web servers, and Node warns when both are set.
    env: { NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  assert.equal(code, 0, output);
  assert.match(output, /^\s*1 passed/m);
});

// These two share one collector and clear it: one at a time.
test('examples/python: pytest with the OpenTelemetry Python SDK', { skip: pythonSkip }, async () => {
  const { code, output } = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: join(root, 'examples/python'), env });
  assert.equal(code, 0, output);
  assert.match(output, /3 passed/);
});

test('examples/go: go test with the OpenTelemetry Go SDK', { skip: goSkip }, async () => {
  const { code, output } = await run('go', ['test', '-count=1', '-v', './...'], { cwd: join(root, 'examples/go'), env });
  assert.equal(code, 0, output);
  assert.match(output, /--- PASS: TestTheExporterRetriesWhenThrottled/);
});
