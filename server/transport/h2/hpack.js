// HPACK (RFC 7541) for the gRPC port's HTTP/2 sessions: a decoder of the header blocks clients send, with the
// dynamic table they index into, and an encoder that writes the server's few header sets as literals never indexed,
// so that the server keeps no table of its own and an answer's block can be made once and sent every time.
import { decodeHuffman, HuffmanError } from './huffman.js';

/** The static table (RFC 7541, Appendix A), index 1 first. */
const STATIC = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
/** An entry's size in the table: its name and value in octets, and 32 (RFC 7541, 4.1). */
const ENTRY_OVERHEAD = 32;
/** The largest integer a block may hold: any length or index past it is an attack, not a header. */
const MAX_INTEGER = 2 ** 31 - 1;

/** A header block that cannot be decoded: a connection error (COMPRESSION_ERROR), since the table is now unknown. */
export class CompressionError extends Error {}

/**
 * @typedef {Record<string, string|string[]>} HeaderObject a value per name, a list for a name that came more than once
 */

export class HpackDecoder {
  /** @param {number} maxTableSize the table size the server's SETTINGS allow (SETTINGS_HEADER_TABLE_SIZE) */
  constructor(maxTableSize) {
    this.allowed = maxTableSize;
    this.maxSize = maxTableSize;
    this.size = 0;
    /** Newest last: index 62 is the last one. @type {[string, string][]} */
    this.entries = [];
    this.pos = 0;
    /** The octets of the block's names and values so far, as SETTINGS_MAX_HEADER_LIST_SIZE counts them. */
    this.listSize = 0;
  }

  /**
   * The headers of the block in `buf` from `start` to `end`. Past `maxListSize` octets (names, values and 32 an entry)
   * the rest is still decoded, for the table's sake, but not kept, and `this.listSize` says how large it was.
   * @param {Buffer} buf @param {number} start @param {number} end @param {number} maxListSize
   * @returns {HeaderObject}
   */
  decode(buf, start, end, maxListSize) {
    /** @type {HeaderObject} */
    const headers = Object.create(null);
    this.pos = start;
    this.listSize = 0;
    let first = true;
    while (this.pos < end) {
      const octet = buf[this.pos];
      let name;
      let value;
      if (octet & 0x80) {
        const entry = this.entry(this.integer(buf, end, 7));
        name = entry[0];
        value = entry[1];
      } else if (octet & 0x40) {
        const index = this.integer(buf, end, 6);
        name = index === 0 ? this.string(buf, end) : this.entry(index)[0];
        value = this.string(buf, end);
        this.add(name, value);
      } else if (octet & 0x20) {
        // A table size update comes only at the start of a block (RFC 7541, 4.2).
        if (!first) throw new CompressionError('a dynamic table size update after a header field');
        const size = this.integer(buf, end, 5);
        if (size > this.allowed) throw new CompressionError(`a dynamic table size update to ${size}, past the ${this.allowed} allowed`);
        this.maxSize = size;
        this.evict(0);
        continue;
      } else {
        // Without indexing (0000) or never indexed (0001): the same to a decoder.
        const index = this.integer(buf, end, 4);
        name = index === 0 ? this.string(buf, end) : this.entry(index)[0];
        value = this.string(buf, end);
      }
      first = false;
      this.listSize += name.length + value.length + ENTRY_OVERHEAD;
      if (this.listSize > maxListSize) continue;
      const had = headers[name];
      if (had === undefined) headers[name] = value;
      else if (typeof had === 'string') headers[name] = [had, value];
      else had.push(value);
    }
    return headers;
  }

  /** @param {Buffer} buf @param {number} end @param {number} prefixBits */
  integer(buf, end, prefixBits) {
    const max = (1 << prefixBits) - 1;
    let value = buf[this.pos++] & max;
    if (value < max) return value;
    let shift = 0;
    for (;;) {
      if (this.pos >= end) throw new CompressionError('a header block ends inside an integer');
      const octet = buf[this.pos++];
      value += (octet & 0x7f) * 2 ** shift;
      if (value > MAX_INTEGER) throw new CompressionError('an integer past 2^31 in a header block');
      if ((octet & 0x80) === 0) return value;
      shift += 7;
    }
  }

  /** @param {Buffer} buf @param {number} end */
  string(buf, end) {
    if (this.pos >= end) throw new CompressionError('a header block ends before a string');
    const huffman = (buf[this.pos] & 0x80) !== 0;
    const length = this.integer(buf, end, 7);
    const from = this.pos;
    if (length > end - from) throw new CompressionError('a string runs past the end of its header block');
    this.pos = from + length;
    if (!huffman) return buf.toString('latin1', from, from + length);
    try {
      return decodeHuffman(buf, from, from + length);
    } catch (err) {
      if (err instanceof HuffmanError) throw new CompressionError(err.message);
      throw err;
    }
  }

  /** @param {number} index @returns {[string, string]} */
  entry(index) {
    if (index >= 1 && index <= STATIC.length) return /** @type {[string, string]} */ (STATIC[index - 1]);
    const at = this.entries.length - 1 - (index - STATIC.length - 1);
    if (index === 0 || at < 0) throw new CompressionError(`header index ${index} is in neither table`);
    return this.entries[at];
  }

  /** @param {string} name @param {string} value */
  add(name, value) {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    // An entry larger than the table empties it and is not kept (RFC 7541, 4.4).
    this.evict(size);
    if (size > this.maxSize) return;
    this.entries.push([name, value]);
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. @param {number} room */
  evict(room) {
    let drop = 0;
    while (this.size + room > this.maxSize && drop < this.entries.length) {
      const [name, value] = this.entries[drop++];
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
    }
    if (drop > 0) this.entries.splice(0, drop);
  }
}

/** @param {number[]} out @param {number} value @param {number} prefixBits @param {number} first the prefix's flag bits */
function writeInteger(out, value, prefixBits, first) {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(first | value);
    return;
  }
  out.push(first | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/**
 * A header block of `headers` as literals never indexed, names and values as they are (no Huffman code): a block
 * that needs no table on either side, so that it can be made once and sent on any session. Values are texts.
 * @param {Record<string, string|number>} headers @returns {Buffer}
 */
export function encodeHeaders(headers) {
  /** @type {number[]} */
  const out = [];
  for (const [name, raw] of Object.entries(headers)) {
    const value = Buffer.from(String(raw), 'latin1');
    const key = Buffer.from(name, 'latin1');
    out.push(0x10);
    writeInteger(out, key.length, 7, 0);
    for (const octet of key) out.push(octet);
    writeInteger(out, value.length, 7, 0);
    for (const octet of value) out.push(octet);
  }
  return Buffer.from(out);
}
