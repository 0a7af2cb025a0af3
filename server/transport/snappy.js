// Snappy, written from the format descriptions (format_description.txt and framing_format.txt in google/snappy):
// the raw block format and the framing format. Decoded here in slices rather than by a native addon, whose
// buffers are not returned when the request ends and which holds the event loop for a whole block.
import { DecompressError, overLimit } from './codec-error.js';
import { BORROWED_FROM, borrow, gathered, giveBack } from './pieces.js';

/** Elements (a literal or a copy of at most 64 bytes) decoded between two looks at the clock. */
const STEPS = 4096;

/** @param {string} why */
const malformed = (why) => new DecompressError(`body is not valid snappy data: ${why}`);
/** @param {string} why */
const malformedFrame = (why) => new DecompressError(`malformed snappy framed stream: ${why}`);

/** The uncompressed length a snappy block starts with (a varint of at most 32 bits), and where the data starts. @param {Uint8Array} b @param {number} start @param {number} end */
function blockLength(b, start, end) {
  let value = 0;
  for (let i = 0, p = start; i < 5 && p < end; i++, p++) {
    value += (b[p] & 0x7f) * 2 ** (7 * i);
    if (b[p] < 0x80) return { length: value, data: p + 1 };
  }
  return null;
}

/**
 * Writes `dst[i] = dst[i - offset]` for i from `start` to `end`, as a run of copies with one offset means. A run
 * longer than one copy (a bomb of one repeated byte is millions of 64-byte copies at offset 1) is written by
 * doubling: each step copies the whole periods written so far, so the run costs a few `copyWithin` calls.
 * @param {Uint8Array} dst @param {number} start @param {number} end @param {number} offset
 */
function repeat(dst, start, end, offset) {
  if (end - start <= 64) {
    for (let op = start, from = start - offset; op < end;) dst[op++] = dst[from++];
    return;
  }
  for (let op = start, span = offset; op < end; span *= 2) {
    const n = Math.min(span, end - op);
    dst.copyWithin(op, op - span, op - span + n);
    op += n;
  }
}

/**
 * Decodes up to `steps` elements of a block from `at.ip` into `dst` at `at.op`; true once the input is used up.
 * Every length and offset is checked against the input and the output written so far.
 * @param {Uint8Array} src @param {number} end @param {Uint8Array} dst @param {{ ip: number, op: number }} at
 * @param {number} steps @param {(why: string) => DecompressError} bad
 */
function decodeElements(src, end, dst, at, steps, bad) {
  let { ip, op } = at;
  const opEnd = dst.length;
  // Copies with one offset, one after another, are written together: [runStart, op) is not written yet.
  let runStart = op;
  let runOffset = 0;
  for (; ip < end && steps > 0; steps--) {
    const tag = src[ip++];
    const kind = tag & 3;
    if (kind === 0) {
      if (runStart < op) repeat(dst, runStart, op, runOffset);
      let length = tag >>> 2;
      if (length >= 60) {
        const bytes = length - 59;
        if (ip + bytes > end) throw bad('a literal length runs past the end');
        length = 0;
        for (let i = 0; i < bytes; i++) length += src[ip + i] * 2 ** (8 * i);
        ip += bytes;
      }
      length += 1;
      if (ip + length > end) throw bad('a literal runs past the end');
      if (op + length > opEnd) throw bad('it holds more than the length it declares');
      if (length < 16) for (const stop = ip + length; ip < stop;) dst[op++] = src[ip++];
      else {
        dst.set(src.subarray(ip, ip + length), op);
        ip += length;
        op += length;
      }
      runStart = op;
      continue;
    }
    let length;
    let offset;
    if (kind === 1) {
      if (ip >= end) throw bad('a copy runs past the end');
      length = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | src[ip++];
    } else if (kind === 2) {
      if (ip + 2 > end) throw bad('a copy runs past the end');
      length = (tag >>> 2) + 1;
      offset = src[ip] | (src[ip + 1] << 8);
      ip += 2;
    } else {
      if (ip + 4 > end) throw bad('a copy runs past the end');
      length = (tag >>> 2) + 1;
      offset = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
      ip += 4;
    }
    if (offset === 0 || offset > op) throw bad(`a copy refers to ${offset} bytes back, before the data it may use`);
    if (op + length > opEnd) throw bad('it holds more than the length it declares');
    if (offset !== runOffset || runStart === op) {
      if (runStart < op) repeat(dst, runStart, op, runOffset);
      runStart = op;
      runOffset = offset;
    }
    op += length;
  }
  if (runStart < op) repeat(dst, runStart, op, runOffset);
  at.ip = ip;
  at.op = op;
  return ip >= end;
}

/**
 * One snappy block (`Content-Encoding: snappy`): its declared length is checked against the limit before the
 * output is allocated, and the block is decoded in slices. A large block's output is borrowed memory (pieces.js
 * `borrow`), for the receiver to count before it owns it.
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function decodeSnappyBlock(body, limit, slicer) {
  const head = blockLength(body, 0, body.length);
  if (!head) throw malformed('it does not start with a length');
  if (head.length > limit) throw new DecompressError(`snappy block declares ${head.length} bytes, more than the limit of ${limit} bytes`, true);
  slicer.take(head.length);
  const out = head.length > BORROWED_FROM ? borrow(head.length) : Buffer.allocUnsafe(head.length);
  try {
    const at = { ip: head.data, op: 0 };
    while (!decodeElements(body, body.length, out, at, STEPS, malformed)) {
      if (slicer.due()) await slicer.pause();
    }
    // Every byte of the output is written before it is handed on: none of the memory's old contents (an earlier
    // body's, when borrowed) leak.
    if (at.op !== head.length) throw malformed(`it holds ${at.op} bytes but declares ${head.length}`);
    return out;
  } catch (err) {
    giveBack(out);
    throw err;
  }
}

const CRC32C_TABLES = Array.from({ length: 4 }, () => new Int32Array(256));
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  CRC32C_TABLES[0][n] = c;
}
for (let n = 0; n < 256; n++) {
  for (let t = 1; t < 4; t++) CRC32C_TABLES[t][n] = CRC32C_TABLES[0][CRC32C_TABLES[t - 1][n] & 0xff] ^ (CRC32C_TABLES[t - 1][n] >>> 8);
}

/** The masked CRC-32C that the framing format puts before each chunk (four bytes at a time). @param {Uint8Array} b */
export function maskedCrc32c(b) {
  const [t0, t1, t2, t3] = CRC32C_TABLES;
  let c = -1;
  let i = 0;
  for (const last = b.length - 4; i <= last; i += 4) {
    c ^= b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    c = t3[c & 0xff] ^ t2[(c >>> 8) & 0xff] ^ t1[(c >>> 16) & 0xff] ^ t0[c >>> 24];
  }
  for (; i < b.length; i++) c = t0[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  c = ~c >>> 0;
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

export const SNAPPY_STREAM_ID = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);
/** The framing format's limit on a chunk's uncompressed data. */
const CHUNK_MAX = 65536;

/**
 * The snappy framing format (`x-snappy-framed`): chunks of at most 64 KiB each, with checksums, decoded one at a
 * time and gathered (./pieces.js).
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function decodeSnappyFramed(body, limit, slicer) {
  if (!body.subarray(0, SNAPPY_STREAM_ID.length).equals(SNAPPY_STREAM_ID)) throw malformedFrame('it does not start with the stream identifier');
  return gathered(limit, slicer, (out) => decodeChunks(body, out, slicer));
}

/**
 * Decodes the chunks of a framed body one at a time, each into a buffer reused from chunk to chunk, gathered in `out`.
 * @param {Buffer} body @param {import('./pieces.js').Pieces} out @param {import('./slices.js').Slicer} slicer
 */
async function decodeChunks(body, out, slicer) {
  const decoded = Buffer.allocUnsafe(CHUNK_MAX);
  let p = 0;
  while (p < body.length) {
    if (slicer.due()) await slicer.pause();
    if (p + 4 > body.length) throw malformedFrame('a chunk header is truncated');
    const type = body[p];
    const length = body.readUIntLE(p + 1, 3);
    const start = p + 4;
    p = start + length;
    if (p > body.length) throw malformedFrame('a chunk is truncated');
    if (type === 0xff) {
      if (!body.subarray(start - 4, p).equals(SNAPPY_STREAM_ID)) throw malformedFrame('a stream identifier is wrong');
      continue;
    }
    if (type >= 0x80) continue;
    if (type > 0x01) throw malformedFrame(`chunk type 0x${type.toString(16)} is reserved and cannot be skipped`);
    if (length < 4) throw malformedFrame('a data chunk is too short for its checksum');
    const stored = body.subarray(start + 4, p);
    let data = stored;
    if (type === 0x00) {
      const head = blockLength(stored, 0, stored.length);
      if (!head || head.length > CHUNK_MAX) throw malformedFrame('a compressed chunk declares an impossible length');
      if (out.size + head.length > out.limit) throw overLimit(out.limit);
      data = decoded.subarray(0, head.length);
      const at = { ip: head.data, op: 0 };
      decodeElements(stored, stored.length, data, at, Infinity, (why) => malformedFrame(`a compressed chunk is not valid snappy data: ${why}`));
      if (at.op !== head.length) throw malformedFrame(`a compressed chunk holds ${at.op} bytes but declares ${head.length}`);
    } else if (stored.length > CHUNK_MAX) throw malformedFrame('an uncompressed chunk is longer than 64 KiB');
    if (body.readUInt32LE(start) !== maskedCrc32c(data)) throw malformedFrame('a chunk checksum does not match');
    out.add(data, type === 0x00);
  }
}
