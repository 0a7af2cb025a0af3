// Content-Encoding of OTLP/HTTP bodies: the encodings the Collector's receiver accepts (confighttp), each decoded
// without ever holding more than the request limit, so that a small compressed body cannot make a large one.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { Decompress as ZstdStream } from 'fzstd';
import { uncompress as snappyBlock, uncompressSync as snappyBlockSync } from 'snappy';
import { decodeLz4Frames, Lz4Error } from './lz4.js';

/** A body that cannot be decoded: `tooLarge` ones are answered 413, the others 400. */
export class DecompressError extends Error {
  /** @param {string} message @param {boolean} [tooLarge] */
  constructor(message, tooLarge = false) {
    super(message);
    this.tooLarge = tooLarge;
  }
}

/** @param {number} limit */
const overLimit = (limit) => new DecompressError(`decompressed request body exceeds the limit of ${limit} bytes`, true);

/**
 * Runs one of Node's zlib decoders, which stops by itself at `maxOutputLength` and says so with a RangeError.
 * @param {(body: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>} decoder
 */
const limitedZlib = (decoder) => async (/** @type {Buffer} */ body, /** @type {number} */ limit) => {
  try {
    return await decoder(body, { maxOutputLength: limit });
  } catch (err) {
    if (/** @type {any} */ (err).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw overLimit(limit);
    throw err;
  }
};

const gunzip = limitedZlib(promisify(zlib.gunzip));
const inflate = limitedZlib(promisify(zlib.inflate));
const inflateRaw = limitedZlib(promisify(zlib.inflateRaw));

/** @param {Buffer} body @param {number} limit */
async function deflate(body, limit) {
  try {
    return await inflate(body, limit);
  } catch (err) {
    // Some senders label raw deflate streams (no zlib header) as "deflate".
    if (/** @type {any} */ (err).code !== 'Z_DATA_ERROR') throw err;
    return await inflateRaw(body, limit);
  }
}

// ---- zstd ----------------------------------------------------------------------------------------------------

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const ZSTD_SKIPPABLE = 0x184d2a50;
const ZSTD_MAX_BLOCK = 128 << 10;

/**
 * Walks the frames and blocks of a zstd body without decoding them: proves it whole (a truncated body is named
 * as such), and refuses frames that declare more content, or a larger window, than the limit allows before any
 * decoder allocates them.
 * @param {Buffer} body @param {number} limit
 */
export function checkZstdFrames(body, limit) {
  const truncated = () => new DecompressError('zstd frame is truncated');
  let p = 0;
  while (p < body.length) {
    if (p + 4 > body.length) throw new DecompressError('zstd body ends with a partial frame');
    const magic = body.readUInt32LE(p);
    if (((magic & SKIPPABLE_MASK) >>> 0) === ZSTD_SKIPPABLE) {
      if (p + 8 > body.length) throw truncated();
      p += 8 + body.readUInt32LE(p + 4);
      if (p > body.length) throw truncated();
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new DecompressError(`not a zstd frame (magic number 0x${magic.toString(16).padStart(8, '0')})`);
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
    if (window > limit) throw new DecompressError(`zstd frame asks for a window of ${window} bytes, more than the limit of ${limit} bytes`, true);
    const blockMax = Math.min(ZSTD_MAX_BLOCK, singleSegment ? Math.max(declared, 1) : window);
    for (let last = false; !last; ) {
      if (p + 3 > body.length) throw truncated();
      const header = body.readUIntLE(p, 3);
      p += 3;
      last = (header & 1) === 1;
      const type = (header >>> 1) & 3;
      const size = header >>> 3;
      if (type === 3) throw new DecompressError('zstd block has the reserved block type');
      if (size > blockMax) throw new DecompressError(`zstd block of ${size} bytes is larger than the frame allows (${blockMax})`);
      p += type === 1 ? 1 : size;
      if (p > body.length) throw truncated();
    }
    if (fhd & 0x04) p += 4;
    if (p > body.length) throw truncated();
  }
}

/** Node's own zstd (22.15 and later), used where it exists. */
const nodeZstd = typeof (/** @type {any} */ (zlib).zstdDecompress) === 'function' ? limitedZlib(promisify(/** @type {any} */ (zlib).zstdDecompress)) : null;

/**
 * zstd without Node's zlib (before Node 22.15): fzstd's streaming decoder hands over each block as it is decoded
 * (at most 128 KiB), so counting them stops a bomb at the limit.
 * @param {Buffer} body @param {number} limit
 */
export function zstdInJs(body, limit) {
  /** @type {Uint8Array[]} */
  const parts = [];
  let size = 0;
  const stream = new ZstdStream((chunk) => {
    size += chunk.length;
    if (size > limit) throw overLimit(limit);
    parts.push(chunk);
  });
  stream.push(body, true);
  return Buffer.concat(parts, size);
}

/** @param {Buffer} body @param {number} limit */
async function zstd(body, limit) {
  checkZstdFrames(body, limit);
  return nodeZstd ? nodeZstd(body, limit) : zstdInJs(body, limit);
}

// ---- snappy --------------------------------------------------------------------------------------------------

/** The uncompressed length a snappy block starts with (a varint of at most 32 bits); -1 when it is malformed. @param {Uint8Array} b @param {number} start @param {number} end */
function snappyLength(b, start, end) {
  let value = 0;
  for (let i = 0, p = start; i < 5 && p < end; i++, p++) {
    value += (b[p] & 0x7f) * 2 ** (7 * i);
    if (b[p] < 0x80) return value;
  }
  return -1;
}

const CRC32C_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  CRC32C_TABLE[n] = c;
}

/** The masked CRC-32C that snappy's framing format puts before each chunk. @param {Uint8Array} b */
function maskedCrc32c(b) {
  let c = -1;
  for (let i = 0; i < b.length; i++) c = CRC32C_TABLE[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  c = ~c >>> 0;
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

const SNAPPY_STREAM_ID = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);
/** The framing format's limit on a chunk's uncompressed data. */
const SNAPPY_CHUNK = 65536;

/** One snappy block: its declared length is checked before the decoder allocates it. @param {Buffer} body @param {number} limit */
async function snappyRaw(body, limit) {
  const length = snappyLength(body, 0, body.length);
  if (length < 0) throw new DecompressError('body is not valid snappy data: it does not start with a length');
  if (length > limit) throw new DecompressError(`snappy block declares ${length} bytes, more than the limit of ${limit} bytes`, true);
  return /** @type {Buffer} */ (await snappyBlock(body, { asBuffer: true }));
}

/**
 * The snappy framing format: chunks of at most 64 KiB each, with checksums, decoded one at a time.
 * @param {Buffer} body @param {number} limit
 */
function snappyFramed(body, limit) {
  const malformed = (/** @type {string} */ why) => new DecompressError(`malformed snappy framed stream: ${why}`);
  if (!body.subarray(0, SNAPPY_STREAM_ID.length).equals(SNAPPY_STREAM_ID)) throw malformed('it does not start with the stream identifier');
  /** @type {Buffer[]} */
  const parts = [];
  let size = 0;
  let p = 0;
  while (p < body.length) {
    if (p + 4 > body.length) throw malformed('a chunk header is truncated');
    const type = body[p];
    const length = body.readUIntLE(p + 1, 3);
    const start = p + 4;
    p = start + length;
    if (p > body.length) throw malformed('a chunk is truncated');
    if (type === 0xff) {
      if (!body.subarray(start - 4, p).equals(SNAPPY_STREAM_ID)) throw malformed('a stream identifier is wrong');
      continue;
    }
    if (type >= 0x80) continue;
    if (type > 0x01) throw malformed(`chunk type 0x${type.toString(16)} is reserved and cannot be skipped`);
    if (length < 4) throw malformed('a data chunk is too short for its checksum');
    const stored = body.subarray(start + 4, p);
    let data = stored;
    if (type === 0x00) {
      const declared = snappyLength(stored, 0, stored.length);
      if (declared < 0 || declared > SNAPPY_CHUNK) throw malformed('a compressed chunk declares an impossible length');
      if (size + declared > limit) throw overLimit(limit);
      try {
        data = /** @type {Buffer} */ (snappyBlockSync(stored, { asBuffer: true }));
      } catch (err) {
        throw malformed(/** @type {Error} */ (err).message);
      }
    } else if (stored.length > SNAPPY_CHUNK) throw malformed('an uncompressed chunk is longer than 64 KiB');
    if (body.readUInt32LE(start) !== maskedCrc32c(data)) throw malformed('a chunk checksum does not match');
    size += data.length;
    if (size > limit) throw overLimit(limit);
    parts.push(data);
  }
  return Buffer.concat(parts, size);
}

/** `snappy` means one block; older Collectors sent the framing format under the same name, so it is recognised. @param {Buffer} body @param {number} limit */
const snappy = (body, limit) => (body.subarray(0, SNAPPY_STREAM_ID.length).equals(SNAPPY_STREAM_ID) ? snappyFramed(body, limit) : snappyRaw(body, limit));

/**
 * The accepted encodings, as the Collector's OTLP/HTTP receiver names them; each decoder stops at `limit`.
 * @type {Readonly<Record<string, { format: string, decode: (body: Buffer, limit: number) => Buffer|Promise<Buffer> }>>}
 */
const CODECS = Object.freeze({
  gzip: { format: 'gzip', decode: gunzip },
  deflate: { format: 'deflate', decode: deflate },
  zlib: { format: 'zlib', decode: deflate },
  zstd: { format: 'zstd', decode: zstd },
  snappy: { format: 'snappy', decode: snappy },
  'x-snappy-framed': { format: 'framed snappy', decode: snappyFramed },
  lz4: { format: 'lz4', decode: decodeLz4Frames },
});

const CONTENT_ENCODINGS = Object.freeze(Object.keys(CODECS));

/**
 * Decodes a body by its Content-Encoding (lower case, trimmed; empty or `identity` for none).
 * @param {Buffer} body @param {string} encoding @param {number} limit @returns {Promise<Buffer>}
 */
export async function decompress(body, encoding, limit) {
  if (encoding === '' || encoding === 'identity') return body;
  const codec = Object.hasOwn(CODECS, encoding) ? CODECS[encoding] : undefined;
  if (!codec) throw new DecompressError(`unsupported Content-Encoding "${encoding}" (use ${CONTENT_ENCODINGS.join(', ')} or none)`);
  if (body.length === 0) return body;
  try {
    return await codec.decode(body, limit);
  } catch (err) {
    if (err instanceof DecompressError) throw err;
    if (err instanceof Lz4Error && err.tooLarge) throw new DecompressError(err.message, true);
    throw new DecompressError(`body is not valid ${codec.format} data: ${/** @type {Error} */ (err).message}`);
  }
}
