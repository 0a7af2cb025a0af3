// The wire reader: one cursor over the protobuf bytes being read, and what every decoder reads them with:
// varints, fixed-width numbers, strings (with a table of recent ones), ids as hex, skipping what a decoder does
// not keep, and finding an item again by its place. It knows no OTLP message; the decoders (common.js, traces.js,
// logs.js, metrics.js) name their fields' tags with `fieldTag`, a table per message.
import { DecodeError } from '../errors.js';
import { isKeptWhole, keptCopy } from '../kept-bytes.js';

export const MAX_DEPTH = 64;

/**
 * Node's Buffer has native slicers for each string encoding; `toString(encoding, start, end)` reaches
 * them through an extra dispatch, measurable at millions of calls a second.
 * @typedef {Buffer & { utf8Slice(s: number, e: number): string, hexSlice(s: number, e: number): string,
 *   base64Slice(s: number, e: number): string, latin1Slice(s: number, e: number): string }} SlicingBuffer
 */

/** The bytes of a request that its lazy items keep, and a view of them. @typedef {{ bytes: SlicingBuffer, view: DataView }} Source */

const EMPTY_BUFFER = /** @type {SlicingBuffer} */ (Buffer.alloc(0));
const EMPTY_VIEW = new DataView(EMPTY_BUFFER.buffer, EMPTY_BUFFER.byteOffset, 0);

/**
 * The cursor every decoder and reader reads through: one at a time reads, since a decode runs to its end
 * without yielding and a reader of a stored item (readItem) likewise.
 */
export const cursor = {
  /** @type {SlicingBuffer} */
  buf: EMPTY_BUFFER,
  view: EMPTY_VIEW,
  pos: 0,
  /** the kind of request being read (its signal), for the memory its bytes are kept in */
  kind: '',
  /**
   * Off while an item is only checked, not built (see `check`): the same code then validates every byte
   * exactly as a full decode would, but creates no strings and keeps no objects.
   */
  building: true,
  /** On while a span is checked: the store indexes spans by trace id, so the check keeps that one string. */
  keepTraceId: false,
};

/**
 * Points the cursor at the start of `bytes`, a whole message.
 * @param {Uint8Array} bytes @param {string} [kind] what kind of request (its signal), should its bytes be kept
 */
export function open(bytes, kind = '') {
  const buf = /** @type {SlicingBuffer} */ (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  cursor.buf = buf;
  cursor.kind = kind;
  cursor.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  cursor.pos = 0;
}

/** Lets go of the bytes `open` was given, and of any mode a failed read left on. */
export function close() {
  cursor.buf = EMPTY_BUFFER;
  cursor.view = EMPTY_VIEW;
  cursor.building = true;
  cursor.keepTraceId = false;
}

/**
 * The bytes being read, as the items of the request keep them: a slice of a larger buffer (a socket read, a
 * pooled chunk) would keep all of it alive, so such bytes are copied first (kept-bytes.js), and read from the copy.
 * @returns {Source}
 */
export function ownSource() {
  let buf = cursor.buf;
  if (!isKeptWhole(buf)) {
    buf = /** @type {SlicingBuffer} */ (keptCopy(buf, cursor.kind));
    cursor.buf = buf;
    cursor.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  return { bytes: buf, view: cursor.view };
}

/**
 * Runs a decoder over a message's bytes with every check and nothing built.
 * @template T @param {(end: number) => T} decode @param {number} end @returns {T}
 */
export function check(decode, end) {
  cursor.building = false;
  const out = decode(end);
  cursor.building = true;
  return out;
}

/** @param {string} what */
export function fail(what) {
  return new DecodeError(`invalid protobuf at byte ${cursor.pos}: ${what}`);
}

// ---- tags ----

/** Wire types. */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

/** A field's tag as the wire writes it before the field's value. @param {number} field @param {number} wireType */
export const fieldTag = (field, wireType) => (field << 3) | wireType;

/**
 * The bit mask of the field numbers (1..31) of a message's table of tags, as `skip` takes it: a field the
 * message defines that arrives with another wire type is an error, not something to skip.
 * @param {Record<string, number>} tags
 */
export function fieldsOf(tags) {
  let m = 0;
  for (const t of Object.values(tags)) if (t >>> 3 < 32) m |= 1 << (t >>> 3);
  return m;
}

// ---- numbers ----

export function varint32() {
  const buf = cursor.buf;
  let b = buf[cursor.pos++];
  let v = b & 0x7f;
  if (b < 0x80) return v;
  b = buf[cursor.pos++];
  v |= (b & 0x7f) << 7;
  if (b < 0x80) return v;
  b = buf[cursor.pos++];
  v |= (b & 0x7f) << 14;
  if (b < 0x80) return v;
  b = buf[cursor.pos++];
  v |= (b & 0x7f) << 21;
  if (b < 0x80) return v;
  b = buf[cursor.pos++];
  v = (v | ((b & 0x0f) << 28)) >>> 0;
  if (b < 0x80) return v;
  // The upper half of a 64-bit varint does not fit a 32-bit field: protobuf truncates it.
  for (let i = 0; i < 5; i++) if (buf[cursor.pos++] < 0x80) return v;
  throw fail('varint longer than 10 bytes');
}

export function zigzag32() {
  const v = varint32();
  return (v >>> 1) ^ -(v & 1);
}

const digitScratch = /** @type {SlicingBuffer} */ (Buffer.allocUnsafe(24));

/** Exact decimal text of an unsigned 64-bit value given as two 32-bit halves, without BigInt. @param {number} lo @param {number} hi */
export function u64String(lo, hi) {
  if (hi < 0x200000) return String(hi * 4294967296 + lo);
  // n = a·2^48 + l, with 2^48 = 28147497·10^7 + 6710656: every partial product stays below 2^53.
  const a = hi >>> 16;
  const low = a * 6710656 + (hi & 0xffff) * 4294967296 + lo;
  const carry = Math.floor(low / 1e7);
  let high = a * 28147497 + carry;
  let rest = low - carry * 1e7;
  if (high >= 1e11 && high < 1e12) return nineteenDigits(high, rest);
  let i = 24;
  for (let k = 0; k < 7; k++) {
    const q = Math.floor(rest / 10);
    digitScratch[--i] = 48 + rest - q * 10;
    rest = q;
  }
  while (high > 0) {
    const q = Math.floor(high / 10);
    digitScratch[--i] = 48 + high - q * 10;
    high = q;
  }
  return digitScratch.latin1Slice(i, 24);
}

/** @param {number} n @param {number} unit */
const digit = (n, unit) => 48 + (((n / unit) | 0) % 10);

/**
 * Every nanosecond timestamp since 2001 has 19 digits. Built from char codes in JS, which costs less
 * than filling a buffer and crossing into Node's native slicer.
 * @param {number} high the first 12 digits @param {number} rest the last 7
 */
function nineteenDigits(high, rest) {
  const b = (high / 1e6) | 0;
  const a = high - b * 1e6;
  return String.fromCharCode(
    digit(b, 1e5),
    digit(b, 1e4),
    digit(b, 1e3),
    digit(b, 100),
    digit(b, 10),
    48 + (b % 10),
    digit(a, 1e5),
    digit(a, 1e4),
    digit(a, 1e3),
    digit(a, 100),
    digit(a, 10),
    48 + (a % 10),
    digit(rest, 1e6),
    digit(rest, 1e5),
    digit(rest, 1e4),
    digit(rest, 1e3),
    digit(rest, 100),
    digit(rest, 10),
    48 + (rest % 10),
  );
}

/** @param {number} lo @param {number} hi */
function i64String(lo, hi) {
  if (hi < 0x80000000) return u64String(lo, hi);
  const nlo = (~lo + 1) >>> 0;
  const nhi = (~hi + (nlo === 0 ? 1 : 0)) >>> 0;
  return '-' + u64String(nlo, nhi);
}

/** @param {boolean} signed */
export function varint64String(signed) {
  const buf = cursor.buf;
  let lo = 0;
  let b;
  for (let shift = 0; shift < 28; shift += 7) {
    b = buf[cursor.pos++];
    lo |= (b & 0x7f) << shift;
    if (b < 0x80) return cursor.building ? String(lo >>> 0) : '0';
  }
  b = buf[cursor.pos++];
  lo |= (b & 0x7f) << 28;
  let hi = (b & 0x7f) >>> 4;
  if (b >= 0x80) {
    let done = false;
    for (let shift = 3; shift < 64; shift += 7) {
      b = buf[cursor.pos++];
      if (shift < 32) hi |= (b & 0x7f) << shift;
      if (b < 0x80) {
        done = true;
        break;
      }
    }
    if (!done) throw fail('varint longer than 10 bytes');
  }
  if (!cursor.building) return '0';
  return signed ? i64String(lo >>> 0, hi >>> 0) : u64String(lo >>> 0, hi >>> 0);
}

/** A varint32 at `p`, leaving the cursor where it was. @param {number} p */
export function varint32At(p) {
  const was = cursor.pos;
  cursor.pos = p;
  const v = varint32();
  cursor.pos = was;
  return v;
}

/** @param {number} n @param {number} end */
function need(n, end) {
  if (cursor.pos + n > end) throw fail('truncated');
}

export function u32le() {
  const buf = cursor.buf;
  const p = cursor.pos;
  const v = (buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)) >>> 0;
  cursor.pos = p + 4;
  return v;
}

/** @param {number} end */
export function fixed32(end) {
  need(4, end);
  return u32le();
}

/** @param {number} end @param {boolean} signed */
export function fixed64String(end, signed) {
  need(8, end);
  if (!cursor.building) {
    cursor.pos += 8;
    return '0';
  }
  const lo = u32le();
  const hi = u32le();
  return signed ? i64String(lo, hi) : u64String(lo, hi);
}

/** The halves of the last fixed64 `fixed64Halves` read: a time compared as read, without making its text. */
export const halves = { hi: 0, lo: 0 };

/** Reads a fixed64 of a checked item into `halves`. */
export function fixed64Halves() {
  halves.lo = u32le();
  halves.hi = u32le();
}

/** @param {number} end */
export function double(end) {
  need(8, end);
  if (!cursor.building) {
    cursor.pos += 8;
    return 0;
  }
  const v = cursor.view.getFloat64(cursor.pos, true);
  cursor.pos += 8;
  return v;
}

// ---- length-delimited ----

/** Reads a length prefix and returns where the delimited field ends. @param {number} end */
export function delimited(end) {
  const len = varint32();
  const pos = cursor.pos;
  const e = pos + len;
  if (e > end || pos > end) throw fail('length runs past the end of its message');
  return e;
}

/** @param {number} end */
export function string(end) {
  const e = delimited(end);
  const s = e === cursor.pos || !cursor.building ? '' : cursor.buf.utf8Slice(cursor.pos, e);
  cursor.pos = e;
  return s;
}

/** @param {number} end */
export function base64(end) {
  const e = delimited(end);
  const s = e === cursor.pos || !cursor.building ? '' : cursor.buf.base64Slice(cursor.pos, e);
  cursor.pos = e;
  return s;
}

/**
 * Whether the `len` bytes at `start` are a table's bytes from `at` (a multiple of 4): compared four at a time,
 * a third of the cost of comparing them one by one.
 * @param {number} start @param {number} len @param {Uint8Array} bytes @param {Int32Array} words the same memory @param {number} at
 */
export function sameBytes(start, len, bytes, words, at) {
  const view = cursor.view;
  const buf = cursor.buf;
  const wholeWords = len & ~3;
  const first = at >>> 2;
  let i = 0;
  while (i < wholeWords && view.getInt32(start + i, true) === words[first + (i >>> 2)]) i += 4;
  if (i < wholeWords) return false;
  while (i < len && bytes[at + i] === buf[start + i]) i++;
  return i === len;
}

const RECENT_SLOTS = 4096;
const MAX_RECENT_LENGTH = 64;
/** @type {string[]} */
const recent = new Array(RECENT_SLOTS).fill('');
/** The UTF-8 bytes of each slot's string, MAX_RECENT_LENGTH apart, and their count. */
const recentBytes = new Uint8Array(RECENT_SLOTS * MAX_RECENT_LENGTH);
const recentWords = new Int32Array(recentBytes.buffer);
const recentLengths = new Uint8Array(RECENT_SLOTS);

/**
 * A string that repeats from item to item (attribute keys, span and metric names): served from a small table
 * of recent ones whose bytes are compared with the wire's four at a time, which costs less than Node's native
 * slice call (and a third of comparing character by character) and keeps one copy of each in memory.
 * @param {number} end
 */
export function recurring(end) {
  const e = delimited(end);
  const start = cursor.pos;
  const len = e - start;
  cursor.pos = e;
  if (len === 0 || !cursor.building) return '';
  const b = cursor.buf;
  if (len > MAX_RECENT_LENGTH) return b.utf8Slice(start, e);
  // A few bytes pick the slot (names that share a prefix differ near their end); the full compare decides.
  const h = Math.imul(len ^ (b[start] << 8) ^ (b[e - 1] << 16) ^ (b[e - 2] << 24) ^ b[start + (len >>> 1)], 0x9e3779b1);
  const slot = (h >>> 20) & (RECENT_SLOTS - 1);
  const at = slot * MAX_RECENT_LENGTH;
  if (recentLengths[slot] === len && sameBytes(start, len, recentBytes, recentWords, at)) return recent[slot];
  const s = b.utf8Slice(start, e);
  recent[slot] = s;
  recentLengths[slot] = len;
  recentBytes.set(b.subarray(start, e), at);
  return s;
}

// ---- ids ----

const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** @param {Uint8Array} b @param {number} p */
const high = (b, p) => HEX[b[p] >>> 4];
/** @param {Uint8Array} b @param {number} p */
const low = (b, p) => HEX[b[p] & 15];
/** @param {Uint8Array} b @param {number} p */
const word = (b, p) => b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);

/** @param {Uint8Array} b @param {number} p */
function hex8(b, p) {
  return String.fromCharCode(
    high(b, p),
    low(b, p),
    high(b, p + 1),
    low(b, p + 1),
    high(b, p + 2),
    low(b, p + 2),
    high(b, p + 3),
    low(b, p + 3),
    high(b, p + 4),
    low(b, p + 4),
    high(b, p + 5),
    low(b, p + 5),
    high(b, p + 6),
    low(b, p + 6),
    high(b, p + 7),
    low(b, p + 7),
  );
}

/** @param {Uint8Array} b @param {number} p */
function hex16(b, p) {
  return String.fromCharCode(
    high(b, p),
    low(b, p),
    high(b, p + 1),
    low(b, p + 1),
    high(b, p + 2),
    low(b, p + 2),
    high(b, p + 3),
    low(b, p + 3),
    high(b, p + 4),
    low(b, p + 4),
    high(b, p + 5),
    low(b, p + 5),
    high(b, p + 6),
    low(b, p + 6),
    high(b, p + 7),
    low(b, p + 7),
    high(b, p + 8),
    low(b, p + 8),
    high(b, p + 9),
    low(b, p + 9),
    high(b, p + 10),
    low(b, p + 10),
    high(b, p + 11),
    low(b, p + 11),
    high(b, p + 12),
    low(b, p + 12),
    high(b, p + 13),
    low(b, p + 13),
    high(b, p + 14),
    low(b, p + 14),
    high(b, p + 15),
    low(b, p + 15),
  );
}

const ID_SLOTS = 1024;
const idWords = new Int32Array(ID_SLOTS * 4);
/** @type {string[]} */
const idTexts = new Array(ID_SLOTS).fill('');

/**
 * Ids recur within a request: a trace id in every span of the trace, a span id again as its children's
 * parent. A table of recent ones, compared as 32-bit words, hands out one string per id.
 * @param {number} p @param {8|16} size
 */
function hexId(p, size) {
  const buf = cursor.buf;
  const w0 = word(buf, p);
  const w1 = word(buf, p + 4);
  const w2 = size === 16 ? word(buf, p + 8) : 0;
  const w3 = size === 16 ? word(buf, p + 12) : 0;
  const slot = (Math.imul(w0 ^ w1 ^ w2 ^ w3, 0x9e3779b1) >>> 22) & (ID_SLOTS - 1);
  const at = slot * 4;
  const known = idTexts[slot];
  if (known.length === size * 2 && idWords[at] === w0 && idWords[at + 1] === w1 && idWords[at + 2] === w2 && idWords[at + 3] === w3) return known;
  const text = size === 16 ? hex16(buf, p) : hex8(buf, p);
  idWords[at] = w0;
  idWords[at + 1] = w1;
  idWords[at + 2] = w2;
  idWords[at + 3] = w3;
  idTexts[slot] = text;
  return text;
}

/**
 * A trace or span id: `size` bytes or none at all, as lowercase hex.
 * @param {number} end @param {8|16} size @param {string} what
 */
function id(end, size, what) {
  const e = delimited(end);
  const len = e - cursor.pos;
  if (len === 0) return '';
  if (len !== size) throw fail(`${what} must be ${size} bytes, got ${len}`);
  const s = cursor.building || (cursor.keepTraceId && size === 16) ? hexId(cursor.pos, size) : '';
  cursor.pos = e;
  return s;
}

export const traceIdOf = (/** @type {number} */ end) => id(end, 16, 'trace id');
export const spanIdOf = (/** @type {number} */ end) => id(end, 8, 'span id');

// ---- fields not kept ----

/**
 * Skips a field this decoder does not keep. A known field number with the wrong wire type is an error,
 * not something to skip: it means the sender's schema disagrees with ours.
 * @param {number} tag @param {number} end @param {number} known bit mask of field numbers 1..31 the message defines (fieldsOf)
 */
export function skip(tag, end, known) {
  const field = tag >>> 3;
  if (field === 0) throw fail('field number 0');
  if (field < 32 && (known & (1 << field)) !== 0) throw fail(`field ${field} has unexpected wire type ${tag & 7}`);
  skipValue(tag & 7, end, 0);
}

/** @param {number} wireType @param {number} end @param {number} depth */
function skipValue(wireType, end, depth) {
  // Literal cases: an exported constant is read from its module cell, a switch of literals costs nothing.
  switch (wireType) {
    case 0: // VARINT
      varint64String(false);
      break;
    case 1: // I64
      need(8, end);
      cursor.pos += 8;
      break;
    case 2: // LEN
      cursor.pos = delimited(end);
      break;
    case 3: {
      // A group (deprecated): its fields, up to its end tag (wire type 4).
      if (depth > MAX_DEPTH) throw fail('groups nested too deep');
      for (;;) {
        if (cursor.pos >= end) throw fail('unterminated group');
        const t = varint32();
        if ((t & 7) === 4) break;
        skipValue(t & 7, end, depth + 1);
      }
      break;
    }
    case 5: // I32
      need(4, end);
      cursor.pos += 4;
      break;
    default:
      throw fail(`invalid wire type ${wireType}`);
  }
  if (cursor.pos > end) throw fail('truncated');
}

/** @param {number} end */
export function finish(end) {
  if (cursor.pos !== end) throw fail('truncated');
}

// ---- reading stored items ----

/**
 * Skips a field of an item that was checked whole, trusting its bytes: what a reader does with the fields it
 * does not want, most of the fields of an item.
 * @param {number} wireType @param {number} end
 */
export function pass(wireType, end) {
  switch (wireType) {
    case 0: // VARINT
      while (cursor.buf[cursor.pos++] >= 0x80);
      return;
    case 1: // I64
      cursor.pos += 8;
      return;
    case 2: {
      // LEN
      const length = varint32();
      cursor.pos += length;
      return;
    }
    case 5: // I32
      cursor.pos += 4;
      return;
    default:
      skipValue(wireType, end, 0);
  }
}

/**
 * A reader of one field of a checked item: the value of its last occurrence (later occurrences of a field win,
 * as in a full decode), or `none`.
 * @template T @param {number} tag @param {(end: number) => T} value @param {T} none @returns {(end: number) => T}
 */
export function lastOf(tag, value, none) {
  return (end) => {
    let v = none;
    while (cursor.pos < end) {
      const t = varint32();
      if (t === tag) v = value(end);
      else pass(t & 7, end);
    }
    return v;
  };
}

/**
 * Where the length prefix of the item that starts at `start` begins. Every byte of a varint but its last has
 * the high bit set, and the byte before the prefix ends the field's tag, so the prefix is found from its
 * end, however long the sender made it.
 * @param {Uint8Array} bytes @param {number} start
 */
export function placeOf(bytes, start) {
  let p = start - 1;
  while (p > 0 && bytes[p - 1] >= 0x80) p--;
  return p;
}

/** Where `placed` leaves the end of the item it found. */
let placedEnd = 0;

/**
 * The start of the item whose length prefix begins at `place`; its end goes to `placedEnd`. Reads the
 * length as varint32 does, the bits past 32 dropped.
 * @param {Uint8Array} bytes @param {number} place
 */
function placed(bytes, place) {
  let p = place;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[p++];
    if (shift < 28) length += (b & 0x7f) << shift;
    else if (shift === 28) length += (b & 0x0f) * 0x10000000;
    if (b < 0x80) break;
  }
  placedEnd = p + length;
  return p;
}

/**
 * Runs a reader over the item at `place` (placeOf) in a request's bytes.
 * @template T @param {Source} source @param {number} place @param {(end: number) => T} reader @returns {T}
 */
export function readItem(source, place, reader) {
  const buf = source.bytes;
  cursor.buf = buf;
  cursor.view = source.view;
  cursor.pos = placed(buf, place);
  try {
    return reader(placedEnd);
  } finally {
    cursor.buf = EMPTY_BUFFER;
  }
}
