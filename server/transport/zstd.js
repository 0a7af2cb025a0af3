// zstd bodies: their frames and blocks are walked here, in slices, before (or while) anything is decoded, so that
// what a body may cost is decided by its headers. A sender makes one frame per request, or a few; each frame's
// window is memory the decoder must hold (and, in fzstd's streaming decoder, move once per block).
import zlib from 'node:zlib';
import { Decompress as ZstdStream } from 'fzstd';
import { DecompressError } from './codec-error.js';
import { gathered } from './pieces.js';
import { zlibInSlices } from './zlib-stream.js';

/** Frames (skippable ones included) in one body. */
export const ZSTD_MAX_FRAMES = 64;
/** The largest window a frame may ask for: 8 MiB, what RFC 8878 asks every decoder to support. */
export const ZSTD_MAX_WINDOW = 8 << 20;
/**
 * Blocks, other than the last of a frame, that decode to less than half the frame's block size. fzstd's streaming
 * decoder moves its whole window once per block, so a body of tiny blocks would cost a window's move per byte;
 * an encoder fills its blocks, and leaves a short one only where a sender flushes.
 */
export const ZSTD_MAX_SHORT_BLOCKS = 128;

/** @typedef {{ pieces: import('./pieces.js').Pieces, shortBlocks: number }} Output */

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const ZSTD_SKIPPABLE = 0x184d2a50;
const MAX_BLOCK = 128 << 10;

/** Node's own zstd (22.15 and later), which runs in libuv's thread pool as gzip does. */
const nodeZstd = /** @type {any} */ (zlib).createZstdDecompress ?? null;

/**
 * One frame's decoder: fzstd's streaming decoder, fed a block at a time so that no push decodes more than a
 * block or two, with its output gathered and counted against the limit.
 * @param {Output} out
 */
function frameDecoder(out) {
  return new ZstdStream((chunk) => {
    if (chunk.length) out.pieces.add(chunk);
  });
}

/**
 * Walks a zstd body frame by frame and block by block: proves it whole (a truncated body is named as such),
 * refuses frames that declare more content than the limit, a window over ZSTD_MAX_WINDOW, or more frames than
 * ZSTD_MAX_FRAMES, and (with `out`) decodes each block as it is reached.
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer
 * @param {Output|null} out where decoded bytes go; null to only check
 */
async function walk(body, limit, slicer, out) {
  const truncated = () => new DecompressError('zstd frame is truncated');
  let frames = 0;
  let p = 0;
  while (p < body.length) {
    if (slicer.due()) await slicer.pause();
    if (++frames > ZSTD_MAX_FRAMES) throw new DecompressError(`zstd body has more than ${ZSTD_MAX_FRAMES} frames`, true);
    if (p + 4 > body.length) throw new DecompressError('zstd body ends with a partial frame');
    const magic = body.readUInt32LE(p);
    if ((magic & SKIPPABLE_MASK) >>> 0 === ZSTD_SKIPPABLE) {
      if (p + 8 > body.length) throw truncated();
      p += 8 + body.readUInt32LE(p + 4);
      if (p > body.length) throw truncated();
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new DecompressError(`not a zstd frame (magic number 0x${magic.toString(16).padStart(8, '0')})`);
    const frameStart = p;
    p += 4;
    if (p >= body.length) throw truncated();
    const fhd = body[p++];
    if (fhd & 0x08) throw new DecompressError('zstd frame header has its reserved bit set');
    const singleSegment = (fhd & 0x20) !== 0;
    const dictBytes = [0, 1, 2, 4][fhd & 3];
    const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fhd >>> 6];
    const headerEnd = p + (singleSegment ? 0 : 1) + dictBytes + fcsBytes;
    if (headerEnd > body.length) throw truncated();
    let window = 0;
    if (!singleSegment) {
      const descriptor = body[p++];
      const base = 2 ** (10 + (descriptor >>> 3));
      window = base + (base / 8) * (descriptor & 7);
    }
    if (dictBytes && body.readUIntLE(p, dictBytes) !== 0) throw new DecompressError('zstd frames that need a dictionary are not supported');
    p += dictBytes;
    let declared = -1;
    if (fcsBytes === 8) declared = body.readUInt32LE(p) + body.readUInt32LE(p + 4) * 2 ** 32;
    else if (fcsBytes) declared = body.readUIntLE(p, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    p = headerEnd;
    if (declared > limit) throw new DecompressError(`zstd frame declares ${declared} bytes, more than the limit of ${limit} bytes`, true);
    // A single-segment frame's window is its content.
    if (singleSegment) window = declared;
    if (window > limit) throw new DecompressError(`zstd frame asks for a window of ${window} bytes, more than the limit of ${limit} bytes`, true);
    if (window > ZSTD_MAX_WINDOW) {
      throw new DecompressError(`zstd frame asks for a window of ${window} bytes; otlp-mock decodes windows of up to ${ZSTD_MAX_WINDOW} bytes (8 MiB)`, true);
    }
    const blockMax = Math.min(MAX_BLOCK, singleSegment ? Math.max(declared, 1) : window);
    const decoder = out ? frameDecoder(out) : null;
    let pushed = frameStart;
    for (let last = false; !last;) {
      if (slicer.due()) await slicer.pause();
      if (p + 3 > body.length) throw truncated();
      const blockStart = p;
      const header = body.readUIntLE(p, 3);
      p += 3;
      last = (header & 1) === 1;
      const type = (header >>> 1) & 3;
      const size = header >>> 3;
      if (type === 3) throw new DecompressError('zstd block has the reserved block type');
      if (size > blockMax) throw new DecompressError(`zstd block of ${size} bytes is larger than the frame allows (${blockMax})`);
      p += type === 1 ? 1 : size;
      if (p > body.length) throw truncated();
      if (!decoder || !out) continue;
      // An empty raw or RLE block changes nothing, but would cost the streaming decoder a move of its window.
      if (size === 0 && type < 2 && !last) {
        if (blockStart > pushed) decoder.push(body.subarray(pushed, blockStart));
      } else {
        const before = out.pieces.size;
        decoder.push(body.subarray(pushed, p));
        if (!last && out.pieces.size - before < blockMax / 2 && ++out.shortBlocks > ZSTD_MAX_SHORT_BLOCKS) {
          throw new DecompressError(
            `zstd body has more than ${ZSTD_MAX_SHORT_BLOCKS} blocks that are not the last of their frame and decode to less than half a block`,
            true,
          );
        }
      }
      pushed = p;
    }
    if (fhd & 0x04) p += 4;
    if (p > body.length) throw truncated();
    decoder?.push(body.subarray(pushed, p), true);
  }
}

/**
 * zstd without Node's zlib (before Node 22.15): fzstd, block by block in slices.
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function zstdInJs(body, limit, slicer) {
  return gathered(limit, slicer, (pieces) => walk(body, limit, slicer, { pieces, shortBlocks: 0 }));
}

/**
 * One zstd buffer whose length is known (an Arrow IPC buffer declares it): refused as soon as its output passes
 * `length`, while its frames' windows and declared sizes are judged against `limit`, since a buffer of a few bytes
 * may be framed with a larger window than its content. In JavaScript, block by block in slices.
 * @param {Buffer} body @param {number} length @param {number} limit @param {import('./slices.js').Slicer} slicer
 * @returns {Promise<Buffer>}
 */
export async function zstdOfLength(body, length, limit, slicer) {
  return gathered(length, slicer, (pieces) => walk(body, limit, slicer, { pieces, shortBlocks: 0 }));
}

/**
 * A zstd body, at most `limit` bytes once decoded: checked in slices, then decoded by Node's zstd (in the thread
 * pool, read in slices) where Node has it, otherwise in JavaScript.
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function decodeZstd(body, limit, slicer) {
  if (!nodeZstd) return zstdInJs(body, limit, slicer);
  await walk(body, limit, slicer, null);
  return zlibInSlices(nodeZstd, body, limit, slicer);
}
