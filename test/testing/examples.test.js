// The examples of docs/testing.md, run as a user would run them: node:test, Vitest and Playwright Test in their own
// processes (Playwright's config starts its own collector and page on fixed high ports), pytest with the
// OpenTelemetry Python SDK (a venv that .ci/run fills from PyPI), go test with the OpenTelemetry Go SDK, the last
// two against a collector started here on free ports. Then the quick starts of docs/quickstart.md against the same
// collector: each sends to it as its page says, what arrived is read over the REST API, and an HTTP exporter
// pointed at the gRPC port fails with the message the page quotes. Without python3, go, Java, the Java agent
// (which .ci/run fetches from Maven Central) or Chromium a developer's run skips them and says why; CI=true makes
// that a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../../server/collector.js';
import { chromiumMissing } from '../../scripts/chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = process.env.OTLP_MOCK_PYTHON ?? join(root, 'node_modules/.cache/otlp-mock/venv/bin/python');
const instrument = join(python, '../opentelemetry-instrument');
const javaAgent = join(root, 'node_modules/.cache/otlp-mock/opentelemetry-javaagent.jar');
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

/** @param {string} command @param {string} [flag] how the command prints its version */
async function found(command, flag = 'version') {
  return (await run(command, [flag], { cwd: root })).code === 0;
}

/** @param {string} what @param {boolean} present @param {string} install */
function skipUnless(what, present, install) {
  if (present) return false;
  if (ci) return false;
  return `${what} is not installed (${install}); CI=true makes this a failure`;
}

const goSkip = skipUnless('go', await found('go'), 'https://go.dev/dl; .ci/run installs it');
const pythonSkip = skipUnless(
  `the examples' Python venv (${python})`,
  existsSync(python),
  'bash .ci/run sets it up: python3 -m venv + pip install -r examples/python/requirements.txt',
);
const instrumentSkip = skipUnless(
  `opentelemetry-instrument in the examples' venv (${instrument})`,
  existsSync(instrument),
  'bash .ci/run installs it: pip install -r examples/python-quickstart/requirements.txt',
);
const javaSkip =
  skipUnless('javac (a JDK, 17 or later)', await found('javac', '-version'), 'apt-get install openjdk-17-jdk-headless; .ci/run installs it') ||
  skipUnless(`the OpenTelemetry Java agent (${javaAgent})`, existsSync(javaAgent), 'bash .ci/run fetches it from Maven Central');

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

/**
 * Asks the REST API for a service's items of each kind, waiting for at least one, and fails naming what did not come.
 * @param {string} service @param {('spans'|'logs'|'metrics')[]} kinds
 */
async function arrived(service, kinds) {
  for (const kind of kinds) {
    const res = await fetch(`${mock.urls.ui}/api/${kind}?service=${encodeURIComponent(service)}&minCount=1&timeoutMs=10000`);
    assert.equal(res.status, 200, `no ${kind} of ${service} arrived: ${await res.text()}`);
  }
}

/** The collector's OTLP/HTTP and OTLP/gRPC endpoints, as a quick start's environment names them. @param {string} service */
const otel = (service, endpoint = mock.urls.http) => ({ OTEL_SERVICE_NAME: service, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });

test('examples/node-quickstart: the JS SDK set up by hand sends a trace, a log record and a metric', async () => {
  const cwd = join(root, 'examples/node-quickstart');
  const sent = await run(process.execPath, ['app.js'], { cwd, env: otel('node-quickstart') });
  assert.equal(sent.code, 0, sent.output);
  await arrived('node-quickstart', ['spans', 'logs', 'metrics']);
  const wrong = await run(process.execPath, ['app.js'], { cwd, env: otel('node-wrong-port', mock.urls.grpc) });
  assert.notEqual(wrong.code, 0, wrong.output);
  assert.match(wrong.output, /Error: Parse Error: Expected HTTP\//);
});

test('examples/python-quickstart: opentelemetry-instrument over both protocols, and the exporter class per protocol by hand', { skip: instrumentSkip }, async () => {
  const cwd = join(root, 'examples/python-quickstart');
  for (const [protocol, endpoint] of [
    ['http/protobuf', mock.urls.http],
    ['grpc', mock.urls.grpc],
  ]) {
    const service = `python-zero-code-${protocol.replace('/', '-')}`;
    const env = { ...otel(service, endpoint), OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_PYTHON_LOGGING_AUTO_INSTRUMENTATION_ENABLED: 'true' };
    const sent = await run(instrument, [python, 'app.py'], { cwd, env });
    assert.equal(sent.code, 0, sent.output);
    await arrived(service, ['spans', 'logs', 'metrics']);
    const byHand = await run(python, ['by_hand.py', protocol], { cwd, env: otel(`python-by-hand-${protocol.replace('/', '-')}`, endpoint) });
    assert.equal(byHand.code, 0, byHand.output);
    await arrived(`python-by-hand-${protocol.replace('/', '-')}`, ['spans']);
  }
  // OTEL_EXPORTER_OTLP_TIMEOUT (seconds in this SDK) cuts its retries short: the default gives up after 7 to 15 s.
  const wrong = await run(python, ['by_hand.py', 'http/protobuf'], { cwd, env: { ...otel('python-wrong-port', mock.urls.grpc), OTEL_EXPORTER_OTLP_TIMEOUT: '2' } });
  assert.match(wrong.output, /Transient error \('Connection aborted\.', BadStatusLine\('\\x00\\x00\\x0c\\x04/);
});

test('examples/go-quickstart: the Go SDK sends a trace and a metric', { skip: goSkip }, async () => {
  const cwd = join(root, 'examples/go-quickstart');
  const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-go-'));
  try {
    const built = await run('go', ['build', '-o', join(dir, 'quickstart'), '.'], { cwd });
    assert.equal(built.code, 0, built.output);
    const sent = await run(join(dir, 'quickstart'), [], { cwd, env: otel('go-quickstart') });
    assert.equal(sent.code, 0, sent.output);
    await arrived('go-quickstart', ['spans', 'metrics']);
    const wrong = await run(join(dir, 'quickstart'), [], { cwd, env: otel('go-wrong-port', mock.urls.grpc) });
    assert.match(wrong.output, /traces export: Post "[^"]+\/v1\/traces": net\/http: HTTP\/1\.x transport connection broken: malformed HTTP response/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('examples/java-quickstart: the OpenTelemetry Java agent sends spans, a log record and metrics', { skip: javaSkip }, async () => {
  const cwd = join(root, 'examples/java-quickstart');
  const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-java-'));
  try {
    const built = await run('javac', ['-d', dir, 'Main.java'], { cwd });
    assert.equal(built.code, 0, built.output);
    const java = (/** @type {Record<string, string>} */ env) =>
      run('java', [`-javaagent:${javaAgent}`, '-cp', dir, 'Main'], { cwd, env: { ...env, OTEL_METRIC_EXPORT_INTERVAL: '1000' } });
    const sent = await java(otel('java-quickstart'));
    assert.equal(sent.code, 0, sent.output);
    await arrived('java-quickstart', ['spans', 'logs', 'metrics']);
    const wrong = await java(otel('java-wrong-port', mock.urls.grpc));
    assert.match(wrong.output, /ERROR io\.opentelemetry\.exporter\.otlp\.internal\.HttpExporter - Failed to export spans\. The request could not be executed/);
    assert.match(wrong.output, /java\.io\.IOException: unexpected end of stream on http/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
