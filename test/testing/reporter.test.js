// `npm test`'s summary (test/reporter.js): every skipped test and every suite skipped as a whole is listed with its
// reason and counted, in the folder's line and in the closing line CI reads; a line per folder, not per file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const reporter = fileURLToPath(new URL('../reporter.js', import.meta.url));

// Without the variable node sets for a test file's process: with it, the inner run would report to this one.
const { NODE_TEST_CONTEXT: _, ...ownEnv } = process.env;

/** @type {string} */
let dir;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'otlp-mock-reporter-'));
  mkdirSync(join(dir, 'suites'));
  writeFileSync(
    join(dir, 'suites/skips.test.js'),
    `import { test, describe } from 'node:test';
test('runs', () => {});
test('needs a browser', { skip: 'no Chromium here' }, () => {});
describe('through the Collector', { skip: 'no Collector binary at /opt/otelcol (set OTELCOL_BIN)' }, () => {
  test('one', () => {});
  test('two', () => {});
});
`,
  );
  writeFileSync(join(dir, 'suites/plain.test.js'), `import { test } from 'node:test';\ntest('a', () => {});\ntest('b', () => {});\n`);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** @param {Record<string, string>} [env] */
function run(env = {}) {
  const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, 'suites/skips.test.js', 'suites/plain.test.js'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...ownEnv, OTLP_MOCK_TAP_FILE: '', ...env },
  });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  return result.stdout;
}

test('a suite skipped as a whole is listed with its reason and counted, beside a skipped test', () => {
  const out = run();
  const lines = out.trimEnd().split('\n');
  assert.ok(lines.includes('Skipped (2):'), out);
  assert.ok(lines.includes('  suites/skips.test.js:4  through the Collector (the whole suite) — no Collector binary at /opt/otelcol (set OTELCOL_BIN)'), out);
  assert.ok(lines.includes('  suites/skips.test.js:3  needs a browser — no Chromium here'), out);
  assert.match(lines.at(-1) ?? '', /^3 passed, 0 failed, 2 skipped, 0 todo in 2 files, \d/);
});

test('one line for the folder, printed as its last file finishes, with the counts of all of its files', () => {
  const out = run({ OTLP_MOCK_TEST_FOLDERS: JSON.stringify({ suites: 2 }) });
  const folderLines = out.split('\n').filter((l) => /^(ok {2}|skip|FAIL) /.test(l));
  assert.equal(folderLines.length, 1, out);
  assert.match(folderLines[0], /^skip suites +2 files {2}3 passed, 2 skipped +\d/);
});
