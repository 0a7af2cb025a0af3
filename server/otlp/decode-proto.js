// Decodes OTLP protobuf straight from the wire into the canonical model (docs/internals.md).
// Generated decoders plus toObject build every object twice; building the kept objects once,
// with stable shapes, shared defaults and interned keys, is what makes ingestion fast and small.
import { DecodeError } from './errors.js';
import { canonicalMetric, LazyMetric, metricOf, storedMetric } from './metric.js';
import { EMPTY_ANY, EMPTY_ARRAY, DEFAULT_BUCKETS, DEFAULT_RESOURCE, DEFAULT_SCOPE, DEFAULT_STATUS, compareNanos } from './model.js';

const MAX_DEPTH = 64;

/**
 * Node's Buffer has native slicers for each string encoding; `toString(encoding, start, end)` reaches
 * them through an extra dispatch, measurable at millions of calls a second.
 * @typedef {Buffer & { utf8Slice(s: number, e: number): string, hexSlice(s: number, e: number): string,
 *   base64Slice(s: number, e: number): string, latin1Slice(s: number, e: number): string }} SlicingBuffer
 */

/** @type {SlicingBuffer} */
let buf = /** @type {SlicingBuffer} */ (Buffer.alloc(0));
let view = new DataView(buf.buffer, buf.byteOffset, 0);
let pos = 0;
/**
 * Off while an item is only checked, not built (see LazyItem): the same code then validates every byte
 * exactly as a full decode would, but creates no strings and keeps no objects.
 */
let building = true;
/** On while a span is checked: the store indexes spans by trace id, so the check keeps that one string. */
let keepTraceId = false;

/** @param {string} what */
function fail(what) {
  return new DecodeError(`invalid protobuf at byte ${pos}: ${what}`);
}

function varint32() {
  let b = buf[pos++];
  let v = b & 0x7f;
  if (b < 0x80) return v;
  b = buf[pos++];
  v |= (b & 0x7f) << 7;
  if (b < 0x80) return v;
  b = buf[pos++];
  v |= (b & 0x7f) << 14;
  if (b < 0x80) return v;
  b = buf[pos++];
  v |= (b & 0x7f) << 21;
  if (b < 0x80) return v;
  b = buf[pos++];
  v = (v | ((b & 0x0f) << 28)) >>> 0;
  if (b < 0x80) return v;
  // The upper half of a 64-bit varint does not fit a 32-bit field: protobuf truncates it.
  for (let i = 0; i < 5; i++) if (buf[pos++] < 0x80) return v;
  throw fail('varint longer than 10 bytes');
}

const digitScratch = /** @type {SlicingBuffer} */ (Buffer.allocUnsafe(24));

/** Exact decimal text of an unsigned 64-bit value given as two 32-bit halves, without BigInt. */
function u64String(lo, hi) {
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
    digit(b, 1e5), digit(b, 1e4), digit(b, 1e3), digit(b, 100), digit(b, 10), 48 + (b % 10),
    digit(a, 1e5), digit(a, 1e4), digit(a, 1e3), digit(a, 100), digit(a, 10), 48 + (a % 10),
    digit(rest, 1e6), digit(rest, 1e5), digit(rest, 1e4), digit(rest, 1e3), digit(rest, 100), digit(rest, 10), 48 + (rest % 10),
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
function varint64String(signed) {
  let lo = 0;
  let hi = 0;
  let b = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    b = buf[pos++];
    lo |= (b & 0x7f) << shift;
    if (b < 0x80) return building ? String(lo >>> 0) : '0';
  }
  b = buf[pos++];
  lo |= (b & 0x7f) << 28;
  hi = (b & 0x7f) >>> 4;
  if (b >= 0x80) {
    let done = false;
    for (let shift = 3; shift < 64; shift += 7) {
      b = buf[pos++];
      if (shift < 32) hi |= (b & 0x7f) << shift;
      if (b < 0x80) {
        done = true;
        break;
      }
    }
    if (!done) throw fail('varint longer than 10 bytes');
  }
  if (!building) return '0';
  return signed ? i64String(lo >>> 0, hi >>> 0) : u64String(lo >>> 0, hi >>> 0);
}

/** A varint32 at `p`, leaving `pos` where it was. @param {number} p */
function varint32At(p) {
  const was = pos;
  pos = p;
  const v = varint32();
  pos = was;
  return v;
}

/** @param {number} end */
function need(n, end) {
  if (pos + n > end) throw fail('truncated');
}

function u32le() {
  const v = (buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16) | (buf[pos + 3] << 24)) >>> 0;
  pos += 4;
  return v;
}

/** @param {number} end */
function fixed32(end) {
  need(4, end);
  return u32le();
}

/** @param {number} end @param {boolean} signed */
function fixed64String(end, signed) {
  need(8, end);
  if (!building) {
    pos += 8;
    return '0';
  }
  const lo = u32le();
  const hi = u32le();
  return signed ? i64String(lo, hi) : u64String(lo, hi);
}

/** @param {number} end */
function double(end) {
  need(8, end);
  if (!building) {
    pos += 8;
    return 0;
  }
  const v = view.getFloat64(pos, true);
  pos += 8;
  return v;
}

/** Reads a length prefix and returns where the delimited field ends. @param {number} end */
function delimited(end) {
  const len = varint32();
  const e = pos + len;
  if (e > end || pos > end) throw fail('length runs past the end of its message');
  return e;
}

/** @param {number} end */
function string(end) {
  const e = delimited(end);
  const s = e === pos || !building ? '' : buf.utf8Slice(pos, e);
  pos = e;
  return s;
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
 * Whether the `len` bytes at `start` are a table's bytes from `at` (a multiple of 4): compared four at a time,
 * a third of the cost of comparing them one by one.
 * @param {number} start @param {number} len @param {Uint8Array} bytes @param {Int32Array} words the same memory @param {number} at
 */
function sameBytes(start, len, bytes, words, at) {
  const wholeWords = len & ~3;
  const first = at >>> 2;
  let i = 0;
  while (i < wholeWords && view.getInt32(start + i, true) === words[first + (i >>> 2)]) i += 4;
  if (i < wholeWords) return false;
  while (i < len && bytes[at + i] === buf[start + i]) i++;
  return i === len;
}

/**
 * A string that repeats from item to item (attribute keys, span and metric names): served from a small table
 * of recent ones whose bytes are compared with the wire's four at a time, which costs less than Node's native
 * slice call (and a third of comparing character by character) and keeps one copy of each in memory.
 * @param {number} end
 */
function recurring(end) {
  const e = delimited(end);
  const len = e - pos;
  if (len === 0 || !building) {
    pos = e;
    return '';
  }
  if (len > MAX_RECENT_LENGTH) {
    const s = buf.utf8Slice(pos, e);
    pos = e;
    return s;
  }
  // A few bytes pick the slot (names that share a prefix differ near their end); the full compare decides.
  const b = buf;
  const start = pos;
  pos = e;
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

const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** @param {number} p */
const high = (p) => HEX[buf[p] >>> 4];
/** @param {number} p */
const low = (p) => HEX[buf[p] & 15];
/** @param {number} p */
const word = (p) => buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);

/** @param {number} p */
function hex8(p) {
  return String.fromCharCode(
    high(p), low(p), high(p + 1), low(p + 1), high(p + 2), low(p + 2), high(p + 3), low(p + 3),
    high(p + 4), low(p + 4), high(p + 5), low(p + 5), high(p + 6), low(p + 6), high(p + 7), low(p + 7),
  );
}

/** @param {number} p */
function hex16(p) {
  return String.fromCharCode(
    high(p), low(p), high(p + 1), low(p + 1), high(p + 2), low(p + 2), high(p + 3), low(p + 3),
    high(p + 4), low(p + 4), high(p + 5), low(p + 5), high(p + 6), low(p + 6), high(p + 7), low(p + 7),
    high(p + 8), low(p + 8), high(p + 9), low(p + 9), high(p + 10), low(p + 10), high(p + 11), low(p + 11),
    high(p + 12), low(p + 12), high(p + 13), low(p + 13), high(p + 14), low(p + 14), high(p + 15), low(p + 15),
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
  const w0 = word(p);
  const w1 = word(p + 4);
  const w2 = size === 16 ? word(p + 8) : 0;
  const w3 = size === 16 ? word(p + 12) : 0;
  const slot = (Math.imul(w0 ^ w1 ^ w2 ^ w3, 0x9e3779b1) >>> 22) & (ID_SLOTS - 1);
  const at = slot * 4;
  const known = idTexts[slot];
  if (known.length === size * 2 && idWords[at] === w0 && idWords[at + 1] === w1 && idWords[at + 2] === w2 && idWords[at + 3] === w3)
    return known;
  const text = size === 16 ? hex16(p) : hex8(p);
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
  const len = e - pos;
  if (len === 0) return '';
  if (len !== size) throw fail(`${what} must be ${size} bytes, got ${len}`);
  const s = building || (keepTraceId && size === 16) ? hexId(pos, size) : '';
  pos = e;
  return s;
}

const traceIdOf = (/** @type {number} */ end) => id(end, 16, 'trace id');
const spanIdOf = (/** @type {number} */ end) => id(end, 8, 'span id');

/** @param {number} end */
function base64(end) {
  const e = delimited(end);
  const s = e === pos || !building ? '' : buf.base64Slice(pos, e);
  pos = e;
  return s;
}

/**
 * Skips a field this decoder does not keep. A known field number with the wrong wire type is an error,
 * not something to skip: it means the sender's schema disagrees with ours.
 * @param {number} tag @param {number} end @param {number} known bit mask of field numbers 1..31 the message defines
 */
function skip(tag, end, known) {
  const field = tag >>> 3;
  if (field === 0) throw fail('field number 0');
  if (field < 32 && (known & (1 << field)) !== 0) throw fail(`field ${field} has unexpected wire type ${tag & 7}`);
  skipValue(tag & 7, end, 0);
}

/** @param {number} wireType @param {number} end @param {number} depth */
function skipValue(wireType, end, depth) {
  switch (wireType) {
    case 0:
      varint64String(false);
      break;
    case 1:
      need(8, end);
      pos += 8;
      break;
    case 2:
      pos = delimited(end);
      break;
    case 3: {
      if (depth > MAX_DEPTH) throw fail('groups nested too deep');
      for (;;) {
        if (pos >= end) throw fail('unterminated group');
        const t = varint32();
        if ((t & 7) === 4) break;
        skipValue(t & 7, end, depth + 1);
      }
      break;
    }
    case 5:
      need(4, end);
      pos += 4;
      break;
    default:
      throw fail(`invalid wire type ${wireType}`);
  }
  if (pos > end) throw fail('truncated');
}

/** @param {number} end */
function finish(end) {
  if (pos !== end) throw fail('truncated');
}

/** @param {number[]} fields */
function mask(...fields) {
  let m = 0;
  for (const f of fields) m |= 1 << f;
  return m;
}

// ---- common ----

const ANY_FIELDS = mask(1, 2, 3, 4, 5, 6, 7);
/** @param {number} end @param {number} depth @returns {any} */
function anyValue(end, depth) {
  if (depth > MAX_DEPTH) throw fail('values nested too deep');
  let value = EMPTY_ANY;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10: {
        const text = string(end);
        if (building) value = new StringValue(text);
        break;
      }
      case 16: {
        const b = varint32() !== 0;
        if (building) value = { boolValue: b };
        break;
      }
      case 24: {
        const n = varint64String(true);
        if (building) value = { intValue: n };
        break;
      }
      case 33: {
        const d = double(end);
        if (building) value = { doubleValue: d };
        break;
      }
      case 42: {
        const values = valueList(delimited(end), depth + 1, anyValue);
        if (building) value = { arrayValue: { values } };
        break;
      }
      case 50: {
        const values = valueList(delimited(end), depth + 1, keyValue);
        if (building) value = { kvlistValue: { values } };
        break;
      }
      case 58: {
        const b = base64(end);
        if (building) value = { bytesValue: b };
        break;
      }
      default:
        skip(tag, end, ANY_FIELDS);
    }
  }
  finish(end);
  return value;
}

/**
 * The values of an ArrayValue or a KeyValueList: both are `repeated values = 1`.
 * @param {number} end @param {number} depth @param {(end: number, depth: number) => any} decode
 */
function valueList(end, depth, decode) {
  const values = building ? [] : EMPTY_ARRAY;
  while (pos < end) {
    const t = varint32();
    if (t !== 10) skip(t, end, 2);
    else {
      const v = decode(delimited(end), depth);
      if (building) values.push(v);
    }
  }
  finish(end);
  return values;
}

const KV_SLOTS = 4096;
const KV_MAX_BYTES = 160;
const kvBytes = new Uint8Array(KV_SLOTS * KV_MAX_BYTES);
const kvWords = new Int32Array(kvBytes.buffer);
const kvLengths = new Int32Array(KV_SLOTS);
const kvSeen = new Int32Array(KV_SLOTS);
/** @type {any[]} */
const kvShared = new Array(KV_SLOTS).fill(null);

/**
 * Most attributes repeat byte for byte (a method, a route, a host): such a key-value pair is decoded once
 * and the frozen result shared. A pair is only kept on its second sighting, so unique values (ids,
 * timestamps) cannot push the recurring ones out.
 * @param {number} end @param {number} depth
 */
function keyValue(end, depth) {
  const len = end - pos;
  if (!building) {
    if (isPlainStringPair(pos, end)) {
      pos = end;
      return EMPTY_ANY;
    }
    return decodeKeyValue(end, depth);
  }
  if (len > KV_MAX_BYTES || len < 4) return decodeKeyValue(end, depth);
  const start = pos;
  const h = Math.imul(len ^ (buf[start + 2] << 8) ^ (buf[end - 1] << 16) ^ (buf[end - 2] << 24) ^ buf[start + (len >>> 1)] ^ (buf[end - 3] << 4), 0x9e3779b1);
  const slot = (h >>> 20) & (KV_SLOTS - 1);
  if (kvLengths[slot] === len && sameBytes(start, len, kvBytes, kvWords, slot * KV_MAX_BYTES)) {
    pos = end;
    return kvShared[slot];
  }
  const kv = decodeKeyValue(end, depth);
  if (kvSeen[slot] !== h) kvSeen[slot] = h;
  else if (kv.value.arrayValue === undefined && kv.value.kvlistValue === undefined) {
    kvBytes.set(buf.subarray(start, end), slot * KV_MAX_BYTES);
    kvLengths[slot] = len;
    Object.freeze(kv.value);
    kvShared[slot] = Object.freeze(kv);
  }
  return kv;
}

/**
 * Whether [p, end) is exactly `key` then `value { string_value }`, each length in one byte: the usual
 * encoding of a string attribute, valid as a whole once these few bytes agree, so a check can stop here.
 * @param {number} p @param {number} end
 */
function isPlainStringPair(p, end) {
  if (buf[p] !== 10) return false;
  const keyLength = buf[p + 1];
  const v = p + 2 + keyLength;
  if (keyLength >= 0x80 || v + 4 > end || buf[v] !== 18) return false;
  const valueLength = buf[v + 1];
  const textLength = buf[v + 3];
  return valueLength < 0x80 && buf[v + 2] === 10 && textLength < 0x80 && valueLength === textLength + 2 && v + 2 + valueLength === end;
}

// The most numerous objects of a span are made by constructors (and lists by copying ONE) rather than
// literals: V8 may decide, from the first requests of a cold process (when a whole request outlives the
// small young generation), to allocate a literal's objects straight into the old generation
// ("pretenuring"), after which every transient decode pays for full collections. Measured: with literals,
// most processes decoded spans at about two thirds of the speed of the others (bench/decode.js). The
// prototype stays Object.prototype, so the objects are plain ones.

/** @constructor @param {string} stringValue */
function StringValue(stringValue) {
  this.stringValue = stringValue;
}
StringValue.prototype = Object.prototype;

/** @constructor @param {string} key @param {any} value */
function KeyValue(key, value) {
  this.key = key;
  this.value = value;
}
KeyValue.prototype = Object.prototype;

/** @constructor @param {string} message @param {number} code */
function Status(message, code) {
  this.message = message;
  this.code = code;
}
Status.prototype = Object.prototype;

const KV_FIELDS = mask(1, 2);
/** @param {number} end @param {number} depth @returns {any} */
function decodeKeyValue(end, depth) {
  let k = '';
  let value = EMPTY_ANY;
  while (pos < end) {
    const tag = varint32();
    if (tag === 10) k = recurring(end);
    else if (tag === 18) value = anyValue(delimited(end), depth);
    else skip(tag, end, KV_FIELDS);
  }
  finish(end);
  return building ? new KeyValue(k, value) : EMPTY_ANY;
}

/** Lists of one are copies of this, not literals, for the reason given above StringValue. */
const ONE = [null];

/**
 * Appends to a repeated field, replacing the shared empty array on first use. A copy of ONE costs a tenth
 * of `Array.of(item)`, which takes a slow path for its generality.
 * @param {any[]} list @param {any} item
 */
function push(list, item) {
  if (!building) return list;
  if (list === EMPTY_ARRAY) {
    const one = ONE.slice();
    one[0] = item;
    return one;
  }
  list.push(item);
  return list;
}

/** @param {number} end */
function stringList(list, end) {
  return push(list, string(end));
}

const ENTITY_FIELDS = mask(1, 2, 3, 4);
/** @param {number} end */
function entityRef(end) {
  let schemaUrl = '';
  let type = '';
  let idKeys = EMPTY_ARRAY;
  let descriptionKeys = EMPTY_ARRAY;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        schemaUrl = string(end);
        break;
      case 18:
        type = string(end);
        break;
      case 26:
        idKeys = stringList(idKeys, end);
        break;
      case 34:
        descriptionKeys = stringList(descriptionKeys, end);
        break;
      default:
        skip(tag, end, ENTITY_FIELDS);
    }
  }
  finish(end);
  return { schemaUrl, type, idKeys, descriptionKeys };
}

/**
 * Resources and scopes repeat from request to request: each distinct encoding is decoded once, and found again
 * by comparing bytes, which costs less than making a string of them to look up.
 */
const SHARED_SLOTS = 1024;
/** @type {any[]} */
const sharedValues = new Array(SHARED_SLOTS).fill(null);
/** @type {Uint8Array[]} each slot's encoding, padded to whole words */
const sharedBytes = new Array(SHARED_SLOTS).fill(new Uint8Array(0));
/** @type {Int32Array[]} */
const sharedWords = new Array(SHARED_SLOTS).fill(new Int32Array(0));
const sharedLengths = new Int32Array(SHARED_SLOTS).fill(-1);
const sharedKinds = new Uint8Array(SHARED_SLOTS);

/**
 * @param {number} end @param {(end: number) => any} decode
 * @param {number} kind which decoder's: encodings of two messages may be alike
 */
function sharedMessage(end, decode, kind) {
  const start = pos;
  const len = end - start;
  // Every byte picks the slot: resources of one sender (instances of a service) may differ in one byte anywhere,
  // and two that took turns in a slot would each be decoded, and kept, anew for every request.
  let h = len ^ kind;
  let i = 0;
  for (; i + 4 <= len; i += 4) h = Math.imul(h ^ view.getInt32(start + i, true), 0x9e3779b1);
  for (; i < len; i++) h = Math.imul(h ^ buf[start + i], 0x9e3779b1);
  const slot = (h ^ (h >>> 16)) & (SHARED_SLOTS - 1);
  if (sharedLengths[slot] === len && sharedKinds[slot] === kind && sameBytes(start, len, sharedBytes[slot], sharedWords[slot], 0)) {
    pos = end;
    return sharedValues[slot];
  }
  const value = Object.freeze(decode(end));
  const bytes = new Uint8Array((len + 3) & ~3);
  bytes.set(buf.subarray(start, end));
  sharedBytes[slot] = bytes;
  sharedWords[slot] = new Int32Array(bytes.buffer);
  sharedLengths[slot] = len;
  sharedKinds[slot] = kind;
  sharedValues[slot] = value;
  return value;
}

const RESOURCE_FIELDS = mask(1, 2, 3);
/** @param {number} end */
function resource(end) {
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  let entityRefs = EMPTY_ARRAY;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 16:
        droppedAttributesCount = varint32();
        break;
      case 26:
        entityRefs = push(entityRefs, entityRef(delimited(end)));
        break;
      default:
        skip(tag, end, RESOURCE_FIELDS);
    }
  }
  finish(end);
  return { attributes, droppedAttributesCount, entityRefs };
}

const SCOPE_FIELDS = mask(1, 2, 3, 4);
/** @param {number} end */
function scope(end) {
  let name = '';
  let version = '';
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        name = string(end);
        break;
      case 18:
        version = string(end);
        break;
      case 26:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 32:
        droppedAttributesCount = varint32();
        break;
      default:
        skip(tag, end, SCOPE_FIELDS);
    }
  }
  finish(end);
  return { name, version, attributes, droppedAttributesCount };
}

/**
 * The envelope shared by the three signals: Resource{X}(resource=1, scope{X}=2, schema_url=3) and
 * Scope{X}(scope=1, items=2, schema_url=3).
 * @param {number} end @param {string} scopeField @param {string} itemField @param {(end: number) => any} item
 */
function resourceGroup(end, scopeField, itemField, item) {
  let res = DEFAULT_RESOURCE;
  let scopes = EMPTY_ARRAY;
  let schemaUrl = '';
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        res = sharedMessage(delimited(end), resource, 1);
        break;
      case 18:
        scopes = push(scopes, scopeGroup(delimited(end), itemField, item));
        break;
      case 26:
        schemaUrl = string(end);
        break;
      default:
        skip(tag, end, RESOURCE_FIELDS);
    }
  }
  finish(end);
  return { resource: res, [scopeField]: scopes, schemaUrl };
}

/** @param {number} end @param {string} itemField @param {(end: number) => any} item */
function scopeGroup(end, itemField, item) {
  let sc = DEFAULT_SCOPE;
  let items = EMPTY_ARRAY;
  let schemaUrl = '';
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        sc = sharedMessage(delimited(end), scope, 2);
        break;
      case 18:
        items = push(items, item(delimited(end)));
        break;
      case 26:
        schemaUrl = string(end);
        break;
      default:
        skip(tag, end, RESOURCE_FIELDS);
    }
  }
  finish(end);
  return { scope: sc, [itemField]: items, schemaUrl };
}

// ---- traces ----

const EVENT_FIELDS = mask(1, 2, 3, 4);
/** @param {number} end */
function spanEvent(end) {
  let timeUnixNano = '0';
  let name = '';
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 9:
        timeUnixNano = fixed64String(end, false);
        break;
      case 18:
        name = string(end);
        break;
      case 26:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 32:
        droppedAttributesCount = varint32();
        break;
      default:
        skip(tag, end, EVENT_FIELDS);
    }
  }
  finish(end);
  return { timeUnixNano, name, attributes, droppedAttributesCount };
}

const LINK_FIELDS = mask(1, 2, 3, 4, 5, 6);
/** @param {number} end */
function spanLink(end) {
  let traceId = '';
  let spanId = '';
  let traceState = '';
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  let flags = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        traceId = traceIdOf(end);
        break;
      case 18:
        spanId = spanIdOf(end);
        break;
      case 26:
        traceState = string(end);
        break;
      case 34:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 40:
        droppedAttributesCount = varint32();
        break;
      case 53:
        flags = fixed32(end);
        break;
      default:
        skip(tag, end, LINK_FIELDS);
    }
  }
  finish(end);
  return { traceId, spanId, traceState, attributes, droppedAttributesCount, flags };
}

const STATUS_FIELDS = mask(2, 3);
/** @param {number} end */
function spanStatus(end) {
  let message = '';
  let code = 0;
  while (pos < end) {
    const tag = varint32();
    if (tag === 18) message = string(end);
    else if (tag === 24) code = varint32() | 0;
    else skip(tag, end, STATUS_FIELDS);
  }
  finish(end);
  return building ? new Status(message, code) : DEFAULT_STATUS;
}

/** @constructor A span with every field at its default; the decoder fills it in. */
function Span() {
  this.traceId = '';
  this.spanId = '';
  this.traceState = '';
  this.parentSpanId = '';
  this.flags = 0;
  this.name = '';
  this.kind = 0;
  this.startTimeUnixNano = '0';
  this.endTimeUnixNano = '0';
  /** @type {any[]} */
  this.attributes = EMPTY_ARRAY;
  this.droppedAttributesCount = 0;
  /** @type {any[]} */
  this.events = EMPTY_ARRAY;
  this.droppedEventsCount = 0;
  /** @type {any[]} */
  this.links = EMPTY_ARRAY;
  this.droppedLinksCount = 0;
  /** @type {{ message: string, code: number }} */
  this.status = DEFAULT_STATUS;
}
Span.prototype = Object.prototype;

/** Where checking a span writes its fields: only the trace id is read back. */
const checkedFields = new Span();

/**
 * A span's attributes are gathered here and copied out once at their final size: a list grown one push at
 * a time is reallocated on the way and keeps unused capacity for as long as it is stored.
 * @type {any[]}
 */
const spanAttributes = [];

const SPAN_FIELDS = mask(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
/** @param {number} end */
function span(end) {
  const start = pos;
  let s = checkedFields;
  if (building) s = new Span();
  else s.traceId = '';
  let attributeCount = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        s.traceId = traceIdOf(end);
        break;
      case 18:
        s.spanId = spanIdOf(end);
        break;
      case 26:
        s.traceState = string(end);
        break;
      case 34:
        s.parentSpanId = spanIdOf(end);
        break;
      case 42:
        s.name = recurring(end);
        break;
      case 48:
        s.kind = varint32() | 0;
        break;
      case 57:
        s.startTimeUnixNano = fixed64String(end, false);
        break;
      case 65:
        s.endTimeUnixNano = fixed64String(end, false);
        break;
      case 74: {
        const kv = keyValue(delimited(end), 0);
        if (building) spanAttributes[attributeCount++] = kv;
        break;
      }
      case 80:
        s.droppedAttributesCount = varint32();
        break;
      case 90:
        s.events = push(s.events, spanEvent(delimited(end)));
        break;
      case 96:
        s.droppedEventsCount = varint32();
        break;
      case 106:
        s.links = push(s.links, spanLink(delimited(end)));
        break;
      case 112:
        s.droppedLinksCount = varint32();
        break;
      case 122:
        s.status = spanStatus(delimited(end));
        break;
      case 133:
        s.flags = fixed32(end);
        break;
      default:
        skip(tag, end, SPAN_FIELDS);
    }
  }
  finish(end);
  if (!building) return new LazySpan(unstored, placeOf(buf, start), s.traceId);
  if (attributeCount > 0) s.attributes = spanAttributes.slice(0, attributeCount);
  if (spanAttributes.length > 256) spanAttributes.length = 0;
  return s;
}

// ---- metrics ----

/** Repeated fixed64 arrives packed or, from older senders, one field per value. @param {string[]} list @param {number} tag @param {number} end */
function fixed64List(list, tag, end) {
  if ((tag & 7) === 1) return push(list, fixed64String(end, false));
  const e = delimited(end);
  if ((e - pos) % 8 !== 0) throw fail('packed fixed64 length is not a multiple of 8');
  if (!building) {
    pos = e;
    return list;
  }
  const out = list === EMPTY_ARRAY ? [] : list;
  while (pos < e) out.push(fixed64String(e, false));
  return out;
}

/** @param {number[]} list @param {number} tag @param {number} end */
function doubleList(list, tag, end) {
  if ((tag & 7) === 1) return push(list, double(end));
  const e = delimited(end);
  if ((e - pos) % 8 !== 0) throw fail('packed double length is not a multiple of 8');
  if (!building) {
    pos = e;
    return list;
  }
  const out = list === EMPTY_ARRAY ? [] : list;
  while (pos < e) out.push(double(e));
  return out;
}

/** @param {string[]} list @param {number} tag @param {number} end */
function uint64List(list, tag, end) {
  if ((tag & 7) === 0) return push(list, varint64String(false));
  const e = delimited(end);
  const out = building && list === EMPTY_ARRAY ? [] : list;
  while (pos < e) {
    const v = varint64String(false);
    if (building) out.push(v);
  }
  if (pos !== e) throw fail('truncated packed varint');
  return out;
}

function zigzag32() {
  const v = varint32();
  return (v >>> 1) ^ -(v & 1);
}

const EXEMPLAR_FIELDS = mask(2, 3, 4, 5, 6, 7);
/** @param {number} end */
function exemplar(end) {
  let filteredAttributes = EMPTY_ARRAY;
  let timeUnixNano = '0';
  let spanId = '';
  let traceId = '';
  let valueKind = 0;
  /** @type {number|string} */
  let value = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 58:
        filteredAttributes = push(filteredAttributes, keyValue(delimited(end), 0));
        break;
      case 17:
        timeUnixNano = fixed64String(end, false);
        break;
      case 25:
        valueKind = 1;
        value = double(end);
        break;
      case 49:
        valueKind = 2;
        value = fixed64String(end, true);
        break;
      case 34:
        spanId = spanIdOf(end);
        break;
      case 42:
        traceId = traceIdOf(end);
        break;
      default:
        skip(tag, end, EXEMPLAR_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  /** @type {any} */
  const out = { filteredAttributes, timeUnixNano, spanId, traceId };
  if (valueKind === 1) out.asDouble = value;
  else if (valueKind === 2) out.asInt = value;
  return out;
}

const NUMBER_POINT_FIELDS = mask(2, 3, 4, 5, 6, 7, 8);
/** @param {number} end */
function numberPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let exemplars = EMPTY_ARRAY;
  let flags = 0;
  let valueKind = 0;
  /** @type {number|string} */
  let value = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 58:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 17:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case 25:
        timeUnixNano = fixed64String(end, false);
        break;
      case 33:
        valueKind = 1;
        value = double(end);
        break;
      case 49:
        valueKind = 2;
        value = fixed64String(end, true);
        break;
      case 42:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case 64:
        flags = varint32();
        break;
      default:
        skip(tag, end, NUMBER_POINT_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  /** @type {any} */
  const out = { attributes, startTimeUnixNano, timeUnixNano, exemplars, flags };
  if (valueKind === 1) out.asDouble = value;
  else if (valueKind === 2) out.asInt = value;
  return out;
}

/** proto3 `optional` doubles: present in the model only when present on the wire. */
/** @param {any} out @param {number} sum @param {number} min @param {number} max @param {number} present bit 1 sum, 2 min, 4 max */
function optionalStats(out, sum, min, max, present) {
  if (present & 1) out.sum = sum;
  if (present & 2) out.min = min;
  if (present & 4) out.max = max;
  return out;
}

const HISTOGRAM_POINT_FIELDS = mask(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
/** @param {number} end */
function histogramPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let bucketCounts = EMPTY_ARRAY;
  let explicitBounds = EMPTY_ARRAY;
  let exemplars = EMPTY_ARRAY;
  let flags = 0;
  let sum = 0;
  let min = 0;
  let max = 0;
  let present = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 74:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 17:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case 25:
        timeUnixNano = fixed64String(end, false);
        break;
      case 33:
        count = fixed64String(end, false);
        break;
      case 41:
        sum = double(end);
        present |= 1;
        break;
      case 49:
      case 50:
        bucketCounts = fixed64List(bucketCounts, tag, end);
        break;
      case 57:
      case 58:
        explicitBounds = doubleList(explicitBounds, tag, end);
        break;
      case 66:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case 80:
        flags = varint32();
        break;
      case 89:
        min = double(end);
        present |= 2;
        break;
      case 97:
        max = double(end);
        present |= 4;
        break;
      default:
        skip(tag, end, HISTOGRAM_POINT_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  const out = { attributes, startTimeUnixNano, timeUnixNano, count, bucketCounts, explicitBounds, exemplars, flags };
  return optionalStats(out, sum, min, max, present);
}

const BUCKETS_FIELDS = mask(1, 2);
/** @param {number} end */
function buckets(end) {
  let offset = 0;
  let bucketCounts = EMPTY_ARRAY;
  while (pos < end) {
    const tag = varint32();
    if (tag === 8) offset = zigzag32();
    else if (tag === 16 || tag === 18) bucketCounts = uint64List(bucketCounts, tag, end);
    else skip(tag, end, BUCKETS_FIELDS);
  }
  finish(end);
  if (!building) return DEFAULT_BUCKETS;
  return { offset, bucketCounts };
}

const EXP_POINT_FIELDS = mask(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
/** @param {number} end */
function exponentialPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let scale = 0;
  let zeroCount = '0';
  let positive = DEFAULT_BUCKETS;
  let negative = DEFAULT_BUCKETS;
  let flags = 0;
  let exemplars = EMPTY_ARRAY;
  let zeroThreshold = 0;
  let sum = 0;
  let min = 0;
  let max = 0;
  let present = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 17:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case 25:
        timeUnixNano = fixed64String(end, false);
        break;
      case 33:
        count = fixed64String(end, false);
        break;
      case 41:
        sum = double(end);
        present |= 1;
        break;
      case 48:
        scale = zigzag32();
        break;
      case 57:
        zeroCount = fixed64String(end, false);
        break;
      case 66:
        positive = buckets(delimited(end));
        break;
      case 74:
        negative = buckets(delimited(end));
        break;
      case 80:
        flags = varint32();
        break;
      case 90:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case 97:
        min = double(end);
        present |= 2;
        break;
      case 105:
        max = double(end);
        present |= 4;
        break;
      case 113:
        zeroThreshold = double(end);
        break;
      default:
        skip(tag, end, EXP_POINT_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  const out = {
    attributes,
    startTimeUnixNano,
    timeUnixNano,
    count,
    scale,
    zeroCount,
    positive,
    negative,
    flags,
    exemplars,
    zeroThreshold,
  };
  return optionalStats(out, sum, min, max, present);
}

const QUANTILE_FIELDS = mask(1, 2);
/** @param {number} end */
function quantile(end) {
  let q = 0;
  let value = 0;
  while (pos < end) {
    const tag = varint32();
    if (tag === 9) q = double(end);
    else if (tag === 17) value = double(end);
    else skip(tag, end, QUANTILE_FIELDS);
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  return { quantile: q, value };
}

const SUMMARY_POINT_FIELDS = mask(2, 3, 4, 5, 6, 7, 8);
/** @param {number} end */
function summaryPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let sum = 0;
  let quantileValues = EMPTY_ARRAY;
  let flags = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 58:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 17:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case 25:
        timeUnixNano = fixed64String(end, false);
        break;
      case 33:
        count = fixed64String(end, false);
        break;
      case 41:
        sum = double(end);
        break;
      case 50:
        quantileValues = push(quantileValues, quantile(delimited(end)));
        break;
      case 64:
        flags = varint32();
        break;
      default:
        skip(tag, end, SUMMARY_POINT_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  return { attributes, startTimeUnixNano, timeUnixNano, count, sum, quantileValues, flags };
}

/**
 * The five types of metric data: where each sits in a Metric, its data points' decoder, how many of the
 * shared data fields it has (see metricData) and the tag of a point's attributes.
 * @typedef {{ tag: number, key: string, decode: (end: number) => any, fields: number, attributesTag: number }} MetricType
 */
const METRIC_TYPE_LIST = [
  { tag: 42, key: 'gauge', decode: numberPoint, fields: 1, attributesTag: 58 },
  { tag: 58, key: 'sum', decode: numberPoint, fields: 3, attributesTag: 58 },
  { tag: 74, key: 'histogram', decode: histogramPoint, fields: 2, attributesTag: 74 },
  { tag: 82, key: 'exponentialHistogram', decode: exponentialPoint, fields: 2, attributesTag: 10 },
  { tag: 90, key: 'summary', decode: summaryPoint, fields: 1, attributesTag: 58 },
];
/**
 * @type {MetricType[]} by the tag of the Metric field: an array, since a lookup in an object keyed by these numbers
 * was the costliest line of decoding a metric in a profile of metrics over gRPC.
 */
const METRIC_TYPES = [];
for (const type of METRIC_TYPE_LIST) METRIC_TYPES[type.tag] = type;
/** @type {Record<string, MetricType>} by the model's field name */
const METRIC_TYPES_BY_KEY = Object.fromEntries(METRIC_TYPE_LIST.map((t) => [t.key, t]));

/** On while a metrics request is decoded lazily: its metrics become LazyMetrics, their points only checked. */
let lazyPoints = false;

/** The fields of the last metric data metricData read, beside its points. */
let dataTemporality = 0;
let dataMonotonic = false;

const DATA_FIELDS = mask(1, 2, 3);
/**
 * Gauge, Sum, Histogram, ExponentialHistogram and Summary share one layout:
 * data_points=1, aggregation_temporality=2, is_monotonic=3 (each type uses a prefix of it).
 * @param {number} end @param {MetricType} type @returns {any[]} the data points
 */
function metricData(end, type) {
  const fields = type.fields;
  let dataPoints = EMPTY_ARRAY;
  let aggregationTemporality = 0;
  let isMonotonic = false;
  while (pos < end) {
    const tag = varint32();
    if (tag === 10) dataPoints = push(dataPoints, lazyPoints ? checkedPoint(delimited(end), type) : type.decode(delimited(end)));
    else if (tag === 16 && fields >= 2) aggregationTemporality = varint32() | 0;
    else if (tag === 24 && fields >= 3) isMonotonic = varint32() !== 0;
    else skip(tag, end, DATA_FIELDS & ((1 << (fields + 1)) - 1));
  }
  finish(end);
  dataTemporality = aggregationTemporality;
  dataMonotonic = isMonotonic;
  return dataPoints;
}

const METRIC_FIELDS = mask(1, 2, 3, 5, 7, 9, 10, 11, 12);
/**
 * A canonical Metric, or decoding lazily a LazyMetric: the metric's stored form, found by its fields without
 * building it, and its checked points.
 * @param {number} end
 */
function metric(end) {
  let name = '';
  let description = '';
  let unit = '';
  let metadata = EMPTY_ARRAY;
  /** @type {MetricType|null} */
  let type = null;
  let dataPoints = EMPTY_ARRAY;
  let aggregationTemporality = 0;
  let isMonotonic = false;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 10:
        name = recurring(end);
        break;
      case 18:
        description = recurring(end);
        break;
      case 26:
        unit = recurring(end);
        break;
      case 42:
      case 58:
      case 74:
      case 82:
      case 90:
        type = METRIC_TYPES[tag];
        dataPoints = metricData(delimited(end), type);
        aggregationTemporality = dataTemporality;
        isMonotonic = dataMonotonic;
        break;
      case 98:
        metadata = push(metadata, keyValue(delimited(end), 0));
        break;
      default:
        skip(tag, end, METRIC_FIELDS);
    }
  }
  finish(end);
  if (type === null) return { name, description, unit, metadata };
  const key = /** @type {import('./metric.js').MetricDataField} */ (type.key);
  if (lazyPoints) return new LazyMetric(storedMetric(name, description, unit, metadata, key, aggregationTemporality, isMonotonic), dataPoints);
  return canonicalMetric(name, description, unit, metadata, key, aggregationTemporality, isMonotonic, dataPoints);
}

// ---- logs ----

const LOG_FIELDS = mask(1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12);
/** @param {number} end */
function logRecord(end) {
  let timeUnixNano = '0';
  let observedTimeUnixNano = '0';
  let severityNumber = 0;
  let severityText = '';
  let body = EMPTY_ANY;
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  let flags = 0;
  let traceId = '';
  let spanId = '';
  let eventName = '';
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 9:
        timeUnixNano = fixed64String(end, false);
        break;
      case 89:
        observedTimeUnixNano = fixed64String(end, false);
        break;
      case 16:
        severityNumber = varint32() | 0;
        break;
      case 26:
        severityText = string(end);
        break;
      case 42:
        body = anyValue(delimited(end), 0);
        break;
      case 50:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case 56:
        droppedAttributesCount = varint32();
        break;
      case 69:
        flags = fixed32(end);
        break;
      case 74:
        traceId = traceIdOf(end);
        break;
      case 82:
        spanId = spanIdOf(end);
        break;
      case 98:
        eventName = string(end);
        break;
      default:
        skip(tag, end, LOG_FIELDS);
    }
  }
  finish(end);
  if (!building) return EMPTY_ANY;
  return {
    timeUnixNano,
    observedTimeUnixNano,
    severityNumber,
    severityText,
    body,
    attributes,
    droppedAttributesCount,
    flags,
    traceId,
    spanId,
    eventName,
  };
}

// ---- lazy items ----

/** @typedef {{ bytes: SlicingBuffer, view: DataView }} Source */

/**
 * What a lazy item's class knows about its message: the full decoder, and the tag of its attributes.
 * @typedef {{ decode: (end: number) => any, attributesTag: number }} ItemKind
 */

/** The request being decoded lazily, created when its first item is checked. @type {Source|null} */
let source = null;
/** The context of its items until the store gives them theirs. @type {any} */
let unstored = null;

/** Items built since the current macrotask began; their memos are dropped when it ends. @type {LazyItem[]} */
let built = [];

function forgetBuilt() {
  for (const lazy of built) lazy.built = null;
  built = [];
}

/**
 * A span, log record or data point checked at ingest but built only when something reads it: it knows its
 * request's bytes and its place in them. Reading a stored item is rare next to receiving one, and most of a
 * full decode is creating strings, so ingestion costs a fraction of a decode and a stored item little more
 * than its encoding. The check ran the decoder itself over these bytes, so building cannot fail.
 */
export class LazyItem {
  /**
   * @param {{ batch: { source: Source } }} ctx what the item shares with the others of its request: until the
   *   store gives it its entry context (the item is its own store entry), one that holds just the request's bytes
   * @param {number} place where the item's length prefix begins (placeOf): with the request's bytes, all it
   *   takes to find the item, and all the store keeps of log records and data points
   */
  constructor(ctx, place) {
    /** @type {any} */
    this.ctx = ctx;
    this.place = place;
    /** @type {any} the built item, kept until the current macrotask ends so repeated reads build once */
    this.built = null;
    this.seq = 0;
  }

  /** @returns {Source} the request's bytes */
  get source() {
    return this.ctx.batch.source;
  }

  /** @returns {ItemKind} */
  get kind() {
    throw new TypeError('a LazyItem is a span, a log record or a data point');
  }

  /** The store entry's item. @returns {any} */
  get item() {
    return this.build();
  }

  /** @returns {any} the canonical item, equal to what decodeProto builds */
  build() {
    if (this.built !== null) return this.built;
    this.built = this.read(this.kind.decode);
    if (built.length === 0) setImmediate(forgetBuilt);
    built.push(this);
    return this.built;
  }

  // Queries filter by a field or two: reading just those from the bytes costs a small part of a build.
  // Later occurrences of a field win, as in a full decode.

  /**
   * The value of the first attribute with this key, as the built item's `attributes` would give it.
   * @param {string} key @returns {any} an AnyValue, or undefined
   */
  attribute(key) {
    if (this.built !== null) return attributeIn(this.built.attributes, key);
    // A query asks every stored item for the same key: look at the key once.
    if (key !== wantedKey) {
      wantedKey = key;
      wantedKeyIsAscii = /^[\x00-\x7f]*$/.test(key);
    }
    wantedTag = this.kind.attributesTag;
    return this.read(attributeValueIn);
  }

  /** Runs a reader over this item's bytes. @template T @param {(end: number) => T} reader @returns {T} */
  read(reader) {
    const source = this.ctx.batch.source;
    buf = source.bytes;
    view = source.view;
    pos = placed(buf, this.place);
    try {
      return reader(placedEnd);
    } finally {
      buf = /** @type {SlicingBuffer} */ (EMPTY_BUFFER);
    }
  }
}

/**
 * Where the length prefix of the item that starts at `start` begins. Every byte of a varint but its last has
 * the high bit set, and the byte before the prefix ends the field's tag, so the prefix is found from its
 * end, however long the sender made it.
 * @param {Uint8Array} bytes @param {number} start
 */
function placeOf(bytes, start) {
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

/** @type {ItemKind} */
const SPAN_KIND = { decode: span, attributesTag: 74 };

/** A span checked at ingest and built when read; the store keeps it as the span's entry. */
export class LazySpan extends LazyItem {
  /** @param {{ batch: { source: Source } }} ctx @param {number} place @param {string} traceId */
  constructor(ctx, place, traceId) {
    super(ctx, place);
    this.traceId = traceId;
    /** @type {SpanOutline|null} read once, when a query first asks: every query of a list view reads it */
    this.outlined = null;
    /** @type {any} the trace index's list this span is in */
    this.trace = null;
  }

  get kind() {
    return SPAN_KIND;
  }

  /** @returns {SpanOutline} */
  outline() {
    return (this.outlined ??= this.built !== null ? outlineOf(this.built) : this.read(outlineIn));
  }

  /** @returns {string} */
  spanId() {
    return this.built !== null ? this.built.spanId : this.read(spanSpanIdIn);
  }
}

/**
 * Readers of an item's time: as text, as two halves (rawHi, rawLo), and from the built item.
 * @typedef {{ text: (end: number) => string, raw: (end: number) => void, of: (item: any) => string }} ItemTimes
 */

/** A log record or a data point: items whose time queries filter and sort on. */
class LazyTimedItem extends LazyItem {
  /** @returns {ItemTimes} */
  get times() {
    throw new TypeError('a LazyTimedItem is a log record or a data point');
  }

  /** The item's time (a log record's observed time when it has none). @returns {string} */
  time() {
    return this.built !== null ? this.times.of(this.built) : this.read(this.times.text);
  }

  /** How `time()` compares with a bound, -1, 0 or 1, without making its text. @param {NanosBound} bound */
  timeOrder(bound) {
    if (this.built !== null) return Math.sign(compareNanos(this.time(), bound.text));
    this.read(this.times.raw);
    if (rawHi !== bound.hi) return rawHi < bound.hi ? -1 : 1;
    return rawLo < bound.lo ? -1 : rawLo > bound.lo ? 1 : 0;
  }

  /** `Number(time())` without making its text: a sort key. */
  timeNumber() {
    if (this.built !== null) return Number(this.time());
    this.read(this.times.raw);
    return rawHi * 4294967296 + rawLo;
  }
}

/** @type {ItemKind} */
const LOG_KIND = { decode: logRecord, attributesTag: 50 };

/**
 * A log record checked at ingest and built when read. The store keeps only its context and place, and makes
 * one of these again whenever the record is read (`LazyLogRecord.placed`).
 */
export class LazyLogRecord extends LazyTimedItem {
  /** @param {any} ctx a store entry's context (its `batch` has the request's `source`) @param {number} place @param {number} seq */
  static placed(ctx, place, seq) {
    const record = new LazyLogRecord(ctx, place);
    record.seq = seq;
    return record;
  }

  get kind() {
    return LOG_KIND;
  }

  /** @returns {string} */
  get traceId() {
    return this.built !== null ? this.built.traceId : this.read(logTraceIdIn);
  }

  /** @returns {string} */
  spanId() {
    return this.built !== null ? this.built.spanId : this.read(logSpanIdIn);
  }

  get times() {
    return LOG_TIMES;
  }

  /** @returns {number} */
  severityNumber() {
    return this.built !== null ? this.built.severityNumber : this.read(severityIn);
  }

  /** @returns {any} the body, an AnyValue */
  body() {
    return this.built !== null ? this.built.body : this.read(bodyIn);
  }
}

/**
 * A data point checked at ingest and built when read. The store keeps only its context (whose `metric`
 * says what type of point it is) and place, and makes one of these again whenever the point is read.
 */
export class LazyPoint extends LazyTimedItem {
  /** @param {any} ctx a store entry's context (its `batch` has the request's `source`) @param {number} place @param {number} seq */
  static placed(ctx, place, seq) {
    const point = new LazyPoint(ctx, place, METRIC_TYPES_BY_KEY[ctx.metric.type]);
    point.seq = seq;
    return point;
  }

  /** @param {{ batch: { source: Source } }} ctx @param {number} place @param {MetricType} type */
  constructor(ctx, place, type) {
    super(ctx, place);
    this.type = type;
  }

  get kind() {
    return this.type;
  }

  get times() {
    return POINT_TIMES;
  }

  /** The bytes of the point's attributes as text, read whether or not it is built: equal texts, equal attributes. */
  attributesText() {
    wantedTag = this.type.attributesTag;
    return this.read(attributesTextIn);
  }
}

// Readers of a few fields of an item that was checked whole.

/**
 * The fields of a span that queries and trace summaries look at.
 * @typedef {{ name: string, isRoot: boolean, startTimeUnixNano: string, endTimeUnixNano: string, statusCode: number }} SpanOutline
 */

/** @param {any} span a canonical span @returns {SpanOutline} */
export function outlineOf(span) {
  return {
    name: span.name,
    isRoot: span.parentSpanId === '',
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    statusCode: span.status.code,
  };
}

/** @param {number} end @returns {SpanOutline} */
function outlineIn(end) {
  let name = '';
  let isRoot = true;
  let startTimeUnixNano = '0';
  let endTimeUnixNano = '0';
  let statusCode = 0;
  while (pos < end) {
    const tag = varint32();
    switch (tag) {
      case 34: {
        const e = delimited(end);
        isRoot = e === pos;
        pos = e;
        break;
      }
      case 42:
        name = recurring(end);
        break;
      case 57:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case 65:
        endTimeUnixNano = fixed64String(end, false);
        break;
      case 122:
        statusCode = spanStatus(delimited(end)).code;
        break;
      default:
        pass(tag & 7, end);
    }
  }
  return { name, isRoot, startTimeUnixNano, endTimeUnixNano, statusCode };
}

/**
 * Skips a field of an item that was checked whole, trusting its bytes: what a reader does with the fields it
 * does not want, most of the fields of an item.
 * @param {number} wireType @param {number} end
 */
function pass(wireType, end) {
  switch (wireType) {
    case 0:
      while (buf[pos++] >= 0x80);
      return;
    case 1:
      pos += 8;
      return;
    case 2: {
      const length = varint32();
      pos += length;
      return;
    }
    case 5:
      pos += 4;
      return;
    default:
      skipValue(wireType, end, 0);
  }
}

/**
 * A reader of one field: the value of its last occurrence, or `none`.
 * @template T @param {number} tag @param {(end: number) => T} value @param {T} none @returns {(end: number) => T}
 */
function lastOf(tag, value, none) {
  return (end) => {
    let v = none;
    while (pos < end) {
      const t = varint32();
      if (t === tag) v = value(end);
      else pass(t & 7, end);
    }
    return v;
  };
}

const spanSpanIdIn = lastOf(18, spanIdOf, '');
const logTraceIdIn = lastOf(74, traceIdOf, '');
const logSpanIdIn = lastOf(82, spanIdOf, '');
const severityIn = lastOf(16, () => varint32() | 0, 0);
const bodyIn = lastOf(42, (end) => anyValue(delimited(end), 0), EMPTY_ANY);
const pointTimeIn = lastOf(25, (end) => fixed64String(end, false), '0');

// Times compared with a bound as read, in two 32-bit halves: making their text costs most of a read.

/** A time to compare stored times with (`timeOrder`). @typedef {{ text: string, hi: number, lo: number }} NanosBound */

/** @param {string} text a time in the model's notation: a decimal string of nanoseconds @returns {NanosBound} */
export function nanosBound(text) {
  const n = BigInt(text);
  return { text, hi: Number(n >> 32n), lo: Number(n & 0xffffffffn) };
}

/** The halves of the last time a raw reader read. */
let rawHi = 0;
let rawLo = 0;

/** @param {number} end */
function pointRawTimeIn(end) {
  rawHi = 0;
  rawLo = 0;
  while (pos < end) {
    const tag = varint32();
    if (tag !== 25) pass(tag & 7, end);
    else {
      rawLo = u32le();
      rawHi = u32le();
    }
  }
}

/** @param {number} end */
function logRawTimeIn(end) {
  let timeHi = 0;
  let timeLo = 0;
  let observedHi = 0;
  let observedLo = 0;
  while (pos < end) {
    const tag = varint32();
    if (tag === 9) {
      timeLo = u32le();
      timeHi = u32le();
    } else if (tag === 89) {
      observedLo = u32le();
      observedHi = u32le();
    } else pass(tag & 7, end);
  }
  const unset = timeHi === 0 && timeLo === 0;
  rawHi = unset ? observedHi : timeHi;
  rawLo = unset ? observedLo : timeLo;
}

/** A log record's time, or its observed time when it has none. @param {any} record a canonical LogRecord */
export function logTimeOf(record) {
  return record.timeUnixNano !== '0' ? record.timeUnixNano : record.observedTimeUnixNano;
}

/** @type {ItemTimes} */
const LOG_TIMES = { text: logTimeIn, raw: logRawTimeIn, of: logTimeOf };
/** @type {ItemTimes} */
const POINT_TIMES = { text: pointTimeIn, raw: pointRawTimeIn, of: (point) => point.timeUnixNano };

/** @param {number} end */
function logTimeIn(end) {
  let time = '0';
  let observed = '0';
  while (pos < end) {
    const tag = varint32();
    if (tag === 9) time = fixed64String(end, false);
    else if (tag === 89) observed = fixed64String(end, false);
    else pass(tag & 7, end);
  }
  return time !== '0' ? time : observed;
}

/** @param {any[]} attributes @param {string} key */
export function attributeIn(attributes, key) {
  for (const kv of attributes) if (kv.key === key) return kv.value;
  return undefined;
}

let wantedKey = '';
let wantedKeyIsAscii = true;
/** The tag of the attributes of the item being read. */
let wantedTag = 0;

/** @param {number} end */
function attributeValueIn(end) {
  while (pos < end) {
    const tag = varint32();
    if (tag !== wantedTag) {
      pass(tag & 7, end);
      continue;
    }
    const e = delimited(end);
    const start = pos;
    // Only the pair whose key matches is decoded. Decoded UTF-8 never has more UTF-16 units than bytes, and
    // only ASCII bytes decode to ASCII: an ASCII key of another length cannot match, and needs no string.
    let matches = wantedKey === '';
    while (pos < e) {
      const t = varint32();
      if (t !== 10) pass(t & 7, e);
      else if (!wantedKeyIsAscii || varint32At(pos) === wantedKey.length) matches = recurring(e) === wantedKey;
      else {
        matches = false;
        pos = delimited(e);
      }
    }
    if (matches) {
      pos = start;
      return decodeKeyValue(e, 0).value;
    }
  }
  return undefined;
}

/** @param {number} end */
function attributesTextIn(end) {
  let text = '';
  // Attributes are usually written one after another: one slice for the run.
  let runStart = 0;
  let runEnd = -1;
  while (pos < end) {
    const at = pos;
    const tag = varint32();
    pass(tag & 7, end);
    if (tag !== wantedTag) continue;
    if (at !== runEnd) {
      if (runEnd >= 0) text += buf.latin1Slice(runStart, runEnd);
      runStart = at;
    }
    runEnd = pos;
  }
  return runEnd < 0 ? text : text + buf.latin1Slice(runStart, runEnd);
}

// ---- checking items at ingest ----

/** The bytes of the request being decoded, which its lazy items keep. @returns {Source} */
function requestSource() {
  if (source === null) {
    // A slice of a larger buffer (a socket read, a pooled chunk) would keep all of it alive.
    if (buf.byteOffset !== 0 || buf.byteLength !== buf.buffer.byteLength) {
      const own = /** @type {SlicingBuffer} */ (Buffer.from(buf));
      buf = own;
      view = new DataView(own.buffer, own.byteOffset, own.byteLength);
    }
    source = { bytes: buf, view };
    unstored = { batch: { source } };
  }
  return source;
}

/** Runs a decoder over an item's bytes with every check and nothing built. @param {(end: number) => any} decode @param {number} end */
function check(decode, end) {
  requestSource();
  building = false;
  const out = decode(end);
  building = true;
  return out;
}

/** @param {number} end @returns {LazySpan} */
function checkedSpan(end) {
  keepTraceId = true;
  const lazy = check(span, end);
  keepTraceId = false;
  return lazy;
}

/** @param {number} end */
function checkedLogRecord(end) {
  const start = pos;
  check(logRecord, end);
  return new LazyLogRecord(unstored, placeOf(buf, start));
}

/** @param {number} end @param {MetricType} type */
function checkedPoint(end, type) {
  const start = pos;
  check(type.decode, end);
  return new LazyPoint(unstored, placeOf(buf, start), type);
}

/** @param {any} x */
const builtItem = (x) => (x instanceof LazyItem ? x.build() : x);

/** @param {any} m a canonical Metric, or a LazyMetric */
const builtMetric = (m) => (m instanceof LazyMetric ? metricOf(m.metric, m.dataPoints.map(builtItem)) : m);

/**
 * A request with every item built, for a request decoded with `lazy` that is kept whole.
 * @param {import('./signals.js').Signal} signal @param {any} request
 */
export function builtRequest(signal, request) {
  const { rootField, scopeField, itemField } = signal;
  const build = signal.name === 'metrics' ? builtMetric : builtItem;
  return {
    [rootField]: request[rootField].map((/** @type {any} */ group) => ({
      ...group,
      [scopeField]: group[scopeField].map((/** @type {any} */ sg) => ({ ...sg, [itemField]: sg[itemField].map(build) })),
    })),
  };
}

/** @type {Record<string, (end: number) => any>} */
const ITEM_DECODERS = { traces: span, metrics: metric, logs: logRecord };
/** @type {Record<string, (end: number) => any>} metrics come back as LazyMetrics, their points checked (metricData) */
const CHECKED_ITEMS = { traces: checkedSpan, metrics: metric, logs: checkedLogRecord };

const ROOT_FIELDS = mask(1);

/**
 * @param {import('./signals.js').Signal} signal
 * @param {Uint8Array} bytes
 * @param {{ lazy?: boolean }} [options] lazy: spans, log records and data points come back as LazyItems,
 *   checked but not built, and metrics with data as LazyMetrics (`builtRequest` makes it canonical)
 * @returns {any} the canonical Export*ServiceRequest
 */
export function decodeProto(signal, bytes, { lazy = false } = {}) {
  buf = /** @type {SlicingBuffer} */ (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  pos = 0;
  const end = buf.length;
  const item = lazy ? CHECKED_ITEMS[signal.name] : ITEM_DECODERS[signal.name];
  lazyPoints = lazy;
  const groups = [];
  try {
    while (pos < end) {
      const tag = varint32();
      if (tag === 10) groups.push(resourceGroup(delimited(end), signal.scopeField, signal.itemField, item));
      else skip(tag, end, ROOT_FIELDS);
    }
    finish(end);
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    if (err instanceof RangeError) throw fail(err.message);
    throw err;
  } finally {
    buf = /** @type {SlicingBuffer} */ (EMPTY_BUFFER);
    source = null;
    unstored = null;
    building = true;
    keepTraceId = false;
    lazyPoints = false;
  }
  return { [signal.rootField]: groups };
}

const EMPTY_BUFFER = Buffer.alloc(0);
