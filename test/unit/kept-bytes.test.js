// The memory kept request bytes are carved from (server/otlp/kept-bytes.js): a slab is carved again only once every
// view carved from it has been collected, so bytes still held are never written over.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LARGEST_KEPT, SLAB_BYTES, isKeptWhole, keptBuffer, keptCopy } from '../../server/otlp/kept-bytes.js';

const KEPT_BYTES = fileURLToPath(new URL('../../server/otlp/kept-bytes.js', import.meta.url));

/**
 * Runs `body` in a fresh process that can collect garbage at will (`collect()`: a full collection, then a turn of the
 * event loop for the finalizers), with the module's exports in scope; returns what it prints as JSON.
 * @param {string} body
 */
function inFreshProcess(body) {
  const script = `
    const { keptBuffer, slabCounts, SLAB_BYTES, LARGEST_KEPT, MAX_SLABS } = await import(${JSON.stringify(KEPT_BYTES)});
    const collect = async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    ${body}`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out);
}

test('requests of one kind are carved one after another from one slab, of another kind from another', () => {
  const a1 = keptBuffer(1000, 'test-a');
  const a2 = keptBuffer(2000, 'test-a');
  const b = keptBuffer(1000, 'test-b');
  assert.equal(a1.length, 1000);
  assert.equal(a2.length, 2000);
  assert.equal(a1.buffer, a2.buffer, 'one slab');
  assert.equal(a2.byteOffset, a1.byteOffset + a1.length, 'one after another');
  assert.notEqual(b.buffer, a1.buffer, 'another slab');
  assert.equal(a1.buffer.byteLength, SLAB_BYTES);
});

test('a request larger than a quarter slab, or empty, gets a buffer of its own', () => {
  for (const length of [LARGEST_KEPT + 1, 0, SLAB_BYTES * 2]) {
    const own = keptBuffer(length, 'test-large');
    assert.equal(own.length, length);
    assert.equal(own.byteOffset, 0);
    assert.equal(own.buffer.byteLength, length);
  }
  assert.equal(keptBuffer(LARGEST_KEPT, 'test-large').buffer.byteLength, SLAB_BYTES, 'a quarter slab is carved');
});

test('a copy holds the bytes; a carved view and a buffer of its own may be kept as they are, a view into either may not', () => {
  const bytes = Buffer.from('the bytes of a request');
  const copy = keptCopy(bytes, 'test-copy');
  assert.deepEqual(copy, bytes);
  assert.notEqual(copy.buffer, bytes.buffer);
  assert.equal(isKeptWhole(copy), true, 'carved');
  assert.equal(isKeptWhole(copy.subarray(1)), false, 'part of a carved view is not tracked');
  assert.equal(isKeptWhole(Buffer.allocUnsafeSlow(100)), true, 'a buffer of its own');
  assert.equal(isKeptWhole(Buffer.allocUnsafeSlow(100).subarray(10, 20)), false, 'a view into a larger buffer');
  assert.equal(isKeptWhole(Buffer.from('pooled')), false, 'a view into the pool of small buffers');
});

test('a slab is not carved again while any view carved from it is held', () => {
  const seen = inFreshProcess(`
    // Four quarters fill the first slab; the fifth request starts a second one and ends the first.
    let views = Array.from({ length: 5 }, () => keptBuffer(LARGEST_KEPT, 'a'));
    const firstSlab = views[0].buffer;
    const fifthElsewhere = views[4].buffer !== firstSlab;
    const held = views[2];
    held.fill(7);
    views = null;
    await collect();
    const freeWhileHeld = slabCounts().free;
    // Requests of another kind need slabs of their own: not the first, while one of its views is held.
    const other = Array.from({ length: 8 }, () => keptBuffer(LARGEST_KEPT, 'b'));
    const reusedWhileHeld = other.some((v) => v.buffer === firstSlab);
    other.forEach((v) => v.fill(9));
    const heldIntact = held.every((b) => b === 7);
    console.log(JSON.stringify({ fifthElsewhere, freeWhileHeld, reusedWhileHeld, heldIntact }));
  `);
  assert.equal(seen.fifthElsewhere, true, 'a slab with views carved from it is not carved again');
  assert.equal(seen.freeWhileHeld, 0, 'no slab is free: the first has a view held, the second is being carved');
  assert.equal(seen.reusedWhileHeld, false, 'a slab with a view still held is not carved again');
  assert.equal(seen.heldIntact, true);
});

test('once its last view is collected, a slab is carved again, and bytes still held are never written over', () => {
  const seen = inFreshProcess(`
    // The first slab: filled, ended, and all of it dropped.
    let views = Array.from({ length: 5 }, () => keptBuffer(LARGEST_KEPT, 'a'));
    const firstSlab = views[0].buffer;
    views = null;
    await collect();
    const freed = slabCounts().free;
    const again = keptBuffer(1000, 'b');
    const reused = again.buffer === firstSlab;

    // Churn: 30 rounds of 6 MB of requests, each dropped but for some of the first two rounds', which are held and
    // checked at the end, with collections between.
    const held = [];
    let pattern = 0;
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 200; i++) {
        const length = 1 + ((round * 7919 + i * 104729) % 60000);
        const view = keptBuffer(length, i % 3 === 0 ? 'a' : 'b');
        view.fill(pattern = (pattern + 1) % 251);
        if (round < 2 && i % 20 === 0) held.push({ view, pattern });
      }
      await collect();
    }
    const intact = held.every(({ view, pattern }) => view.every((b) => b === pattern));
    const { slabs } = slabCounts();
    console.log(JSON.stringify({ freed, reused, intact, held: held.length, slabs, max: MAX_SLABS }));
  `);
  assert.equal(seen.freed, 1, 'the ended slab is free once its views are collected');
  assert.equal(seen.reused, true, 'and carved again');
  assert.equal(seen.intact, true, `all ${seen.held} held requests kept their bytes through the churn`);
  // The held requests pin the slabs of the first two rounds (about 12); each round carves about 6 more.
  assert.ok(seen.slabs <= 24, `slabs are used again rather than made anew: ${seen.slabs} made for 180 MB`);
});

test('past the most slabs there may be, requests get buffers of their own', () => {
  const seen = inFreshProcess(`
    const held = [];
    for (let i = 0; i < MAX_SLABS * 4 + 8; i++) held.push(keptBuffer(LARGEST_KEPT, 'a'));
    const carvedCount = held.filter((v) => v.buffer.byteLength === SLAB_BYTES).length;
    const own = held.filter((v) => v.buffer.byteLength === LARGEST_KEPT).length;
    console.log(JSON.stringify({ carvedCount, own, slabs: slabCounts().slabs, max: MAX_SLABS }));
  `);
  assert.equal(seen.slabs, seen.max);
  assert.equal(seen.carvedCount, seen.max * 4);
  assert.equal(seen.own, 8);
});

test('free slabs that no request needed since the last trim are let go; those needed stay', () => {
  const seen = inFreshProcess(`
    const { trim } = await import(${JSON.stringify(KEPT_BYTES)});
    // Ten slabs filled, ended and dropped: ten free after a collection, and an eleventh being filled.
    let views = Array.from({ length: 41 }, () => keptBuffer(LARGEST_KEPT, 'a'));
    views = null;
    await collect();
    const before = slabCounts();
    trim();
    const afterFirst = slabCounts();
    // Since the first trim, requests needed three of the ten free slabs: the seven others were never needed.
    const needed = Array.from({ length: 12 }, () => keptBuffer(LARGEST_KEPT, 'b'));
    const beforeSecond = slabCounts();
    trim();
    const afterSecond = slabCounts();
    const neededIntact = needed.every((v) => v.buffer.byteLength === SLAB_BYTES);
    console.log(JSON.stringify({ before, afterFirst, beforeSecond, afterSecond, neededIntact }));
  `);
  assert.deepEqual(seen.before, { slabs: 11, most: 256, free: 10, filling: 1 });
  assert.deepEqual(seen.afterFirst, seen.before, 'the first trim lets none go: slabs were made since the start, none were spare');
  assert.deepEqual(seen.beforeSecond, { slabs: 11, most: 256, free: 7, filling: 2 });
  assert.deepEqual(seen.afterSecond, { slabs: 4, most: 256, free: 0, filling: 2 }, 'the seven never needed go; the three carved from and the one being filled stay');
  assert.equal(seen.neededIntact, true);
});

test('a server whose stores may keep little gets few slabs: as many MiB as the budgets, the largest of several', () => {
  const seen = inFreshProcess(`
    const { allowKeptBytes } = await import(${JSON.stringify(KEPT_BYTES)});
    allowKeptBytes(8 * SLAB_BYTES - 1);
    const small = slabCounts().most;
    const held = Array.from({ length: 8 * 4 + 1 }, () => keptBuffer(LARGEST_KEPT, 'a'));
    const ownPastThem = held.at(-1).buffer.byteLength === LARGEST_KEPT;
    allowKeptBytes(2 * SLAB_BYTES);
    const afterSmaller = slabCounts().most;
    allowKeptBytes(Infinity);
    const unbounded = slabCounts().most;
    console.log(JSON.stringify({ small, ownPastThem, afterSmaller, unbounded, max: MAX_SLABS }));
  `);
  assert.equal(seen.small, 8);
  assert.equal(seen.ownPastThem, true, 'past 8 slabs, a buffer of its own');
  assert.equal(seen.afterSmaller, 8, 'a second, smaller budget does not shrink the first');
  assert.equal(seen.unbounded, seen.max);
});

test('a gRPC message kept as it is is carved here; a compressed one, dropped once inflated, is not', () => {
  const href = (/** @type {string} */ path) => JSON.stringify(new URL(path, import.meta.url).href);
  const fixture = JSON.stringify(fileURLToPath(new URL('../../fixtures/traces.pb', import.meta.url)));
  // A file rather than --eval: the collector's worker threads take the process's flags, and --input-type is for --eval.
  const dir = mkdtempSync(join(tmpdir(), 'kept-bytes-'));
  const script = join(dir, 'grpc.mjs');
  writeFileSync(
    script,
    `
    const { slabCounts } = await import(${href('../../server/otlp/kept-bytes.js')});
    const { startTestCollector } = await import(${href('../helpers/collector.js')});
    const { rawGrpcClient } = await import(${href('../helpers/grpc.js')});
    const { readFileSync } = await import('node:fs');
    const SERVICE = 'opentelemetry.proto.collector.trace.v1.TraceService';
    const request = readFileSync(${fixture});
    const collector = await startTestCollector();
    const exported = async (client) => {
      const { error } = await client.exportRaw(SERVICE, request);
      if (error) throw error;
      client.close();
    };
    for (let i = 0; i < 20; i++) await exported(rawGrpcClient(collector.urls.grpc, { compression: 'gzip' }));
    const afterCompressed = slabCounts().slabs;
    await exported(rawGrpcClient(collector.urls.grpc));
    const afterPlain = slabCounts().slabs;
    await collector.stop();
    console.log(JSON.stringify({ afterCompressed, afterPlain }));
    process.exit(0);
  `,
  );
  let counts;
  try {
    counts = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(counts.afterCompressed, 0, 'compressed messages took no slab');
  assert.equal(counts.afterPlain, 1, 'a message kept as it is is carved from a slab');
});
