// The command line's heap room (server/heap.js): after a full collection, V8 lets the heap grow fourfold, unless node was
// started with a growing factor of its own. Read from V8's own trace of each collection's new limit.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HEAP = fileURLToPath(new URL('../../server/heap.js', import.meta.url));

/** The growing factors V8 traced for the full collections of a process that keeps heap room. @param {string[]} flags */
function factors(flags) {
  const script = `
    const { keepHeapRoom } = await import(${JSON.stringify(HEAP)});
    keepHeapRoom();
    const kept = Array.from({ length: 100000 }, (_, i) => ({ i }));
    gc();
    gc();
    if (kept.length !== 100000) process.exit(1);`;
  const trace = execFileSync(process.execPath, ['--expose-gc', '--trace-gc-verbose', ...flags, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return [...trace.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => Number(m[1]));
}

test('the heap may grow fourfold after a full collection', () => {
  const seen = factors([]);
  assert.ok(seen.length >= 2, `V8 traced its limits: ${seen}`);
  assert.deepEqual(new Set(seen), new Set([4]), `every factor is 4: ${seen}`);
});

test('a growing factor node was started with is left as it is', () => {
  const seen = factors(['--heap-growing-percent=50']);
  assert.ok(seen.length >= 2, `V8 traced its limits: ${seen}`);
  assert.deepEqual(new Set(seen), new Set([1.5]), `every factor is 1.5: ${seen}`);
});
