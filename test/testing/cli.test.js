// The command line a newcomer meets first: -h, -v, --open, and start-up errors that say what to change.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const FREE_PORTS = ['--grpc-port', '0', '--http-port', '0', '--ui-port', '0'];

/**
 * Runs the CLI; `exited` resolves with its exit code, `banner` once it has printed its addresses.
 * @param {string[]} args @param {NodeJS.ProcessEnv} [env]
 */
function cli(args, env = process.env) {
  const child = spawn(process.execPath, ['server/cli.js', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (out.stderr += chunk));
  /** @type {Promise<number|null>} */
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  const banner = async () => {
    const text = await waitFor(() => /UI \+ API +\S+\n/.test(out.stdout) && out.stdout, { timeoutMs: 20000, what: `the CLI's addresses; stderr: ${out.stderr}` });
    /** @param {string} label */
    const port = (label) => Number(/** @type {RegExpExecArray} */ (new RegExp(`${label} +http://[^ ]+:(\\d+)\\n`).exec(text))[1]);
    return { grpc: port('OTLP/gRPC'), http: port('OTLP/HTTP'), ui: port('UI \\+ API') };
  };
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { out, exited, banner, stop };
}

/** @type {ReturnType<typeof cli>} */
let first;
/** @type {{ grpc: number, http: number, ui: number }} */
let taken;

before(async () => {
  first = cli([...FREE_PORTS, '--print', 'none']);
  taken = await first.banner();
});

after(async () => {
  await first.stop();
});

/** Every start-up error is a single line with no stack trace and none of grpc-js's own log lines. @param {string} stderr */
function assertOneSentence(stderr) {
  assert.equal(stderr.split('\n').filter(Boolean).length, 1, `one line, got:\n${stderr}`);
  assert.doesNotMatch(stderr, /\n\s+at |No address added|Error:/);
}

test('-v and --version print the version; -h and --help print the help with every option', async () => {
  for (const flag of ['-v', '--version']) {
    const run = cli([flag]);
    assert.equal(await run.exited, 0);
    assert.equal(run.out.stdout, `${pkg.version}\n`);
  }
  for (const flag of ['-h', '--help']) {
    const run = cli([flag]);
    assert.equal(await run.exited, 0);
    for (const line of ['-h, --help', '-v, --version', '--open', 'OTLP_MOCK_OPEN', 'OTEL_EXPORTER_OTLP_PROTOCOL=grpc', 'Exit status:'])
      assert.ok(run.out.stdout.includes(line), `${flag} shows ${line}`);
  }
});

test("--help: every option's text and its env line start in one column, at least two spaces past the longest flag", async () => {
  const run = cli(['--help']);
  assert.equal(await run.exited, 0);
  const section = run.out.stdout.split('\nOptions:\n')[1].split('\n\n')[0].split('\n');
  const columns = new Set(
    section.map((line) => {
      const m = /^ {2}(?:(-\S*(?:, --\S+)?) {2,})?( *)(?=\S)/.exec(line);
      assert.ok(m, `"${line}" is an option line`);
      return m[0].length;
    }),
  );
  assert.equal(columns.size, 1, `one column for ${section.length} lines, got ${[...columns].join(', ')}:\n${section.join('\n')}`);
});

/** What each port is called, and its flag and variable. */
const PORT_NAMES = {
  grpc: { what: 'OTLP/gRPC', flag: '--grpc-port', variable: 'OTLP_MOCK_GRPC_PORT' },
  http: { what: 'OTLP/HTTP', flag: '--http-port', variable: 'OTLP_MOCK_HTTP_PORT' },
  ui: { what: 'web UI and API', flag: '--ui-port', variable: 'OTLP_MOCK_UI_PORT' },
};

/** The one sentence a taken port is refused with. @param {'grpc'|'http'|'ui'} key */
function inUse(key) {
  const { what, flag, variable } = PORT_NAMES[key];
  return (
    `otlp-mock: port ${taken[key]} (${what}) on 127.0.0.1 is already in use, probably by another otlp-mock or collector; ` +
    `stop it, or choose another port with ${flag} or ${variable} (0 picks any free port).\n`
  );
}

test('a second copy on the same ports stops at the first it opens, the UI port, in one sentence naming its flag and variable (exit 3)', async () => {
  const second = cli(['--grpc-port', String(taken.grpc), '--http-port', String(taken.http), '--ui-port', String(taken.ui)]);
  assert.equal(await second.exited, 3);
  assert.equal(second.out.stderr, inUse('ui'));
  assertOneSentence(second.out.stderr);
  assert.equal(second.out.stdout, '');
});

for (const key of /** @type {const} */ (['grpc', 'http', 'ui'])) {
  const { what, flag, variable } = PORT_NAMES[key];
  test(`a taken ${what} port names ${flag} and ${variable} (exit 3)`, async () => {
    const free = Object.values(PORT_NAMES).flatMap((p) => (p.flag === flag ? [] : [p.flag, '0']));
    // The HTTP port is given by its variable, the others by their flags: both ways are named alike.
    const run = key === 'http' ? cli(free, { ...process.env, [variable]: String(taken[key]) }) : cli([...free, flag, String(taken[key])]);
    assert.equal(await run.exited, 3);
    assert.equal(run.out.stderr, inUse(key));
    assertOneSentence(run.out.stderr);
  });
}

test("an address that is not this machine's names --host and OTLP_MOCK_HOST (exit 3)", async () => {
  // 192.0.2.0/24 is reserved for documentation (RFC 5737), so no machine running the tests has it.
  const run = cli([...FREE_PORTS, '--host', '192.0.2.1']);
  assert.equal(await run.exited, 3);
  assert.equal(
    run.out.stderr,
    'otlp-mock: host 192.0.2.1 (web UI and API, port 0) is not an address of this machine; ' +
      'bind another with --host or OTLP_MOCK_HOST (127.0.0.1 or 0.0.0.0 work everywhere).\n',
  );
  assertOneSentence(run.out.stderr);
});

test('a bad OTLP_MOCK_OPEN is refused as a usage error (exit 2)', async () => {
  const run = cli(FREE_PORTS, { ...process.env, OTLP_MOCK_OPEN: 'maybe' });
  assert.equal(await run.exited, 2);
  assert.match(run.out.stderr, /^otlp-mock: OTLP_MOCK_OPEN: "maybe" is not one of 1, true, yes, 0, false, no\n/);
});

const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';

test(
  '--open where no browser can be launched: one line with the URL, and the collector keeps running',
  { skip: process.platform === 'win32' && 'cmd is always there' },
  async (t) => {
    const empty = mkdtempSync(join(tmpdir(), 'otlp-mock-no-browser-'));
    t.after(() => rmSync(empty, { recursive: true, force: true }));
    const run = cli([...FREE_PORTS, '--print', 'none', '--open'], { ...process.env, PATH: empty });
    try {
      const ports = await run.banner();
      const line = `otlp-mock: no browser opened (${opener} not found); open http://127.0.0.1:${ports.ui} yourself\n`;
      await waitFor(() => run.out.stdout.endsWith(line), { what: `"${line.trim()}" in ${JSON.stringify(run.out)}` });
      assert.equal((await fetch(`http://127.0.0.1:${ports.ui}/api/health`)).status, 200);
    } finally {
      assert.equal(await run.stop(), 0);
    }
  },
);

test('--open and OTLP_MOCK_OPEN=1 hand the UI address to the system opener', { skip: process.platform === 'win32' && 'uses start' }, async (t) => {
  const bin = mkdtempSync(join(tmpdir(), 'otlp-mock-opener-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  const log = join(bin, 'opened.txt');
  writeFileSync(join(bin, opener), `#!/bin/sh\necho "$@" >> '${log}'\n`, { mode: 0o755 });
  for (const [args, env] of /** @type {[string[], Record<string, string>][]} */ ([
    [['--open'], {}],
    [[], { OTLP_MOCK_OPEN: '1' }],
  ])) {
    rmSync(log, { force: true });
    const run = cli([...FREE_PORTS, '--print', 'none', ...args], { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}` });
    try {
      const ports = await run.banner();
      const opened = await waitFor(() => existsSync(log) && readFileSync(log, 'utf8'), { what: `${opener} to be run` });
      assert.equal(opened, `http://127.0.0.1:${ports.ui}\n`);
      assert.doesNotMatch(run.out.stdout, /no browser opened/);
    } finally {
      await run.stop();
    }
  }
});

test('on exit, the console summary says in a line per client what it sent and how', async () => {
  const run = cli([...FREE_PORTS, '--print', 'summary']);
  const { http } = await run.banner();
  const body = JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'checkout' } },
            { key: 'service.instance.id', value: { stringValue: 'c-1' } },
          ],
        },
        scopeSpans: [{ spans: [{ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), name: 'pay', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }],
      },
    ],
  });
  const res = await fetch(`http://127.0.0.1:${http}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'cli-test/1' }, body });
  assert.equal(res.status, 200);
  assert.equal(await run.stop(), 0);
  assert.match(
    run.out.stdout,
    /\nClients {4}1\n {2}checkout c-1 \(cli-test\/1, http\/json\): 1 requests, 1 items, \d+ B on the wire \(none, 1×\), \d+ B\/item, batches 1–1 \(median 1\), 1 at once, answered in \d+ ms \(median\), 0 faults, 0 retries\n$/,
  );
});
