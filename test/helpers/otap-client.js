// The Go OTAP client (test/otap, on otel-arrow's own producer, as the Collector's otelarrow exporter uses it): built
// once per suite, run against a collector. Without go a developer's run skips what needs it and says why; CI=true
// makes that a failure.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * @param {string} command @param {string[]} args @param {string} [cwd]
 * @returns {Promise<{ code: number|string, stdout: string, stderr: string }>}
 */
function run(command, args, cwd = root) {
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (/** @type {any} */ (err).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const hasGo = (await run('go', ['version'])).code === 0;
/** Why the Go client cannot run here, or false: pass it as each test's `skip`. */
export const otapSkip = hasGo || process.env.CI === 'true' ? false : 'go is not installed (https://go.dev/dl; .ci/run installs it); CI=true makes this a failure';

/**
 * Registers the suite's `before` (build) and `after` (clean up); returns `send`, which runs the client against a
 * collector and resolves with the statuses it read and its summary.
 */
export function otapClient() {
  const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-otap-'));
  const client = join(dir, 'otap-client');
  before(async () => {
    if (otapSkip) return;
    const built = await run('go', ['build', '-o', client, '.'], join(root, 'test/otap'));
    assert.equal(built.code, 0, built.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  /**
   * @param {{ urls: { grpc: string } }} collector @param {string[]} args
   * @returns {Promise<{ statuses: any[], summary: any }>}
   */
  return async function send(collector, args) {
    const endpoint = new URL(collector.urls.grpc).host;
    const { code, stdout, stderr } = await run(client, ['-endpoint', endpoint, ...args]);
    assert.equal(code, 0, stderr);
    const lines = stdout
      .trim()
      .split('\n')
      .map((/** @type {any} */ line) => JSON.parse(line));
    const summary = lines.pop();
    return { statuses: lines, summary };
  };
}
