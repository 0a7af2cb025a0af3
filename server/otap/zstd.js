// The zstd buffers of Arrow IPC. Each buffer is one zstd frame after an int64 of its uncompressed length, and an OTAP
// producer compresses every buffer on its own: a metrics batch carries about a hundred frames of a few bytes, many
// of them one raw or one RLE block, and its frames declare no content size. fzstd would allocate its window, a chunk
// per block and their concatenation for each; here a lone raw or RLE block is copied or filled straight into the
// output, and any other frame is decoded by fzstd into one scratch array, of which the declared length is copied.
import { decompress as fzstd } from 'fzstd';

const RAW = 0,
  RLE = 1;

/** Declared lengths past this are decoded by fzstd into arrays of their own, as the data comes. */
const MAX_SCRATCH = 1024 * 1024;

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

/**
 * Record batch buffers are read once and dropped with their batch, so they are cut from shared slabs: an array of
 * its own per buffer, an allocation outside the heap past 64 bytes, took about an eighth of a metrics batch's reading.
 * Dictionary buffers outlive their batch and take arrays of their own, lest a dictionary keep slabs alive.
 */
const SLAB = 16 * 1024;
let slab = new Uint8Array(SLAB);
let used = 0;

/** @param {number} n @param {boolean} shared @returns {Uint8Array} 8-byte aligned */
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
let plain = new Uint8Array(scratch.buffer);

/**
 * The content of a frame that is one raw or RLE block and nothing after it, or null.
 * @param {Uint8Array} frame @param {number} length the declared uncompressed length @param {boolean} shared
 * @returns {Uint8Array|null}
 */
function singleBlock(frame, length, shared) {
  if (frame.length < 9 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) return null;
  const flags = frame[4];
  const singleSegment = (flags >> 5) & 1;
  const dictionaryBytes = [0, 1, 2, 4][flags & 3];
  const sizeBytes = flags >> 6 ? 1 << (flags >> 6) : singleSegment;
  const at = 6 - singleSegment + dictionaryBytes + sizeBytes;
  if (at + 3 > frame.length) return null;
  const head = frame[at] | (frame[at + 1] << 8) | (frame[at + 2] << 16);
  const type = (head >> 1) & 3;
  const size = head >>> 3;
  // Not the last block, or not the whole declared length: the general decoder answers for it.
  if ((head & 1) === 0 || size !== length || (type !== RAW && type !== RLE)) return null;
  const end = at + 3 + (type === RAW ? size : 1) + ((flags >> 2) & 1) * 4;
  if (end !== frame.length) return null;
  const out = output(size, shared);
  if (type === RAW) out.set(frame.subarray(at + 3, at + 3 + size));
  else out.fill(frame[at + 3]);
  return out;
}

/**
 * A buffer's bytes, 8-byte aligned as Arrow's typed arrays need them.
 * @param {Uint8Array} frame @param {number|null} length the declared uncompressed length, when known
 * @param {boolean} shared whether the bytes may sit in a slab shared with other buffers
 * @returns {Uint8Array}
 */
export function decodeZstd(frame, length, shared) {
  if (length !== null && length >= 0 && length <= MAX_SCRATCH) {
    const one = singleBlock(frame, length, shared);
    if (one) return one;
    if (scratch.length < length) {
      scratch = new Scratch(MAX_SCRATCH);
      plain = new Uint8Array(scratch.buffer);
    }
    // Zeros, not an earlier frame's bytes, where a frame holds less than it declares.
    plain.fill(0, 0, length);
    try {
      fzstd(frame, scratch);
      const out = output(length, shared);
      out.set(plain.subarray(0, length));
      return out;
    } catch {
      // fzstd cannot write more than one frame into an array it is given: decoded again below, whose error is the
      // one a broken frame answers.
    }
  }
  const out = fzstd(frame);
  return out.byteOffset % 8 === 0 ? out : out.slice();
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
