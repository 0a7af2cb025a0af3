// `otlp-mock measure` run as a user runs it, against examples/measure (a small HTTP service with the OpenTelemetry
// Node SDK) over the three OTLP wires: with and without --baseline and --url, with a fault rule; the JSON has every
// field, non-zero where the run did the work, and the HTML page's plots are drawn in Chromium.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromiumMissing, launchChromium } from '../../scripts/chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const app = join(root, 'examples/measure');
const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-measure-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Short exports, so that a run of a second or two sends something while it runs, not only when it stops. */
const SDK_ENV = { OTEL_SERVICE_NAME: 'measure-example', OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_METRIC_EXPORT_INTERVAL: '500', OTEL_LOGS_EXPORTER: 'none' };

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** @param {string[]} args @param {Record<string, string>} [env] @returns {Promise<{ code: number, stdout: string, stderr: string }>} */
function measure(args, env = {}) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'server/cli.js'), 'measure', ...args],
      { cwd: app, env: { ...process.env, ...SDK_ENV, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (/** @type {any} */ (err).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const RUN_FIELDS = ['label', 'command', 'requests', 'errors', 'latencyMs', 'cpu', 'rssMb', 'telemetry'];

/** Every field of a run, each a number where the issue says so; `loaded`: the run had --url. @param {any} run @param {boolean} loaded @param {boolean} sends */
function assertRun(run, loaded, sends) {
  assert.deepEqual(Object.keys(run), RUN_FIELDS);
  assert.deepEqual(Object.keys(run.latencyMs), ['p50', 'p90', 'p99', 'max']);
  assert.deepEqual(Object.keys(run.cpu), ['seconds', 'perRequestMs']);
  assert.deepEqual(Object.keys(run.rssMb), ['mean', 'max']);
  assert.deepEqual(Object.keys(run.telemetry), ['requests', 'items', 'bytes', 'bytesPerItem', 'itemsPerSecond']);
  assert.ok(run.cpu.seconds > 0 && run.rssMb.mean > 0 && run.rssMb.max >= run.rssMb.mean, `${run.label}: CPU and RSS sampled`);
  if (loaded) {
    assert.ok(run.requests > 0 && run.latencyMs.max > 0 && run.latencyMs.p99 >= run.latencyMs.p50 && run.cpu.perRequestMs > 0, `${run.label}: load driven`);
    assert.equal(run.errors, 0);
  } else assert.deepEqual([run.requests, run.latencyMs.max, run.cpu.perRequestMs], [0, 0, 0]);
  for (const [field, value] of Object.entries(run.telemetry)) assert.equal(value > 0, sends, `${run.label}: telemetry.${field} = ${value}`);
}

test('grpc, with --baseline and --url: both commands loaded, the instrumented one sent telemetry, and the HTML plots are drawn', { timeout: 120_000 }, async (t) => {
  const port = await freePort();
  const [json, html] = [join(dir, 'grpc.json'), join(dir, 'grpc.html')];
  const { code, stdout, stderr } = await measure(
    [
      '--url',
      `http://127.0.0.1:${port}/`,
      '--rate',
      '60',
      '--duration',
      '1500ms',
      '--runs',
      '2',
      '--protocol',
      'grpc',
      '--baseline',
      'node app.js',
      '--json',
      json,
      '--html',
      html,
      '--',
      'node',
      '--import',
      './telemetry.mjs',
      'app.js',
    ],
    { PORT: String(port) },
  );
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^baseline +2 /m);
  assert.match(stdout, /^instrumented +2 /m);
  assert.match(stdout, /overhead \(medians, instrumented − baseline\): CPU [+-]/);
  const doc = JSON.parse(readFileSync(json, 'utf8'));
  assert.deepEqual(Object.keys(doc), ['runs', 'overhead']);
  assert.deepEqual(
    doc.runs.map((/** @type {any} */ r) => r.label),
    ['baseline', 'instrumented', 'baseline', 'instrumented'],
  );
  for (const run of doc.runs) assertRun(run, true, run.label === 'instrumented');
  assert.deepEqual(Object.keys(doc.overhead), ['cpuPercent', 'p99LatencyMs', 'rssMb']);
  for (const value of Object.values(doc.overhead)) assert.equal(typeof value, 'number');

  await t.test('the HTML page opens in Chromium with a CPU, RSS and latency plot per run, each drawn', { skip: chromiumMissing }, async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(html).href);
      const runs = await page.$$eval('section.run', (sections) =>
        sections.map((s) => ({
          label: s.getAttribute('data-label'),
          plots: [...s.querySelectorAll('svg.plot')].map((svg) => ({
            title: svg.getAttribute('aria-label'),
            drawn: [...svg.querySelectorAll('polyline')].map((p) => Number(p.getAttribute('data-points'))),
            width: svg.getBoundingClientRect().width,
          })),
        })),
      );
      assert.equal(runs.length, 4);
      for (const run of runs) {
        assert.deepEqual(
          run.plots.map((p) => p.title),
          ['CPU', 'RSS', 'Latency'],
        );
        for (const p of run.plots) assert.ok(p.width > 100 && p.drawn.length > 0 && p.drawn.every((n) => n > 1), `${run.label} ${p.title}: ${JSON.stringify(p)}`);
      }
      await page.screenshot({ path: join(dir, 'measure.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});

test('http/protobuf with --url and no baseline: one instrumented run, overhead null', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const json = join(dir, 'proto.json');
  const { code, stderr } = await measure(
    [
      '--url',
      `http://127.0.0.1:${port}/`,
      '--rate',
      '60',
      '--duration',
      '1500ms',
      '--protocol',
      'http/protobuf',
      '--json',
      json,
      '--',
      'node',
      '--import',
      './telemetry.mjs',
      'app.js',
    ],
    { PORT: String(port) },
  );
  assert.equal(code, 0, stderr);
  const doc = JSON.parse(readFileSync(json, 'utf8'));
  assert.equal(doc.runs.length, 1);
  assertRun(doc.runs[0], true, true);
  assert.equal(doc.overhead, null);
});

test('http/json without --url, with a fault rule: the command runs for --duration, and the report says how the exporter retried', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const json = join(dir, 'json.json');
  const rule = JSON.stringify({ action: 'unavailable', times: 1, signals: ['metrics'] });
  const { code, stdout, stderr } = await measure(
    ['--duration', '2500ms', '--protocol', 'http/json', '--fault', rule, '--json', json, '--', 'node', '--import', './telemetry.mjs', 'app.js'],
    { PORT: String(port) },
  );
  assert.equal(code, 0, stderr);
  const doc = JSON.parse(readFileSync(json, 'utf8'));
  assertRun(doc.runs[0], false, true);
  assert.equal(doc.faults.length, 1);
  assert.equal(doc.faults[0].verdict, 'retried', JSON.stringify(doc.faults));
  assert.match(stdout, /fault f\d+ \(unavailable\): retried/);
});

test('a bad fault rule or option is refused before anything runs, naming what was wrong', async () => {
  const bad = await measure(['--fault', '{"action":"explode"}', '--', 'node', 'app.js']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /explode/);
  const noCommand = await measure(['--url', 'http://127.0.0.1:1/']);
  assert.equal(noCommand.code, 2);
  assert.match(noCommand.stderr, /give the command/);
  const duration = await measure(['--duration', 'soon', '--', 'node', 'app.js']);
  assert.equal(duration.code, 2);
  assert.match(duration.stderr, /--duration must be a duration/);
});
