// LZ4 frame decoding (the format of `Content-Encoding: lz4`), written from the LZ4 frame and block format
// specifications. npm has no maintained LZ4 decoder that can stop at an output limit: this one never holds more
// than the limit, checks every length and offset against the input and the output it has, and verifies the
// header, block and content checksums the frame declares. It works in slices (./slices.js): a block is decoded
// a bounded number of sequences at a time, and checksums are computed a bounded number of bytes at a time.
import { Slicer } from './slices.js';
import { gathered } from './pieces.js';
/** @typedef {import('./pieces.js').Pieces} Pieces */

/** What the caller turns into its own 400 (malformed) or 413 (over the limit). */
export class Lz4Error extends Error {
  /** @param {string} message @param {boolean} [tooLarge] @param {boolean} [pastLimit] the output itself passed the limit */
  constructor(message, tooLarge = false, pastLimit = false) {
    super(message);
    this.tooLarge = tooLarge;
    this.pastLimit = pastLimit;
  }
}

const MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE = 0x184d2a50;
const LEGACY_MAGIC = 0x184c2102;
/** Block maximum sizes by the BD byte's 3-bit id (4..7). */
const BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
/** Matches may reach back this far, into earlier blocks when blocks are linked. */
const WINDOW = 64 << 10;
const MIN_MATCH = 4;
/** Frames (skippable ones included) in one body: a sender makes one per request, or a few. */
export const LZ4_MAX_FRAMES = 64;
/** Sequences decoded, or bytes checksummed, between two looks at the clock. */
const STEPS = 4096;
const HASH_STEP = 256 << 10;

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

/** @param {Uint8Array} b @param {number} p */
const u32 = (b, p) => (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
/** @param {number} x @param {number} r */
const rotl = (x, r) => (x << r) | (x >>> (32 - r));
/** @param {number} acc @param {number} lane */
const round = (acc, lane) => Math.imul(rotl((acc + Math.imul(lane, P2)) | 0, 13), P1);

/** XXH32 with seed 0, the checksum of the LZ4 frame format. @param {Uint8Array} b @param {number} start @param {number} end */
export function xxh32(b, start, end) {
  let p = start;
  let h;
  if (end - start >= 16) {
    let v1 = (P1 + P2) | 0;
    let v2 = P2;
    let v3 = 0;
    let v4 = -P1 | 0;
    for (const last = end - 16; p <= last; p += 16) {
      v1 = round(v1, u32(b, p));
      v2 = round(v2, u32(b, p + 4));
      v3 = round(v3, u32(b, p + 8));
      v4 = round(v4, u32(b, p + 12));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = P5;
  }
  h = (h + (end - start)) | 0;
  for (; p + 4 <= end; p += 4) h = Math.imul(rotl((h + Math.imul(u32(b, p), P3)) | 0, 17), P4);
  for (; p < end; p++) h = Math.imul(rotl((h + Math.imul(b[p], P5)) | 0, 11), P1);
  h = Math.imul(h ^ (h >>> 15), P2);
  h = Math.imul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}

/** XXH32 over data that arrives in pieces: the content checksum of a frame, hashed as its blocks are decoded. */
export class Xxh32 {
  constructor() {
    this.v = Int32Array.of((P1 + P2) | 0, P2, 0, -P1 | 0);
    this.total = 0;
    this.tail = new Uint8Array(16);
    this.tailLength = 0;
  }

  /** @param {Uint8Array} b @param {number} start @param {number} end */
  update(b, start, end) {
    this.total += end - start;
    let p = start;
    if (this.tailLength) {
      const n = Math.min(16 - this.tailLength, end - p);
      this.tail.set(b.subarray(p, p + n), this.tailLength);
      this.tailLength += n;
      p += n;
      if (this.tailLength < 16) return;
      this.stripes(this.tail, 0, 16);
      this.tailLength = 0;
    }
    const whole = end - ((end - p) % 16);
    this.stripes(b, p, whole);
    this.tail.set(b.subarray(whole, end));
    this.tailLength = end - whole;
  }

  /** @param {Uint8Array} b @param {number} p @param {number} end a multiple of 16 bytes after p */
  stripes(b, p, end) {
    const v = this.v;
    let [v1, v2, v3, v4] = v;
    for (; p < end; p += 16) {
      v1 = round(v1, u32(b, p));
      v2 = round(v2, u32(b, p + 4));
      v3 = round(v3, u32(b, p + 8));
      v4 = round(v4, u32(b, p + 12));
    }
    v[0] = v1;
    v[1] = v2;
    v[2] = v3;
    v[3] = v4;
  }

  digest() {
    const [v1, v2, v3, v4] = this.v;
    let h = this.total >= 16 ? (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0 : P5;
    h = (h + this.total) | 0;
    const b = this.tail;
    let p = 0;
    for (; p + 4 <= this.tailLength; p += 4) h = Math.imul(rotl((h + Math.imul(u32(b, p), P3)) | 0, 17), P4);
    for (; p < this.tailLength; p++) h = Math.imul(rotl((h + Math.imul(b[p], P5)) | 0, 11), P1);
    h = Math.imul(h ^ (h >>> 15), P2);
    h = Math.imul(h ^ (h >>> 13), P3);
    return (h ^ (h >>> 16)) >>> 0;
  }
}

/**
 * The decoded bytes: finished blocks gathered in pieces, and the block being decoded in a work buffer, behind the
 * up to 64 KiB of its frame's earlier output that its matches may copy from.
 */
class Output {
  /** @param {Pieces} pieces where finished blocks go, and the limit they keep to */
  constructor(pieces) {
    this.pieces = pieces;
    this.buf = Buffer.alloc(0);
    /** Where the block being decoded has got to in `buf`. */
    this.length = 0;
  }

  /** The most bytes the body may decode to. */
  get limit() {
    return this.pieces.limit;
  }

  /** A new frame, whose blocks are at most `blockMax` bytes and may refer only to its own output. @param {number} blockMax */
  startFrame(blockMax) {
    if (this.buf.length < WINDOW + blockMax) this.buf = Buffer.allocUnsafe(WINDOW + blockMax);
    this.length = 0;
  }

  /** Hands on the block decoded from `start`, and keeps the last 64 KiB for the next block to refer to. @param {number} start */
  finishBlock(start) {
    this.pieces.add(this.buf.subarray(start, this.length), true);
    const keep = Math.min(WINDOW, this.length);
    this.buf.copyWithin(0, this.length - keep, this.length);
    this.length = keep;
  }
}

/** @param {string} why */
const badBlock = (why) => new Lz4Error(`malformed lz4 block: ${why}`);

/**
 * Decodes up to `steps` sequences of a compressed block, from `ip`, into `out` (which has room up to `opEnd`: the
 * block size, or less where the limit comes first); returns where it stopped, `end` once the block is done.
 * @param {Uint8Array} src @param {number} ip @param {number} end @param {Output} out
 * @param {number} blockEnd where the block's output must end @param {number} opEnd @param {number} lowest the first
 *   output byte a match may copy from @param {number} steps
 */
function decodeSequences(src, ip, end, out, blockEnd, opEnd, lowest, steps) {
  const dst = out.buf;
  let op = out.length;
  /** @param {number} need */
  const overflow = (need) =>
    need > blockEnd
      ? badBlock("it decodes to more than the frame's block size")
      : new Lz4Error(`decompressed request body exceeds the limit of ${out.limit} bytes`, true, true);
  for (;;) {
    if (ip >= end) throw badBlock('it ends inside a sequence');
    if (steps-- === 0) break;
    const token = src[ip++];
    let literals = token >>> 4;
    if (literals === 15) {
      let more;
      do {
        if (ip >= end) throw badBlock('a literal length runs past the block');
        more = src[ip++];
        literals += more;
      } while (more === 255);
    }
    if (ip + literals > end) throw badBlock('literals run past the block');
    if (op + literals > opEnd) throw overflow(op + literals);
    dst.set(src.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
    if (ip === end) break;
    if (ip + 2 > end) throw badBlock('a match offset runs past the block');
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    let length = token & 15;
    if (length === 15) {
      let more;
      do {
        if (ip >= end) throw badBlock('a match length runs past the block');
        more = src[ip++];
        length += more;
      } while (more === 255);
    }
    length += MIN_MATCH;
    let from = op - offset;
    if (offset === 0 || from < lowest) throw badBlock(`a match refers to ${offset} bytes back, before the data it may use`);
    if (op + length > opEnd) throw overflow(op + length);
    if (length < 32) {
      for (const stop = op + length; op < stop;) dst[op++] = dst[from++];
    } else if (offset >= length) {
      dst.copyWithin(op, from, from + length);
      op += length;
    } else {
      // An overlapping match repeats the last `offset` bytes: each copy doubles the repeated run it copies from.
      for (const stop = op + length; op < stop;) {
        const n = Math.min(op - from, stop - op);
        dst.copyWithin(op, from, from + n);
        op += n;
      }
    }
  }
  out.length = op;
  return ip;
}

/**
 * Hashes `b[start, end)` into `hash` a slice's worth at a time.
 * @param {Xxh32} hash @param {Uint8Array} b @param {number} start @param {number} end @param {Slicer} slicer
 */
async function hashInSlices(hash, b, start, end, slicer) {
  for (let p = start; p < end; p += HASH_STEP) {
    hash.update(b, p, Math.min(end, p + HASH_STEP));
    if (slicer.due()) await slicer.pause();
  }
}

/**
 * Decodes one frame starting at `p`; returns where the next one starts.
 * @param {Uint8Array} src @param {number} p @param {Output} out @param {Slicer} slicer
 */
async function decodeFrame(src, p, out, slicer) {
  const truncated = () => new Lz4Error('lz4 frame is truncated');
  const headerStart = p + 4;
  if (headerStart + 3 > src.length) throw truncated();
  const flg = src[headerStart];
  const bd = src[headerStart + 1];
  if (flg >>> 6 !== 1) throw new Lz4Error(`lz4 frame has version ${flg >>> 6}; only version 1 exists`);
  if (flg & 0x02 || bd & 0x8f) throw new Lz4Error('lz4 frame header has reserved bits set');
  if (flg & 0x01) throw new Lz4Error('lz4 frames that need a dictionary are not supported');
  const independent = (flg & 0x20) !== 0;
  const blockChecksums = (flg & 0x10) !== 0;
  const contentHash = flg & 0x04 ? new Xxh32() : null;
  const blockMax = BLOCK_MAX[(bd >>> 4) & 7];
  if (!blockMax) throw new Lz4Error(`lz4 frame has an unknown block size id ${(bd >>> 4) & 7}`);
  let q = headerStart + 2;
  let declared = -1;
  if (flg & 0x08) {
    if (q + 8 > src.length) throw truncated();
    declared = u32(src, q) + u32(src, q + 4) * 2 ** 32;
    if (declared > out.limit - out.pieces.size) throw new Lz4Error(`lz4 frame declares ${declared} bytes, more than the limit of ${out.limit} bytes`, true);
    q += 8;
  }
  if (q >= src.length) throw truncated();
  if (src[q] !== ((xxh32(src, headerStart, q) >>> 8) & 0xff)) throw new Lz4Error('lz4 frame header checksum does not match');
  p = q + 1;
  out.startFrame(blockMax);
  let frameBytes = 0;
  for (;;) {
    if (slicer.due()) await slicer.pause();
    if (p + 4 > src.length) throw truncated();
    const word = u32(src, p);
    p += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw new Lz4Error(`lz4 block of ${size} bytes is larger than the frame's block size of ${blockMax}`);
    if (p + size + (blockChecksums ? 4 : 0) > src.length) throw truncated();
    if (blockChecksums) {
      const hash = new Xxh32();
      await hashInSlices(hash, src, p, p + size, slicer);
      if (u32(src, p + size) !== hash.digest()) throw new Lz4Error('lz4 block checksum does not match');
    }
    const blockStart = out.length;
    if (word & 0x80000000) {
      if (size > out.limit - out.pieces.size) throw new Lz4Error(`decompressed request body exceeds the limit of ${out.limit} bytes`, true, true);
      out.buf.set(src.subarray(p, p + size), blockStart);
      out.length += size;
    } else {
      const room = Math.min(blockMax, out.limit - out.pieces.size);
      const lowest = independent ? blockStart : 0;
      for (let ip = p; ip < p + size;) {
        ip = decodeSequences(src, ip, p + size, out, blockStart + blockMax, blockStart + room, lowest, STEPS);
        if (slicer.due()) await slicer.pause();
      }
    }
    if (contentHash) await hashInSlices(contentHash, out.buf, blockStart, out.length, slicer);
    frameBytes += out.length - blockStart;
    out.finishBlock(blockStart);
    p += size + (blockChecksums ? 4 : 0);
  }
  if (declared >= 0 && frameBytes !== declared) throw new Lz4Error(`lz4 frame declares ${declared} bytes but holds ${frameBytes}`);
  if (contentHash) {
    if (p + 4 > src.length) throw truncated();
    if (u32(src, p) !== contentHash.digest()) throw new Lz4Error('lz4 content checksum does not match');
    p += 4;
  }
  return p;
}

/**
 * Decodes a body of one or more LZ4 frames (skippable frames are skipped), holding at most `limit` bytes, in
 * slices.
 * @param {Uint8Array} src @param {number} limit @param {Slicer} [slicer] @returns {Promise<Buffer>}
 */
export async function decodeLz4Frames(src, limit, slicer = new Slicer()) {
  return gathered(limit, slicer, (pieces) => decodeFrames(src, new Output(pieces), slicer));
}

/** @param {Uint8Array} src @param {Output} out @param {Slicer} slicer */
async function decodeFrames(src, out, slicer) {
  let frames = 0;
  let p = 0;
  while (p < src.length) {
    if (slicer.due()) await slicer.pause();
    if (++frames > LZ4_MAX_FRAMES) throw new Lz4Error(`lz4 body has more than ${LZ4_MAX_FRAMES} frames`, true);
    if (p + 4 > src.length) throw new Lz4Error('lz4 body ends with a partial frame');
    const magic = u32(src, p);
    if (magic === MAGIC) {
      p = await decodeFrame(src, p, out, slicer);
    } else if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE) {
      if (p + 8 > src.length) throw new Lz4Error('lz4 skippable frame is truncated');
      p += 8 + u32(src, p + 4);
      if (p > src.length) throw new Lz4Error('lz4 skippable frame is truncated');
    } else if (magic === LEGACY_MAGIC) {
      throw new Lz4Error('legacy lz4 frames are not supported; send the LZ4 frame format');
    } else {
      throw new Lz4Error(`not an lz4 frame (magic number 0x${magic.toString(16).padStart(8, '0')})`);
    }
  }
}
