// The zstd buffers of Arrow IPC. Each buffer is one zstd frame after an int64 of its uncompressed length, and an OTAP
// producer compresses every buffer on its own: a metrics batch carries about a hundred frames of a few bytes, many
// of them one raw or one RLE block, and its frames declare no content size. A lone raw or RLE block is copied or
// filled straight into the output; a frame whose blocks can write at most MAX_AT_ONCE bytes, as its block headers
// say, is decoded by fzstd into one scratch array, of which the declared length is copied. Any other frame is left to
// the decoder of zstd request bodies (arrow.js): in slices, and refused once it passes its declared length, since a
// frame of a few kilobytes can declare a few bytes and hold gigabytes.
import { decompress as fzstd } from 'fzstd';

const RAW = 0,
  RLE = 1,
  COMPRESSED = 2;
const MAX_BLOCK = 128 * 1024;

/** The most a frame's blocks may write for it to be decoded at once, on the event loop: about a millisecond's work. */
const MAX_AT_ONCE = 1024 * 1024;

/**
 * fzstd's output array when it is given one. fzstd compares that array with 1 (`w == 1`), which turns a plain
 * Uint8Array into the string of all its bytes, and takes views of it (`subarray`), which a subclass would make
 * through its own, slower constructor: so it compares as NaN and its views are plain.
 */
class Scratch extends Uint8Array {
  static get [Symbol.species]() {
    return Uint8Array;
  }

  [Symbol.toPrimitive]() {
    return NaN;
  }
}

let scratch = new Scratch(64 * 1024);
let plain = new Uint8Array(scratch.buffer);

/**
 * Record batch buffers are read once and dropped with their batch, so they are cut from shared slabs: an array of
 * its own per buffer, an allocation outside the heap past 64 bytes, took about an eighth of a metrics batch's reading.
 * Dictionary buffers outlive their batch and take arrays of their own, lest a dictionary keep slabs alive.
 */
const SLAB = 16 * 1024;
let slab = new Uint8Array(SLAB);
let used = 0;

/** @param {number} n @param {boolean} shared @returns {Uint8Array} 8-byte aligned, zeros */
function output(n, shared) {
  if (!shared || n > SLAB / 4) return new Uint8Array(n);
  if (used + n > SLAB) {
    slab = new Uint8Array(SLAB);
    used = 0;
  }
  const out = slab.subarray(used, used + n);
  used += (n + 7) & ~7;
  return out;
}

/**
 * A zstd frame's header, read: its flags, where its content size is and how many bytes it takes, where its first
 * block starts and the bytes of checksum after its last; null where the frame does not start with zstd's magic number.
 * @param {Uint8Array} frame
 */
function frameHeader(frame) {
  if (frame.length < 6 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) return null;
  const flags = frame[4];
  const singleSegment = (flags >> 5) & 1;
  const sizeAt = 6 - singleSegment + [0, 1, 2, 4][flags & 3];
  const sizeBytes = flags >> 6 ? 1 << (flags >> 6) : singleSegment;
  return { flags, singleSegment, sizeAt, sizeBytes, blocksAt: sizeAt + sizeBytes, checksum: ((flags >> 2) & 1) * 4 };
}

/**
 * A frame's header and block headers, walked without decoding: for a frame that is one zstd frame alone, the most
 * its blocks can write (a raw or RLE block its size, a compressed one a whole block); -1 for anything else, or past
 * MAX_AT_ONCE, which the sliced decoder answers for.
 * @param {Uint8Array} frame
 */
function mostWritten(frame) {
  const header = frameHeader(frame);
  // a reserved bit, or a dictionary
  if (!header || header.flags & 0x0b) return -1;
  const { sizeAt, sizeBytes } = header;
  let blockMax;
  if (header.singleSegment) {
    if (sizeAt + sizeBytes > frame.length) return -1;
    let content = 0;
    for (let i = sizeBytes - 1; i >= 0; i--) content = content * 256 + frame[sizeAt + i];
    blockMax = Math.min(MAX_BLOCK, content + (sizeBytes === 2 ? 256 : 0));
  } else {
    const base = 2 ** (10 + (frame[5] >> 3));
    blockMax = Math.min(MAX_BLOCK, base + (base / 8) * (frame[5] & 7));
  }
  let at = header.blocksAt;
  let most = 0;
  for (let last = 0; !last;) {
    if (at + 3 > frame.length) return -1;
    const head = frame[at] | (frame[at + 1] << 8) | (frame[at + 2] << 16);
    at += 3;
    last = head & 1;
    const type = (head >> 1) & 3;
    const size = head >>> 3;
    if (type > COMPRESSED || size > blockMax) return -1;
    most += type === COMPRESSED ? blockMax : size;
    if (most > MAX_AT_ONCE) return -1;
    at += type === RLE ? 1 : size;
  }
  return at + header.checksum === frame.length ? most : -1;
}

/**
 * Where the one block of a frame that is one raw or RLE block of exactly `length` bytes, and nothing after it,
 * starts, with its type; null for any other frame.
 * @param {Uint8Array} frame @param {number} length the declared uncompressed length
 * @returns {{ at: number, type: number }|null}
 */
function loneBlock(frame, length) {
  const header = frameHeader(frame);
  if (!header) return null;
  const at = header.blocksAt;
  if (at + 3 > frame.length) return null;
  const head = frame[at] | (frame[at + 1] << 8) | (frame[at + 2] << 16);
  const type = (head >> 1) & 3;
  const size = head >>> 3;
  // Not the last block, or not the whole declared length: the general decoder answers for it.
  if ((head & 1) === 0 || size !== length || (type !== RAW && type !== RLE)) return null;
  const end = at + 3 + (type === RAW ? size : 1) + header.checksum;
  return end === frame.length ? { at: at + 3, type } : null;
}

/**
 * A buffer's bytes, 8-byte aligned as Arrow's typed arrays need them, where its frame can be decoded at once: one raw
 * or RLE block of its declared length, or one frame whose blocks can write at most MAX_AT_ONCE bytes (of which the
 * declared length is kept, zeros past the end of a frame that holds less). Null for any other frame, and for one fzstd
 * cannot read, which the sliced decoder then reads and names what is wrong with.
 * @param {Uint8Array} frame @param {number} length the declared uncompressed length
 * @param {boolean} shared whether the bytes may sit in a slab shared with other buffers
 * @returns {Uint8Array|null}
 */
export function decodeZstd(frame, length, shared) {
  const block = loneBlock(frame, length);
  if (block) {
    const out = output(length, shared);
    if (block.type === RAW) out.set(frame.subarray(block.at, block.at + length));
    else out.fill(frame[block.at]);
    return out;
  }
  const most = mostWritten(frame);
  if (most < 0 || length > MAX_AT_ONCE) return null;
  if (scratch.length < Math.max(most, length)) {
    scratch = new Scratch(MAX_AT_ONCE);
    plain = new Uint8Array(scratch.buffer);
  }
  // Zeros, not an earlier frame's bytes, where a frame holds less than it declares.
  plain.fill(0, 0, length);
  try {
    fzstd(frame, scratch);
  } catch {
    return null;
  }
  const out = output(length, shared);
  out.set(plain.subarray(0, length));
  return out;
}

/**
 * What the sliced decoder made of a frame, copied where `decodeZstd` puts its output, 8-byte aligned; zeros past its
 * end where it holds less than it declares.
 * @param {Uint8Array} decoded at most `length` bytes @param {number} length @param {boolean} shared
 */
export function placed(decoded, length, shared) {
  const out = output(length, shared);
  out.set(decoded);
  return out;
}

/**
 * The uncompressed length Arrow IPC writes before a compressed buffer: apache-arrow hands its codec the bytes just
 * after it (reader.mjs `_decompressBuffers`; apache-arrow is pinned).
 * @param {Uint8Array} frame @returns {number|null}
 */
export function declaredLength(frame) {
  if (frame.byteOffset < 8) return null;
  return Number(new DataView(frame.buffer, frame.byteOffset - 8, 8).getBigInt64(0, true));
}
