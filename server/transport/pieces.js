// A decoded body's output, gathered until the body is whole. Pieces held to the end of a long decode outlive V8's
// young-generation collections, and memory held outside the heap that grows by tens of MiB makes V8 mark the whole
// heap (a full store's hundreds of MB) on the event loop: a bomb decoded to the request limit set one off each time.
// So past its first MiB, a body's output is copied into slabs of 1 MiB that are reused from body to body: what a
// decoder allocates is dropped as soon as it is copied and dies young, and the slabs stay where they are. Bodies
// decoded to the 64 MiB limit beside a large live heap, full collections before / after: zstd (12 bodies) 8-9 / 1-3,
// gzip (8) 7 / 1, lz4 (8) 4-5 / 1, and the decodes took about half as long. A decoder that knows its output's size
// first (a snappy block) writes it into one borrowed buffer instead (`borrow`), reused once a body in it is refused.
import { overLimit } from './codec-error.js';
import { JOIN_AT_ONCE, joinInSlices } from './slices.js';

const SLAB = 1 << 20;
/**
 * Memory kept for reuse once given back, slabs and borrowed bodies together: two bodies at the 64 MiB default limit,
 * what two clients sending bombs side by side hold. More is allocated when needed and dropped when given back.
 */
export const MAX_POOLED_BYTES = 128 * SLAB;
/** Memory kept for reuse is let go once none has been taken for this long, so that an idle server holds none. */
export const POOLED_FOR_MS = 2000;

/** @type {Buffer[]} */
const slabPool = [];
/** @type {Buffer[]} whole buffers that borrowed bodies were views of */
const bodyPool = [];
let pooledBytes = 0;
let lastTaken = 0;
/** @type {NodeJS.Timeout|null} */
let trimTimer = null;

function takeSlab() {
  lastTaken = performance.now();
  const slab = slabPool.pop();
  if (!slab) return Buffer.allocUnsafeSlow(SLAB);
  pooledBytes -= SLAB;
  return slab;
}

/** @param {Buffer[]} into @param {Buffer} buffer */
function pool(into, buffer) {
  if (pooledBytes + buffer.length > MAX_POOLED_BYTES) return;
  into.push(buffer);
  pooledBytes += buffer.length;
  if (!trimTimer) trimTimer = setTimeout(trim, POOLED_FOR_MS).unref();
}

function trim() {
  trimTimer = null;
  const idle = performance.now() - lastTaken;
  if (idle >= POOLED_FOR_MS) {
    slabPool.length = 0;
    bodyPool.length = 0;
    pooledBytes = 0;
  } else trimTimer = setTimeout(trim, POOLED_FOR_MS - idle).unref();
}

/** Slabs kept for reuse now (for tests). */
export function pooledSlabs() {
  return slabPool.length;
}

/** Bytes kept for reuse now, slabs and borrowed bodies (for tests). */
export function pooledMemory() {
  return pooledBytes;
}

/**
 * A body larger than this that is decoded into memory of known size (a snappy block) is decoded into borrowed
 * memory (`borrow`): the size past which its items are counted in slices before it is decoded (receive.js).
 */
export const BORROWED_FROM = 1 << 20;

/** @type {WeakMap<Buffer, Buffer>} each borrowed body, and the whole buffer it is a view of, until it is given back or owned */
const lenders = new WeakMap();

/**
 * Memory for a decoded body of `length` bytes, reused from an earlier body that was refused when there is some: a
 * client that loops bombs of a few MB that expand to tens of MB of fields that are not OTLP would otherwise have every
 * body's memory freshly mapped, zeroed by the kernel and unmapped again, and its growth makes V8 collect the whole
 * heap sooner (`npm run soak`, 3 MB snappy blocks of 63 MB that are not OTLP, five rounds a case, same session: normal
 * ingest beside two senders over OTLP/HTTP rose from 0.81 of its rate to 0.85, over gRPC from 0.79 to 0.87). The body
 * is handed on as it is, to be counted (receive.js) and then `owned` or given back.
 * @param {number} length @returns {Buffer}
 */
export function borrow(length) {
  lastTaken = performance.now();
  let best = -1;
  for (let i = 0; i < bodyPool.length; i++) if (bodyPool[i].length >= length && (best < 0 || bodyPool[i].length < bodyPool[best].length)) best = i;
  const whole = best < 0 ? Buffer.allocUnsafeSlow(length) : bodyPool.splice(best, 1)[0];
  if (best >= 0) pooledBytes -= whole.length;
  const body = whole.subarray(0, length);
  lenders.set(body, whole);
  return body;
}

/** Whether a body is borrowed memory (`borrow`) that is not owned yet. @param {Buffer} body */
export function isBorrowed(body) {
  return lenders.has(body);
}

/**
 * Gives a borrowed body's memory back, to be reused: the caller holds no view of it any more. Does nothing for a body
 * that is not borrowed, or was given back or owned already. @param {Buffer} body
 */
export function giveBack(body) {
  const whole = lenders.get(body);
  if (!whole) return;
  lenders.delete(body);
  pool(bodyPool, whole);
}

/**
 * A body in memory of its own, to be handed on and kept: a borrowed one that fills its memory is kept as it is, and
 * one in a larger buffer is copied, a slice at a time, and its memory given back. Any other body is returned as it is.
 * @param {Buffer} body @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function owned(body, slicer) {
  const whole = lenders.get(body);
  if (!whole) return body;
  if (whole.length === body.length) {
    lenders.delete(body);
    return body;
  }
  const copy = await joinInSlices([body], body.length, slicer, false);
  giveBack(body);
  return copy;
}

export class Pieces {
  /** @param {number} limit the most bytes the body may decode to */
  constructor(limit) {
    this.limit = limit;
    /** Bytes gathered. */
    this.size = 0;
    /** @type {Uint8Array[]} the first MiB's pieces, as the decoder made them */
    this.made = [];
    /** @type {Buffer[]} */
    this.slabs = [];
    /** Bytes used of the last slab. */
    this.used = 0;
  }

  /**
   * Adds the next piece of output; throws the over-limit DecompressError when the body passes its limit.
   * @param {Uint8Array} piece @param {boolean} [reused] the decoder writes over the piece's memory later (a window
   *   buffer), so it is copied even where it would be kept as it is
   */
  add(piece, reused = false) {
    const size = this.size + piece.length;
    if (size > this.limit) throw overLimit(this.limit);
    this.size = size;
    // Small bodies, what exporters send, are kept as they were made: copied into slabs, each would be copied twice.
    if (size <= JOIN_AT_ONCE && this.slabs.length === 0) {
      this.made.push(reused ? Buffer.from(piece) : piece);
      return;
    }
    for (let at = 0; at < piece.length;) {
      if (this.slabs.length === 0 || this.used === SLAB) {
        this.slabs.push(takeSlab());
        this.used = 0;
      }
      const n = Math.min(piece.length - at, SLAB - this.used);
      this.slabs[this.slabs.length - 1].set(piece.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
    }
  }

  /**
   * The body, in a buffer of its own and exactly its size, copied in slices.
   * @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
   */
  join(slicer) {
    if (this.slabs.length === 0) return joinInSlices(this.made, this.size, slicer);
    const last = this.slabs.length - 1;
    const parts = [...this.made, ...this.slabs.map((slab, i) => (i === last ? slab.subarray(0, this.used) : slab))];
    return joinInSlices(parts, this.size, slicer, false);
  }

  /** Gives the slabs back, once the body is joined or refused; later calls do nothing. */
  release() {
    for (const slab of this.slabs) pool(slabPool, slab);
    this.slabs = [];
    this.made = [];
    this.used = 0;
  }
}

/**
 * A decoder's output, gathered as `decode` adds it and joined once it returns: the slabs go back however it ends
 * (joined, refused, or its client gone).
 * @param {number} limit @param {import('./slices.js').Slicer} slicer @param {(pieces: Pieces) => Promise<unknown>} decode
 * @returns {Promise<Buffer>}
 */
export async function gathered(limit, slicer, decode) {
  const pieces = new Pieces(limit);
  try {
    await decode(pieces);
    return await pieces.join(slicer);
  } finally {
    pieces.release();
  }
}
