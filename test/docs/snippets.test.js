// Every fenced sh, js, ts and py block of README.md and docs/*.md runs here as written, read from the Markdown at
// test time (a page added to docs/ is picked up), so the docs and this test cannot drift. Each page gets a fresh
// otlp-mock on the default ports (4317, 4318, 4319), holding what the docs' examples talk about (a checkout
// service's spans, an error log, a histogram, sent by the official exporters); its blocks then run in order, in
// one working directory, as a reader would paste them. A block marked illustrative in its info string
// (```sh illustrative: why) is not run: see docs/testing.md, "Code blocks in these docs".
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { startCollector } from '../../server/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Where snippets of JavaScript are written: inside the package, so that `import 'otlp-mock'` finds it. */
const scripts = join(root, 'tmp', `doc-snippets-${process.pid}`);
const python = process.env.OTLP_MOCK_PYTHON ?? join(root, 'node_modules/.cache/otlp-mock/venv/bin/python');
const BLOCK_TIMEOUT_MS = 60_000;

/** @typedef {{ page: string, line: number, lang: 'sh'|'js'|'ts'|'py', info: string, code: string }} Block */

const LANGS = /** @type {Record<string, Block['lang']>} */ ({
  sh: 'sh',
  bash: 'sh',
  shell: 'sh',
  js: 'js',
  javascript: 'js',
  mjs: 'js',
  ts: 'ts',
  typescript: 'ts',
  py: 'py',
  python: 'py',
});

/** The pages: README.md and every docs/*.md, read now. */
function pages() {
  const docs = readdirSync(join(root, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => `docs/${n}`);
  return ['README.md', ...docs];
}

/**
 * The fenced blocks of one page in the languages above; `info` is the rest of the opening fence's info string.
 * @param {string} page @returns {Block[]}
 */
function blocksOf(page) {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  /** @type {Block[]} */
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,}|~{3,})\s*([^\s`]*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, word, info] = open;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !new RegExp(`^ *${fence[0]}{${fence.length},}\\s*$`).test(lines[i]); i++) body.push(lines[i].slice(indent.length));
    const lang = LANGS[word.toLowerCase()];
    if (lang) blocks.push({ page, line: start + 1, lang, info: info.trim(), code: body.join('\n') + '\n' });
  }
  return blocks;
}

/** Whether a block is marked not to run: the word `illustrative` in its info string. @param {Block} b */
const illustrative = (b) => /^illustrative\b/.test(b.info);

/** The first command a shell block needs that this machine lacks. @param {Block} b */
function missingTool(b) {
  for (const tool of ['jq', 'docker', 'go']) {
    if (!new RegExp(`(^|[\\s|;&(])${tool}\\s`, 'm').test(b.code)) continue;
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `needs ${tool}, which is not installed`;
  }
  return '';
}

/** Why a block cannot run here, or '' when it can. @param {Block} b */
function skipReason(b) {
  if (b.lang === 'py' && !existsSync(python))
    return `no Python venv at ${relative(root, python)} (bash .ci/run makes it: python3 -m venv, then pip install -r examples/python/requirements.txt)`;
  if (b.lang === 'sh') return missingTool(b);
  return '';
}

/** @param {string} command @param {string[]} args @param {string} cwd @returns {Promise<{ code: number|null, output: string }>} */
function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    // A block that never ends (a server left running) fails with what it printed; its whole process group goes.
    const timer = setTimeout(() => process.kill(-(/** @type {number} */ (child.pid)), 'SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Runs one block in `cwd`, as written. @param {Block} b @param {string} cwd */
async function runBlock(b, cwd) {
  const name = `${b.page.replace(/[^\w]+/g, '-')}-${b.line}`;
  if (b.lang === 'sh') return run('bash', ['-e', '-o', 'pipefail', '-c', b.code], cwd);
  if (b.lang === 'py') {
    writeFileSync(join(cwd, `${name}.py`), b.code);
    return run(python, [`${name}.py`], cwd);
  }
  const source = b.lang === 'ts' ? ts.transpileModule(b.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText : b.code;
  const file = join(scripts, `${name}.mjs`);
  writeFileSync(file, source);
  return run(process.execPath, [file], cwd);
}

/**
 * What the docs' examples query: a checkout service's trace (POST /pay → charge card, an error → SELECT accounts),
 * an error log of it, and two points of http.server.duration, each sent by the official exporters over OTLP/HTTP.
 */
async function seed() {
  const resource = resourceFromAttributes({ 'service.name': 'checkout' });
  const url = (/** @type {string} */ signal) => `http://127.0.0.1:4318/v1/${signal}`;
  const tracing = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: url('traces') }))] });
  const tracer = tracing.getTracer('shop');
  const pay = tracer.startSpan('POST /pay', { kind: SpanKind.SERVER, attributes: { 'http.route': '/pay' } });
  const inRoot = trace.setSpan(context.active(), pay);
  const charge = tracer.startSpan('charge card', { kind: SpanKind.CLIENT }, inRoot);
  tracer.startSpan('SELECT accounts', { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgres', 'db.rows': 1 } }, trace.setSpan(inRoot, charge)).end();
  charge.setStatus({ code: SpanStatusCode.ERROR, message: 'declined' });
  charge.end();
  pay.end();
  await tracing.shutdown();

  const logging = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: url('logs') }) })] });
  logging.getLogger('shop').emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: 'card declined' });
  await logging.shutdown();

  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: url('metrics') }), exportIntervalMillis: 60_000 });
  const metering = new MeterProvider({ resource, readers: [reader] });
  const duration = metering.getMeter('shop').createHistogram('http.server.duration', { unit: 'ms' });
  duration.record(12, { 'http.route': '/pay' });
  duration.record(30, { 'http.route': '/cart' });
  await metering.shutdown();
}

/** Why the default ports cannot be used here, or '' once they were opened and closed again. */
async function portsBusy() {
  try {
    const probe = await startCollector({ grpcPort: 4317, httpPort: 4318, uiPort: 4319 });
    await probe.stop();
    return '';
  } catch (err) {
    return `the docs' ports are taken: ${/** @type {Error} */ (err).message}`;
  }
}

const busy = await portsBusy();

before(() => mkdirSync(scripts, { recursive: true }));
after(() => rmSync(scripts, { recursive: true, force: true }));

for (const page of pages()) {
  const blocks = blocksOf(page).filter((b) => !illustrative(b));
  if (!blocks.length) continue;
  describe(page, { skip: busy || undefined }, () => {
    /** @type {Awaited<ReturnType<typeof startCollector>>} */
    let mock;
    /** @type {string} */
    let cwd;
    before(async () => {
      mock = await startCollector({ grpcPort: 4317, httpPort: 4318, uiPort: 4319 });
      await seed();
      cwd = mkdtempSync(join(tmpdir(), 'otlp-mock-doc-'));
    });
    after(async () => {
      await mock?.stop();
      if (cwd) rmSync(cwd, { recursive: true, force: true });
    });
    for (const b of blocks) {
      const first =
        b.code
          .split('\n')
          .find((l) => l.trim() && !/^\s*(#|\/\/)/.test(l))
          ?.trim() ?? '';
      test(`line ${b.line}, ${b.lang}: ${first.length > 60 ? `${first.slice(0, 57)}...` : first}`, { skip: skipReason(b) || undefined }, async () => {
        const { code, output } = await runBlock(b, cwd);
        assert.equal(code, 0, `the block at ${b.page}:${b.line} exited ${code}:\n${output}`);
      });
    }
  });
}

test("every page's blocks are found, and illustrative ones are few and say why", () => {
  const all = pages().flatMap(blocksOf);
  const marked = all.filter(illustrative);
  assert.ok(all.length >= 40, `${all.length} blocks`);
  for (const b of marked) assert.match(b.info, /^illustrative: \S/, `${b.page}:${b.line} says why it does not run`);
  assert.ok(marked.length * 2 <= all.length, `${marked.length} of ${all.length} blocks are illustrative`);
});
