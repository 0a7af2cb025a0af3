// A decoded body's output (pieces.js): kept as made for its first MiB, then copied into slabs that are reused from
// body to body; or decoded into borrowed memory, reused once a body in it is refused. A body handed on must never
// share memory with a slab or a borrowed buffer that a later body writes over.
import test from 'node:test';
import assert from 'node:assert/strict';
import { MAX_POOLED_BYTES, POOLED_FOR_MS, Pieces, borrow, gathered, giveBack, isBorrowed, owned, pooledMemory, pooledSlabs } from '../../server/transport/pieces.js';
import { DecompressError } from '../../server/transport/codec-error.js';
import { Slicer } from '../../server/transport/slices.js';

const MiB = 1024 * 1024;

/** `size` bytes of a pattern that differs for each `seed`. @param {number} size @param {number} seed */
function pattern(size, seed) {
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed * 7 + (i >> 12)) & 0xff;
  return bytes;
}

/** Gathers `body` in pieces of the given sizes (the last takes the rest) and joins it. @param {Buffer} body @param {number[]} sizes */
function inPieces(body, sizes) {
  return gathered(64 * MiB, new Slicer(), async (pieces) => {
    let at = 0;
    for (const size of sizes) {
      pieces.add(body.subarray(at, Math.min(body.length, at + size)));
      at += size;
    }
    if (at < body.length) pieces.add(body.subarray(at));
  });
}

test('a body is joined exactly, whatever the sizes of its pieces and wherever the first MiB ends among them', async () => {
  const cases = /** @type {[number, number[]][]} */ ([
    [1000, [1000]],
    [MiB, [MiB / 2, MiB / 2]],
    [MiB + 1, [MiB, 1]],
    [MiB + 1, [MiB + 1]],
    [3 * MiB + 17, [300_000, 900_000, 5]],
    [5 * MiB, [4 * MiB]],
    [2 * MiB, [MiB, MiB]],
  ]);
  for (const [size, sizes] of cases) {
    const body = pattern(size, size);
    const joined = await inPieces(body, sizes);
    assert.equal(joined.length, size);
    assert.ok(joined.equals(body), `${size} bytes in pieces of ${sizes.join(', ')}`);
    assert.equal(joined.buffer.byteLength >= size, true);
  }
});

test('a body handed on keeps its bytes when later bodies reuse the slabs it was gathered in', async () => {
  const first = pattern(3 * MiB, 1);
  const joinedFirst = await inPieces(first, [64 * 1024]);
  assert.ok(pooledSlabs() > 0, 'the slabs went back to be reused');
  // a body of a MiB as made and one whole slab after it
  const second = pattern(2 * MiB, 2);
  const joinedSecond = await inPieces(second, [MiB, MiB]);
  const third = pattern(3 * MiB, 3);
  await inPieces(third, [128 * 1024]);
  assert.ok(joinedFirst.equals(first), 'the first body is unchanged');
  assert.ok(joinedSecond.equals(second), 'the second body is unchanged');
});

test('a piece the decoder writes over later is copied when kept as made', async () => {
  const window = pattern(64 * 1024, 4);
  const expected = Buffer.from(window);
  const pieces = new Pieces(MiB);
  pieces.add(window, true);
  window.fill(0);
  assert.ok((await pieces.join(new Slicer())).equals(expected));
});

test('past the limit, an over-limit DecompressError; the slabs go back when released, and once only', () => {
  const pieces = new Pieces(3 * MiB);
  pieces.add(pattern(2 * MiB, 5));
  assert.throws(
    () => pieces.add(pattern(MiB + 1, 6)),
    (err) => err instanceof DecompressError && err.tooLarge && err.pastLimit,
  );
  const before = pooledSlabs();
  pieces.release();
  const after = pooledSlabs();
  assert.ok(after > before || pooledMemory() + MiB > MAX_POOLED_BYTES, `${before} slabs pooled before the release, ${after} after`);
  pieces.release();
  assert.equal(pooledSlabs(), after);
});

test(`memory kept for reuse is let go once none has been taken for ${POOLED_FOR_MS} ms`, async () => {
  await inPieces(pattern(2 * MiB, 7), [MiB]);
  giveBack(borrow(2 * MiB));
  assert.ok(pooledSlabs() > 0);
  await new Promise((resolve) => setTimeout(resolve, POOLED_FOR_MS * 2 + 100));
  assert.equal(pooledSlabs(), 0);
  assert.equal(pooledMemory(), 0);
});

test("a refused body's borrowed memory is reused by the next body that fits in it, and only once given back", () => {
  const first = borrow(3 * MiB);
  assert.ok(isBorrowed(first));
  const meanwhile = borrow(2 * MiB);
  assert.ok(meanwhile.buffer !== first.buffer, 'memory not given back is not lent twice');
  giveBack(first);
  assert.ok(!isBorrowed(first));
  const second = borrow(2 * MiB);
  assert.ok(second.buffer === first.buffer, "the smaller body reuses the larger one's memory");
  assert.equal(second.length, 2 * MiB);
  giveBack(second);
  giveBack(second);
  giveBack(meanwhile);
  assert.ok(pooledMemory() <= MAX_POOLED_BYTES);
});

test('an owned body keeps its bytes when later bodies reuse the memory it was borrowed in', async () => {
  const bomb = borrow(9 * MiB);
  giveBack(bomb);
  const body = borrow(8 * MiB + 1);
  assert.ok(body.buffer === bomb.buffer, "the body reuses the refused one's memory");
  pattern(body.length, 8).copy(body);
  const kept = await owned(body, new Slicer());
  assert.ok(!isBorrowed(body) && !isBorrowed(kept));
  assert.ok(kept.buffer !== body.buffer, 'a body in a larger buffer is copied into one of its own');
  assert.equal(kept.buffer.byteLength, kept.length);
  const next = borrow(9 * MiB);
  assert.ok(next.buffer === bomb.buffer, "the copied body's memory was given back");
  next.fill(0xee);
  assert.ok(kept.equals(pattern(8 * MiB + 1, 8)), 'the owned body is unchanged');

  const exact = borrow(5 * MiB);
  const alone = await owned(exact, new Slicer());
  assert.ok(alone === exact, 'a body that fills its memory is owned as it is');
  giveBack(exact);
  assert.ok(borrow(5 * MiB).buffer !== alone.buffer, 'and its memory is never lent again');
});
