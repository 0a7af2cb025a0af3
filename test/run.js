// `npm test`: builds the web UI when it is missing or stale, type-checks, lints, checks the format, then runs every suite under test/.
// A green run fits on one screen: a line per step and per test folder, then what failed or was skipped and why,
// then one closing line of counts (test/reporter.js). The full TAP is kept in a file; OTLP_MOCK_TEST_VERBOSE=1
// (or --verbose) prints it instead, and every step's own output.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const verbose = args.includes('--verbose') || ['1', 'true', 'yes'].includes((process.env.OTLP_MOCK_TEST_VERBOSE ?? '').toLowerCase());
const only = args.filter((a) => a !== '--verbose');
const tapFile = join(root, 'node_modules/.cache/otlp-mock/test.tap');

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs a step quietly; its output is shown only when it fails (or when verbose). @param {string} what @param {string[]} command */
function step(what, command) {
  const started = Date.now();
  const result = spawnSync(process.execPath, command, { cwd: root, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8' });
  const ok = result.status === 0;
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what.padEnd(73)} ${seconds(Date.now() - started)}\n`);
  if (ok) return;
  if (!verbose) process.stdout.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
  process.stdout.write(`\n${what} failed (exit ${result.status ?? result.signal})\n`);
  process.exit(result.status || 1);
}

/** @param {string} dir @returns {string[]} */
function testFiles(dir) {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return testFiles(path);
      return name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

/** How many of the files each folder holds: the reporter prints a folder's line once they have all finished. @param {string[]} list */
function filesPerFolder(list) {
  /** @type {Record<string, number>} */
  const counts = {};
  for (const file of list) {
    const folder = relative(root, dirname(join(root, file)));
    counts[folder] = (counts[folder] ?? 0) + 1;
  }
  return counts;
}

if (existsSync(join(root, 'scripts/build-web.js'))) step('web UI build', ['scripts/build-web.js']);
const tsc = join(root, 'node_modules/typescript/bin/tsc');
step('type check, server (tsc --noEmit)', [tsc, '--noEmit', '-p', 'tsconfig.json']);
step('type check, web UI (tsc --noEmit)', [tsc, '--noEmit', '-p', 'web/tsconfig.json']);
step('lint (eslint)', [join(root, 'node_modules/eslint/bin/eslint.js'), '--cache', '--cache-location', 'node_modules/.cache/eslint/', '.']);
step('format (prettier --check)', [
  join(root, 'node_modules/prettier/bin/prettier.cjs'),
  '--check',
  '--cache',
  '--cache-location',
  'node_modules/.cache/prettier/cache',
  '.',
]);

const files = only.length ? only : testFiles(join(root, 'test')).map((f) => relative(root, f));
mkdirSync(join(tapFile, '..'), { recursive: true });
const reporters = verbose
  ? ['--test-reporter=tap', '--test-reporter-destination=stdout']
  : ['--test-reporter=./test/reporter.js', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tapFile}`];
process.stdout.write('\n');
const tests = spawnSync(process.execPath, ['--test', ...reporters, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, OTLP_MOCK_TAP_FILE: relative(root, tapFile), OTLP_MOCK_TEST_FOLDERS: JSON.stringify(filesPerFolder(files)) },
});
process.exit(tests.status ?? 1);
