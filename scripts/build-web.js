#!/usr/bin/env node
/**
 * Builds the web UI into web/dist when it is missing or older than its sources, so `npm start` and
 * `npm test` always serve the current UI without paying for a build they do not need.
 * `--force` rebuilds regardless.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const web = join(root, 'web');
const marker = join(web, 'dist', 'index.html');
const sources = [join(web, 'src'), join(web, 'index.html'), join(web, 'vite.config.ts'), join(web, 'tsconfig.json')];

/** @param {string} path @returns {{ path: string, mtimeMs: number } | null} the newest file under path */
function newest(path) {
  /** @type {import('node:fs').Stats} */
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isDirectory()) return { path, mtimeMs: st.mtimeMs };
  /** @type {{ path: string, mtimeMs: number } | null} */
  let best = null;
  for (const name of readdirSync(path)) {
    const found = newest(join(path, name));
    if (found && (!best || found.mtimeMs > best.mtimeMs)) best = found;
  }
  return best;
}

/** @returns {string | null} why a build is needed, or null when web/dist is current */
export function staleReason() {
  let built;
  try {
    built = statSync(marker).mtimeMs;
  } catch {
    return 'web/dist is missing';
  }
  for (const source of sources) {
    const found = newest(source);
    if (found && found.mtimeMs > built) return `${relative(root, found.path)} changed since the last build`;
  }
  return null;
}

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json)$/;

/**
 * Writes `.br` and `.gz` copies of the built text files next to them: the JS bundle is about 290 KB as
 * built and under 90 KB gzipped, which keeps a view's first paint well below 300 KB when the server sends
 * the copy the browser accepts. Compressed once here, so serving costs no CPU.
 * @param {string} dir
 */
export function precompress(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      precompress(path);
      continue;
    }
    if (!COMPRESSIBLE.test(name)) continue;
    const data = readFileSync(path);
    writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
    writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
  }
}

/**
 * Builds web/dist unless it is current. Returns whether it built.
 * @param {{ force?: boolean, log?: (line: string) => void }} [options]
 */
export async function buildWeb({ force = false, log = console.log } = {}) {
  const reason = force ? '--force' : staleReason();
  if (!reason) {
    log('web: web/dist is up to date with web/src, skipping the build (use --force to rebuild)');
    return false;
  }
  log(`web: building the UI (${reason})`);
  const started = performance.now();
  const { build } = await import('vite');
  await build({ configFile: join(web, 'vite.config.ts'), logLevel: 'warn' });
  precompress(join(web, 'dist'));
  log(`web: built web/dist in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildWeb({ force: process.argv.includes('--force') }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
