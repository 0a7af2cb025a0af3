// LZ4 frame decoding (the format of `Content-Encoding: lz4`), written from the LZ4 frame and block format
// specifications. npm has no maintained LZ4 decoder that can stop at an output limit: this one never holds more
// than the limit, checks every length and offset against the input and the output it has, and verifies the
// header, block and content checksums the frame declares.

/** What the caller turns into its own 400 (malformed) or 413 (over the limit). */
export class Lz4Error extends Error {
  /** @param {string} message @param {boolean} [tooLarge] */
  constructor(message, tooLarge = false) {
    super(message);
    this.tooLarge = tooLarge;
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

/** The decoded bytes so far, in a buffer grown on demand and never past the limit. */
class Output {
  /** @param {number} limit @param {number} initial */
  constructor(limit, initial) {
    this.limit = limit;
    this.buf = Buffer.allocUnsafe(Math.min(initial, limit));
    this.length = 0;
  }

  /** Makes room for `n` more bytes, or fails once they would pass the limit. @param {number} n */
  reserve(n) {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    if (need > this.limit) throw new Lz4Error(`decompressed request body exceeds the limit of ${this.limit} bytes`, true);
    const grown = Buffer.allocUnsafe(Math.min(this.limit, Math.max(need, this.buf.length * 2)));
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }

  /** Exactly the decoded bytes, without the slack of the last growth. */
  result() {
    return this.length === this.buf.length ? this.buf : Buffer.from(this.buf.subarray(0, this.length));
  }
}

/**
 * Decodes one compressed block into `out`, which has room for `room` more bytes (the block size, or less where
 * the limit comes first).
 * @param {Uint8Array} src @param {number} ip @param {number} end @param {Output} out
 * @param {number} blockMax @param {number} room @param {number} lowest the first output byte a match may copy from
 */
function decodeBlock(src, ip, end, out, blockMax, room, lowest) {
  const dst = out.buf;
  let op = out.length;
  const opEnd = op + room;
  const blockEnd = op + blockMax;
  const bad = (/** @type {string} */ why) => new Lz4Error(`malformed lz4 block: ${why}`);
  /** @param {number} need */
  const overflow = (need) =>
    need > blockEnd ? bad("it decodes to more than the frame's block size") : new Lz4Error(`decompressed request body exceeds the limit of ${out.limit} bytes`, true);
  for (;;) {
    if (ip >= end) throw bad('it ends inside a sequence');
    const token = src[ip++];
    let literals = token >>> 4;
    if (literals === 15) {
      let more;
      do {
        if (ip >= end) throw bad('a literal length runs past the block');
        more = src[ip++];
        literals += more;
      } while (more === 255);
    }
    if (ip + literals > end) throw bad('literals run past the block');
    if (op + literals > opEnd) throw overflow(op + literals);
    dst.set(src.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
    if (ip === end) break;
    if (ip + 2 > end) throw bad('a match offset runs past the block');
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    let length = token & 15;
    if (length === 15) {
      let more;
      do {
        if (ip >= end) throw bad('a match length runs past the block');
        more = src[ip++];
        length += more;
      } while (more === 255);
    }
    length += MIN_MATCH;
    let from = op - offset;
    if (offset === 0 || from < lowest) throw bad(`a match refers to ${offset} bytes back, before the data it may use`);
    if (op + length > opEnd) throw overflow(op + length);
    if (offset >= length) {
      dst.copyWithin(op, from, from + length);
      op += length;
    } else {
      // An overlapping match repeats the last `offset` bytes.
      for (const stop = op + length; op < stop; ) dst[op++] = dst[from++];
    }
  }
  out.length = op;
}

/**
 * Decodes one frame starting at `p`; returns where the next one starts.
 * @param {Uint8Array} src @param {number} p @param {Output} out
 */
function decodeFrame(src, p, out) {
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
  const contentChecksum = (flg & 0x04) !== 0;
  const blockMax = BLOCK_MAX[(bd >>> 4) & 7];
  if (!blockMax) throw new Lz4Error(`lz4 frame has an unknown block size id ${(bd >>> 4) & 7}`);
  let q = headerStart + 2;
  let declared = -1;
  if (flg & 0x08) {
    if (q + 8 > src.length) throw truncated();
    declared = u32(src, q) + u32(src, q + 4) * 2 ** 32;
    if (declared > out.limit - out.length) throw new Lz4Error(`lz4 frame declares ${declared} bytes, more than the limit of ${out.limit} bytes`, true);
    q += 8;
  }
  if (q >= src.length) throw truncated();
  if (src[q] !== ((xxh32(src, headerStart, q) >>> 8) & 0xff)) throw new Lz4Error('lz4 frame header checksum does not match');
  p = q + 1;
  const frameStart = out.length;
  if (declared >= 0) out.reserve(declared);
  for (;;) {
    if (p + 4 > src.length) throw truncated();
    const word = u32(src, p);
    p += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw new Lz4Error(`lz4 block of ${size} bytes is larger than the frame's block size of ${blockMax}`);
    if (p + size + (blockChecksums ? 4 : 0) > src.length) throw truncated();
    if (blockChecksums && u32(src, p + size) !== xxh32(src, p, p + size)) throw new Lz4Error('lz4 block checksum does not match');
    if (word & 0x80000000) {
      out.reserve(size);
      out.buf.set(src.subarray(p, p + size), out.length);
      out.length += size;
    } else {
      const room = Math.min(blockMax, out.limit - out.length);
      out.reserve(room);
      const lowest = independent ? out.length : Math.max(frameStart, out.length - WINDOW);
      decodeBlock(src, p, p + size, out, blockMax, room, lowest);
    }
    p += size + (blockChecksums ? 4 : 0);
  }
  if (declared >= 0 && out.length - frameStart !== declared) throw new Lz4Error(`lz4 frame declares ${declared} bytes but holds ${out.length - frameStart}`);
  if (contentChecksum) {
    if (p + 4 > src.length) throw truncated();
    if (u32(src, p) !== xxh32(out.buf, frameStart, out.length)) throw new Lz4Error('lz4 content checksum does not match');
    p += 4;
  }
  return p;
}

/**
 * Decodes a body of one or more LZ4 frames (skippable frames are skipped), holding at most `limit` bytes.
 * @param {Uint8Array} src @param {number} limit @returns {Buffer}
 */
export function decodeLz4Frames(src, limit) {
  const out = new Output(limit, Math.max(src.length * 4, 64 << 10));
  let p = 0;
  while (p < src.length) {
    if (p + 4 > src.length) throw new Lz4Error('lz4 body ends with a partial frame');
    const magic = u32(src, p);
    if (magic === MAGIC) {
      p = decodeFrame(src, p, out);
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
  return out.result();
}
