// Content-Encoding of OTLP/HTTP bodies and grpc-encoding of OTLP/gRPC messages: the encodings the Collector's
// receiver accepts (confighttp), each decoded without ever holding more than the request limit, so that a small
// compressed body cannot make a large one, and without holding the event loop: zlib's decoders run in libuv's
// thread pool and the ones written in JavaScript (zstd before Node 22.15, snappy, lz4) on the loop, all of them
// in slices that take turns (./slices.js). A few bodies are decoded at a time; the others wait their turn holding
// only their compressed bytes.
import zlib from 'node:zlib';
import { DecompressError } from './codec-error.js';
import { ClientGone, NoRoom, Slicer, Slots } from './slices.js';
import { zlibInSlices } from './zlib-stream.js';
import { decodeLz4Frames, Lz4Error } from './lz4.js';
import { decodeSnappyBlock, decodeSnappyFramed, SNAPPY_STREAM_ID } from './snappy.js';
import { decodeZstd } from './zstd.js';

export { DecompressError };

/** Bodies decoded at once, over both OTLP ports: each may hold up to the request limit while it is decoded. */
export const MAX_CONCURRENT_DECOMPRESSIONS = 4;

/** @param {Buffer} body @param {number} limit @param {Slicer} slicer */
const gunzip = (body, limit, slicer) => zlibInSlices(zlib.createGunzip, body, limit, slicer);

/** @param {Buffer} body @param {number} limit @param {Slicer} slicer */
async function deflate(body, limit, slicer) {
  try {
    return await zlibInSlices(zlib.createInflate, body, limit, slicer);
  } catch (err) {
    // Some senders label raw deflate streams (no zlib header) as "deflate".
    if (/** @type {any} */ (err).code !== 'Z_DATA_ERROR') throw err;
    return await zlibInSlices(zlib.createInflateRaw, body, limit, slicer);
  }
}

/** `snappy` means one block; older Collectors sent the framing format under the same name, so it is recognised. @param {Buffer} body @param {number} limit @param {Slicer} slicer */
const snappy = (body, limit, slicer) =>
  body.subarray(0, SNAPPY_STREAM_ID.length).equals(SNAPPY_STREAM_ID) ? decodeSnappyFramed(body, limit, slicer) : decodeSnappyBlock(body, limit, slicer);

/**
 * The accepted encodings, as the Collector's OTLP/HTTP receiver names them; each decoder stops at `limit`.
 * @type {Readonly<Record<string, { format: string, decode: (body: Buffer, limit: number, slicer: Slicer) => Promise<Buffer> }>>}
 */
const CODECS = Object.freeze({
  gzip: { format: 'gzip', decode: gunzip },
  deflate: { format: 'deflate', decode: deflate },
  zlib: { format: 'zlib', decode: deflate },
  zstd: { format: 'zstd', decode: decodeZstd },
  snappy: { format: 'snappy', decode: snappy },
  'x-snappy-framed': { format: 'framed snappy', decode: decodeSnappyFramed },
  lz4: { format: 'lz4', decode: decodeLz4Frames },
});

const CONTENT_ENCODINGS = Object.freeze(Object.keys(CODECS));

const slots = new Slots(MAX_CONCURRENT_DECOMPRESSIONS);

/**
 * Decodes a body by its Content-Encoding (lower case, trimmed; empty or `identity` for none). When `gone` says
 * the client has left, decoding stops at its next turn with a DecompressError (no one is left to see it). The
 * output is taken from `room` before it is allocated, so that bodies decoded at once hold no more than the
 * in-flight budget: a decoded body leaves exactly its length taken, a refused one nothing; one that does not fit
 * is a `busy` DecompressError.
 * @param {Buffer} body @param {string} encoding @param {number} limit @param {() => boolean} [gone]
 * @param {import('./slices.js').Room} [room] @returns {Promise<Buffer>}
 */
export async function decompress(body, encoding, limit, gone, room) {
  if (encoding === '' || encoding === 'identity') return body;
  const codec = Object.hasOwn(CODECS, encoding) ? CODECS[encoding] : undefined;
  if (!codec) throw new DecompressError(`unsupported Content-Encoding "${encoding}" (use ${CONTENT_ENCODINGS.join(', ')} or none)`);
  if (body.length === 0) return body;
  return slots.run(async () => {
    try {
      return await decodedInSlices((slicer) => codec.decode(body, limit, slicer), gone, room);
    } catch (err) {
      if (err instanceof DecompressError) throw err;
      if (err instanceof ClientGone) throw new DecompressError(err.message);
      if (err instanceof NoRoom) throw new DecompressError(err.message, false, false, true);
      if (err instanceof Lz4Error && err.tooLarge) throw new DecompressError(err.message, true, err.pastLimit);
      throw new DecompressError(`body is not valid ${codec.format} data: ${/** @type {Error} */ (err).message}`);
    }
  });
}

/**
 * Runs a decoder in slices that take turns with all other sliced work, its output taken from `room`: a request
 * body's (`decompress`) or an OTAP batch's zstd frame (otap/arrow.js). It starts by waiting for its turn, so that
 * bodies already being decoded, and requests already waiting, go first. A snappy block takes its declared length
 * before it is decoded; the streaming decoders' output, whose size is known only at the end, is taken then (two
 * bombs decoded at once must each reach their 413). A decoder that fails gives back all it took; its error passes
 * through, as do ClientGone and NoRoom, for the caller to answer on its own wire.
 * @param {(slicer: Slicer) => Promise<Buffer>} decode @param {() => boolean} [gone]
 * @param {import('./slices.js').Room} [room] @returns {Promise<Buffer>}
 */
export async function decodedInSlices(decode, gone, room) {
  const slicer = new Slicer(gone, room);
  try {
    await slicer.pause();
    const out = await decode(slicer);
    if (slicer.taken > out.length) slicer.give(slicer.taken - out.length);
    else slicer.take(out.length - slicer.taken);
    return out;
  } catch (err) {
    slicer.give(slicer.taken);
    throw err;
  }
}
