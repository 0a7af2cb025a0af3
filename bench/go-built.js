// The Go programs the benchmarks run, built from Go modules (from the proxy) into node_modules/.cache/otlp-mock/otap-bench:
// the OTAP client on otel-arrow's producer (test/otap), and the Collector's otelarrow receiver (bench/otap-collector).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cache = join(root, 'node_modules/.cache/otlp-mock/otap-bench');

/**
 * Builds the Go program in `dir` (of the project) as `name` in the cache; Go rebuilds only what changed.
 * @param {string} dir @param {string} name @returns {string} its path
 */
export function goBuilt(dir, name) {
  mkdirSync(cache, { recursive: true });
  const out = join(cache, name);
  execFileSync('go', ['build', '-o', out, '.'], { cwd: join(root, dir), stdio: 'inherit' });
  return out;
}
