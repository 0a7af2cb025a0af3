// `npm test`: builds the web UI when it is missing or stale, type-checks, then runs every suite under test/.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** @param {string} what @param {string} command @param {string[]} args */
function step(what, command, args) {
  process.stdout.write(`\n== ${what}\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stdout.write(`\n${what} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status || 1);
  }
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

if (existsSync(join(root, 'scripts/build-web.js'))) step('web UI build', process.execPath, ['scripts/build-web.js']);
const tsc = join(root, 'node_modules/typescript/bin/tsc');
step('type check, server (tsc --noEmit)', process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json']);
step('type check, web UI (tsc --noEmit)', process.execPath, [tsc, '--noEmit', '-p', 'web/tsconfig.json']);
const files = testFiles(join(root, 'test')).map((f) => relative(root, f));
const only = process.argv.slice(2);
step('tests (node --test)', process.execPath, ['--test', ...(only.length ? only : files)]);
