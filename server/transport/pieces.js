// A decoded body's output, gathered until the body is whole. Pieces held to the end of a long decode outlive V8's
// young-generation collections, and memory held outside the heap that grows by tens of MiB makes V8 mark the whole
// heap (a full store's hundreds of MB) on the event loop: a bomb decoded to the request limit set one off each time.
// So past its first MiB, a body's output is copied into slabs of 1 MiB that are reused from body to body: what a
// decoder allocates is dropped as soon as it is copied and dies young, and the slabs stay where they are. Bodies
// decoded to the 64 MiB limit beside a large live heap, full collections before / after: zstd (12 bodies) 8-9 / 1-3,
// gzip (8) 7 / 1, lz4 (8) 4-5 / 1, and the decodes took about half as long.
import { overLimit } from './codec-error.js';
import { JOIN_AT_ONCE, joinInSlices } from './slices.js';

const SLAB = 1 << 20;
/**
 * Slabs kept for reuse once given back: two bodies at the 64 MiB default limit, what two clients sending bombs side
 * by side hold. More are allocated when needed and dropped when given back.
 */
export const MAX_POOLED_SLABS = 128;
/** Slabs kept for reuse are let go once none has been taken for this long, so that an idle server holds none. */
export const POOLED_FOR_MS = 2000;

/** @type {Buffer[]} */
const pool = [];
let lastTaken = 0;
/** @type {NodeJS.Timeout|null} */
let trimTimer = null;

function takeSlab() {
  lastTaken = performance.now();
  return pool.pop() ?? Buffer.allocUnsafeSlow(SLAB);
}

/** @param {Buffer[]} slabs */
function giveSlabs(slabs) {
  for (const slab of slabs) if (pool.length < MAX_POOLED_SLABS) pool.push(slab);
  if (pool.length > 0 && !trimTimer) trimTimer = setTimeout(trim, POOLED_FOR_MS).unref();
}

function trim() {
  trimTimer = null;
  const idle = performance.now() - lastTaken;
  if (idle >= POOLED_FOR_MS) pool.length = 0;
  else trimTimer = setTimeout(trim, POOLED_FOR_MS - idle).unref();
}

/** Slabs kept for reuse now (for tests). */
export function pooledSlabs() {
  return pool.length;
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
    giveSlabs(this.slabs);
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
