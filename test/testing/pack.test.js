// The package a test suite installs: `npm pack` of a clean checkout (no web/dist, no types/) builds the UI and
// the declarations; the tarball installed into an empty project runs with `npx otlp-mock`, serves the UI to
// Chromium, and type-checks under `tsc --strict` through both entry points.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumMissing, launchChromium } from '../../scripts/chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const noChromium = chromiumMissing;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** @type {string} */
let work;
/** @type {string} the empty project the tarball is installed into */
let project;
/** @type {string[]} */
let packed;
/** @type {string} what `npm install` of the tarball printed */
let installOutput;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'otlp-mock-pack-'));
  // What a clean clone holds: the files git tracks or would track, none of what a build makes.
  const checkout = join(work, 'checkout');
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    cpSync(join(root, file), join(checkout, file));
  }
  // The build tools come from this checkout's install, as `npm ci` would have put them there.
  symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  const out = execFileSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  packed = info.files.map((/** @type {{ path: string }} */ f) => f.path);
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pack-test', private: true, type: 'module' }));
  // npm's default log level, as a user sees it: warnings included.
  const install = spawnSync(npm, ['install', '--no-audit', '--no-fund', join(work, info.filename), '@types/node@20'], { cwd: project, encoding: 'utf8' });
  installOutput = `${install.stdout}${install.stderr}`;
  assert.equal(install.status, 0, installOutput);
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the built UI and the declarations of both entry points', () => {
  assert.ok(packed.includes('web/dist/index.html'), 'web/dist/index.html');
  assert.ok(
    packed.some((p) => /^web\/dist\/assets\/index-.*\.js$/.test(p)),
    'the UI bundle',
  );
  assert.ok(packed.includes('types/index.d.ts'));
  assert.ok(packed.includes('types/client/index.d.ts'));
  assert.ok(!packed.some((p) => p.startsWith('test/') || p.startsWith('web/src/')), 'no tests or UI sources');
});

test('installing the tarball warns of no engine mismatch on this Node (a dependency that needs a newer one)', () => {
  assert.doesNotMatch(installOutput, /EBADENGINE/, installOutput);
});

test('installed into an empty project: npx otlp-mock starts, and Chromium loads its UI', { skip: noChromium }, async () => {
  const child = spawn(npm, ['exec', '--', 'otlp-mock', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--print', 'none'], {
    cwd: project,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: npm exec runs the bin under a shell, and stopping the group stops all three.
    detached: true,
  });
  let output = '';
  try {
    const ui = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npx otlp-mock printed no UI address in 30 s:\n${output}`)), 30_000);
      const read = (/** @type {Buffer} */ chunk) => {
        output += chunk;
        const found = /UI \+ API\s+(http:\/\/\S+)/.exec(output);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.on('exit', (code) => reject(new Error(`npx otlp-mock exited with ${code}:\n${output}`)));
    });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${ui}/traces`);
      await page.waitForSelector('[data-status="live"]', { timeout: 15_000 });
      assert.equal(await page.getByText('the web UI has not been built').count(), 0);
    } finally {
      await browser.close();
    }
  } finally {
    process.kill(-(/** @type {number} */ (child.pid)), 'SIGTERM');
  }
});

test('tsc --strict compiles a file that imports otlp-mock and otlp-mock/client', () => {
  writeFileSync(
    join(project, 'check.ts'),
    `import { startCollector } from 'otlp-mock';
import { OtlpMock, OtlpMockAssertionError, snapshotDiff, type Span, type VerifyResult } from 'otlp-mock/client';

export async function check(): Promise<string> {
  const collector = await startCollector({ grpcPort: 0, httpPort: 0, uiPort: 0 });
  const mock: OtlpMock = new OtlpMock(collector.urls.ui, { token: 'secret' });
  const spans: Span[] = await mock.waitForSpans({ service: 'checkout' }, { count: 1, timeoutMs: 1000 });
  const result: VerifyResult = await mock.verify({ timeoutMs: 10, expectations: [{ signal: 'spans', where: { name: spans[0].name }, count: { exactly: 1 } }] });
  const report = await mock.faults.report('f1');
  await collector.stop();
  return result.ok ? report.verdict : snapshotDiff({}, await mock.snapshot({ signal: 'traces' })) + String(OtlpMockAssertionError);
}
`,
  );
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const args = ['--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', 'check.ts'];
  try {
    execFileSync(process.execPath, [tsc, ...args], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    assert.fail(`tsc --strict failed:\n${/** @type {any} */ (err).stdout}${/** @type {any} */ (err).stderr}`);
  }
  assert.ok(readdirSync(join(project, 'node_modules/otlp-mock/types')).includes('index.d.ts'));
});
