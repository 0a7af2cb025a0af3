// OTLP/JSON text rewritten as the protobuf encoding of the same request, in one pass over its bytes and
// without building a tree: decodeProto then checks and keeps it like any protobuf request (lazily where it
// keeps items lazily), so both encodings are stored alike, at the memory of protobuf bytes. Parsing the text
// into objects first (JSON.parse) costs more than all the rest of receiving a request.
//
// It writes only what decodeProto decodes to exactly what decodeJson makes of the text (docs/internals.md).
// Anything else returns null, and the caller hands the text to decodeJson, which decodes it or names the
// problem: malformed text, a wrongly typed or out-of-range value, and legal rarities (a field given twice or
// under both of its names, a lone surrogate, which protobuf strings cannot carry, leading zeros, numeric
// strings other than a plain number, integers written with a fraction or exponent, escapes in ids and
// numbers, AnyValues nested deeper than decodeProto takes).
import { isMainThread } from 'node:worker_threads';
import { BASE64, snakeCase } from './decode-json.js';
import { keptBuffer } from './kept-bytes.js';
import { requestType } from './schema.js';
import { ID_FIELDS, SIGNAL_NAMES } from './signals.js';

/** decodeProto's limit on nested AnyValues (its MAX_DEPTH). */
const MAX_ANY_DEPTH = 64;
const U32 = 4294967296;

/**
 * Memory for the protobuf written: kept-bytes.js's, for the store to keep. The worker thread (json-worker.js) moves
 * its output to the event loop's thread whole, so it writes into memory of its own rather than its own slabs.
 * @type {(length: number, kind: string) => Buffer}
 */
const outputBuffer = isMainThread ? keptBuffer : (length) => Buffer.allocUnsafeSlow(length);

/** Thrown when the text is not one this transcoder writes; never escapes the module. */
class NotTranscoded extends Error {}
const NOT_TRANSCODED = new NotTranscoded('not transcoded');

// ---- field kinds, as the protobuf wire writes them ----
const MESSAGE = 1;
const STRING = 2;
const ID = 3;
const BYTES = 4;
const BOOL = 5;
const DOUBLE = 6;
const FIXED64 = 7;
const SFIXED64 = 8;
const INT64 = 9;
const UINT64 = 10;
const INT32 = 11;
const ENUM = 12;
const UINT32 = 13;
const FIXED32 = 14;
const SINT32 = 15;

/** @type {Record<string, number>} */
const SCALAR_KINDS = {
  string: STRING,
  bytes: BYTES,
  bool: BOOL,
  double: DOUBLE,
  fixed64: FIXED64,
  sfixed64: SFIXED64,
  int64: INT64,
  uint64: UINT64,
  int32: INT32,
  uint32: UINT32,
  fixed32: FIXED32,
  sint32: SINT32,
};
/** @type {Record<number, number>} protobuf wire type of each kind */
const WIRE_TYPES = {
  [MESSAGE]: 2,
  [STRING]: 2,
  [ID]: 2,
  [BYTES]: 2,
  [BOOL]: 0,
  [DOUBLE]: 1,
  [FIXED64]: 1,
  [SFIXED64]: 1,
  [INT64]: 0,
  [UINT64]: 0,
  [INT32]: 0,
  [ENUM]: 0,
  [UINT32]: 0,
  [FIXED32]: 5,
  [SINT32]: 0,
};

/**
 * @typedef {{
 *   kind: number, tag0: number, tag1: number, repeated: boolean, packed: { lenBytes: number }|null,
 *   always: boolean, index: number, bit: number, rivals: number, idBytes: number, shape: Shape|null,
 *   enumValues: Map<string, number>|null,
 * }} Field
 *   tag0/tag1: the tag's varint bytes (tag1 -1 when one byte does); packed: set for a packed list, with the
 *   length bytes to reserve; always: written even when it is the default (oneof members, proto3 optional,
 *   list elements); rivals: bits of the other members of its oneof
 * @typedef {{ bytes: Uint8Array, words: Int32Array, last: number, mask: number, length: number }} Key
 *   a field's name followed by its closing quote, also as little-endian 32-bit words for comparing four bytes
 *   at a time: `last` indexes the last word, `mask` keeps the bytes of the key in it; length counts the quote
 * @typedef {{ keyHashes: Int32Array, keyNames: (Key|null)[], keyFields: (Field|null)[], mask: number,
 *   nextNames: (Key|null)[], nextFields: (Field|null)[], lenBytes: number, anyValue: boolean, keyValue: boolean }} Shape
 *   keys (camelCase and snake_case names) in an open-addressed table; nextNames/nextFields: at 2·i and
 *   2·i + 1, where i is the index of a field plus one (0 at the start of an object), the two keys that
 *   followed it most recently, tried first;
 *   lenBytes: bytes reserved for the length prefix, the size the last message of this type needed
 */

/** FNV-1a over a name's bytes, as `key` computes it over the text. @param {Uint8Array} bytes */
function hashOf(bytes) {
  let h = 0x811c9dc5 | 0;
  for (const c of bytes) h = Math.imul(h ^ c, 0x01000193);
  return h;
}

/** @param {string} name @returns {Key} */
function keyOf(name) {
  const bytes = Buffer.from(name + '"', 'latin1');
  const words = new Int32Array(Math.ceil(bytes.length / 4));
  bytes.forEach((b, i) => (words[i >>> 2] |= b << ((i & 3) * 8)));
  const tail = bytes.length & 3;
  return { bytes, words, last: words.length - 1, mask: tail === 0 ? -1 : (1 << (tail * 8)) - 1, length: bytes.length };
}

/** @type {Map<any, Shape>} */
const shapes = new Map();

/** @param {any} type a protobufjs Type @returns {Shape} */
function shapeOf(type) {
  const known = shapes.get(type);
  if (known) return known;
  const size = 64;
  /** @type {Shape} */
  const shape = {
    keyHashes: new Int32Array(size),
    keyNames: new Array(size).fill(null),
    keyFields: new Array(size).fill(null),
    mask: size - 1,
    nextNames: new Array(2 * type.fieldsArray.length + 2).fill(null),
    nextFields: new Array(2 * type.fieldsArray.length + 2).fill(null),
    lenBytes: 1,
    anyValue: type.fullName === '.opentelemetry.proto.common.v1.AnyValue',
    keyValue: type.fullName === '.opentelemetry.proto.common.v1.KeyValue',
  };
  shapes.set(type, shape);
  const fields = type.fieldsArray;
  if (fields.length > 30) throw new Error(`${type.name} has too many fields for a bit set`);
  /** @type {Field[]} */
  const compiled = fields.map((/** @type {any} */ f, /** @type {number} */ i) => {
    f.resolve();
    const resolved = f.resolvedType;
    let kind = resolved && resolved.fieldsArray ? MESSAGE : resolved ? ENUM : SCALAR_KINDS[f.type];
    if (kind === undefined) throw new Error(`no writer for proto type ${f.type}`);
    const idBytes = kind === BYTES ? (ID_FIELDS.get(f.name) ?? 0) : 0;
    if (idBytes) kind = ID;
    const packed = f.repeated && WIRE_TYPES[kind] !== 2;
    if (packed && ![DOUBLE, FIXED64, UINT64, INT64, INT32].includes(kind)) throw new Error(`no packed writer for ${f.type}`);
    const tag = (f.id << 3) | (packed ? 2 : WIRE_TYPES[kind]);
    return {
      kind,
      tag0: tag < 0x80 ? tag : (tag & 0x7f) | 0x80,
      tag1: tag < 0x80 ? -1 : tag >>> 7,
      repeated: f.repeated,
      packed: packed ? { lenBytes: 1 } : null,
      always: f.repeated || f.partOf !== null,
      index: i,
      bit: 1 << i,
      rivals: 0,
      idBytes,
      shape: null,
      enumValues: kind === ENUM ? new Map(Object.entries(resolved.values)) : null,
    };
  });
  fields.forEach((/** @type {any} */ f, /** @type {number} */ i) => {
    const field = compiled[i];
    if (f.partOf) for (const other of f.partOf.fieldsArray) if (other !== f) field.rivals |= compiled[fields.indexOf(other)].bit;
    for (const name of new Set([f.name, snakeCase(f.name)])) {
      const h = hashOf(Buffer.from(name, 'latin1'));
      let slot = h & shape.mask;
      while (shape.keyNames[slot] !== null) slot = (slot + 1) & shape.mask;
      shape.keyHashes[slot] = h;
      shape.keyNames[slot] = keyOf(name);
      shape.keyFields[slot] = field;
    }
    if (field.kind === MESSAGE) field.shape = shapeOf(f.resolvedType);
  });
  return shape;
}

/** @type {Map<string, Shape>} */
const ROOTS = new Map(SIGNAL_NAMES.map((name) => [name, shapeOf(requestType(name))]));

// ---- character classes ----

/** In a string: 1 quote, 2 backslash, 3 a control character JSON forbids there. */
const STRING_CLASS = new Uint8Array(256);
STRING_CLASS[34] = 1;
STRING_CLASS[92] = 2;
STRING_CLASS.fill(3, 0, 32);
/** Hex digit values, 255 for anything else. */
const HEX_VALUE = new Uint8Array(256).fill(255);
for (let i = 0; i < 16; i++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_VALUE['0123456789ABCDEF'.charCodeAt(i)] = i;
}
/** Two hex digits, read as a big-endian 16-bit number, to the byte they spell; 256 for anything else. */
const HEX_PAIR = new Uint16Array(65536).fill(256);
for (let h = 0; h < 256; h++) {
  if (HEX_VALUE[h] > 15) continue;
  for (let l = 0; l < 256; l++) if (HEX_VALUE[l] < 16) HEX_PAIR[(h << 8) | l] = (HEX_VALUE[h] << 4) | HEX_VALUE[l];
}
/** The escapes JSON allows besides \u, and the byte each stands for. */
const ESCAPED = new Int16Array(256).fill(-1);
for (const [c, b] of /** @type {[string, number][]} */ ([
  ['"', 34],
  ['\\', 92],
  ['/', 47],
  ['b', 8],
  ['f', 12],
  ['n', 10],
  ['r', 13],
  ['t', 9],
]))
  ESCAPED[c.charCodeAt(0)] = b;
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

// ---- state of the one transcoding under way ----
// `var`, not `let`: every use of a module-level `let` from a function checks that it is initialised, which
// measured 5 to 15 % of a transcoding.

const EMPTY = Buffer.alloc(0);
/**
 * Node's Buffer slices text natively without the dispatch of `toString(encoding, start, end)`.
 * @typedef {Buffer & { latin1Slice(s: number, e: number): string }} SlicingBuffer
 */
/** @type {SlicingBuffer} */
var src = /** @type {SlicingBuffer} */ (EMPTY);
var srcView = new DataView(src.buffer, src.byteOffset, 0);
var p = 0;
var end = 0;
/** Output, reused from request to request; what it holds is copied out at the end. */
var out = Buffer.allocUnsafeSlow(1 << 16);
var outView = new DataView(out.buffer, out.byteOffset, out.length);
var o = 0;
var anyDepth = 0;
/** Containers open while skipping an unknown field's value: 1 object, 2 array. */
var skipStack = new Uint8Array(64);
// A 64-bit integer just read: its magnitude as two 32-bit halves, and its sign.
var lo = 0;
var hi = 0;
var negative = false;

/** @param {number} n bytes about to be written */
function room(n) {
  if (o + n > out.length) {
    const bigger = Buffer.allocUnsafeSlow(Math.max(out.length * 2, o + n + 1024));
    out.copy(bigger, 0, 0, o);
    out = bigger;
    outView = new DataView(out.buffer, out.byteOffset, out.length);
  }
}

/** What `throw fail()` throws: declining the text, which unwinds to jsonToProto. */
function fail() {
  return NOT_TRANSCODED;
}

/** Skips JSON whitespace; returns the byte there (undefined at the end). */
function next() {
  let c = src[p];
  while (c === 32 || c === 10 || c === 13 || c === 9) c = src[++p];
  return c;
}

/** @param {Field} field */
function writeTag(field) {
  out[o++] = field.tag0;
  if (field.tag1 >= 0) out[o++] = field.tag1;
}

/** @param {number} v unsigned, below 2^32 */
function writeVarint32(v) {
  while (v >= 0x80) {
    out[o++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[o++] = v;
}

/** @param {number} l @param {number} h unsigned 32-bit halves */
function writeVarint64(l, h) {
  while (h !== 0 || l >= 0x80) {
    out[o++] = (l & 0x7f) | 0x80;
    l = ((l >>> 7) | (h << 25)) >>> 0;
    h >>>= 7;
  }
  out[o++] = l;
}

/** The 64-bit integer last read (lo, hi). */
function writeFixed64() {
  outView.setInt32(o, lo, true);
  outView.setInt32(o + 4, hi, true);
  o += 8;
}

/** @param {number} v */
function writeFixed32(v) {
  out[o++] = v;
  out[o++] = v >>> 8;
  out[o++] = v >>> 16;
  out[o++] = v >>> 24;
}

/**
 * Writes the length of what was written since `at` into the `reserved` bytes there, moving the content when
 * it needs more or fewer; the next message of the kind reserves what this one needed (`hint`). Passed in, not
 * read from the hint: a message may hold messages of its own kind, which change the hint meanwhile.
 * @param {{ lenBytes: number }} hint @param {number} at @param {number} reserved
 */
function closeLength(hint, at, reserved) {
  let len = o - at - reserved;
  const size = len < 0x80 ? 1 : len < 0x4000 ? 2 : len < 0x200000 ? 3 : len < 0x10000000 ? 4 : 5;
  if (size !== reserved) {
    if (size > reserved) room(size - reserved);
    out.copyWithin(at + size, at + reserved, o);
    o += size - reserved;
    hint.lenBytes = size;
  }
  while (len >= 0x80) {
    out[at++] = (len & 0x7f) | 0x80;
    len >>>= 7;
  }
  out[at] = len;
}

/** Bytes reserved for the length of a string, like a Shape's: the size the last string needed. */
const STRING_LENGTH = { lenBytes: 1 };

// ---- messages ----

/**
 * Writes the fields of the object at `p` (which holds `{`).
 * @param {Shape} shape
 */
function message(shape) {
  if (shape.anyValue && ++anyDepth > MAX_ANY_DEPTH + 1) throw fail();
  p++;
  let seen = 0;
  let present = 0;
  let c = src[p];
  if (c <= 32) c = next();
  if (c === 125) {
    p++;
    if (shape.anyValue) anyDepth--;
    return;
  }
  let previous = 0;
  for (;;) {
    if (c !== 34) throw fail();
    const field = key(shape, previous);
    if (src[p] !== 58 && next() !== 58) throw fail();
    p++;
    c = src[p];
    if (c <= 32) c = next();
    if (field === null) {
      skipValue();
    } else {
      // A field named twice, or under both names, is rare; decodeJson settles which one counts.
      if ((seen & field.bit) !== 0) throw fail();
      seen |= field.bit;
      previous = field.index + 1;
      if (c === 110) {
        literal('null');
      } else {
        if ((present & field.rivals) !== 0) throw fail();
        present |= field.bit;
        if (field.repeated) list(field);
        else value(field, c);
      }
    }
    c = src[p];
    if (c <= 32) c = next();
    p++;
    if (c === 44) {
      c = src[p];
      if (c <= 32) c = next();
      continue;
    }
    if (c !== 125) throw fail();
    if (shape.anyValue) anyDepth--;
    return;
  }
}

/**
 * Reads the key at `p` (which holds `"`) and returns its field, or null for a field the schema lacks.
 * Senders write the fields of a message in much the same order every time: the two keys that followed the
 * previous one most recently are compared first, and only another key is looked up.
 * @param {Shape} shape @param {number} previous index of the previous field plus one, 0 for the first
 */
function key(shape, previous) {
  const start = p + 1;
  const names = shape.nextNames;
  const fields = shape.nextFields;
  const first = 2 * previous;
  const guess = names[first];
  if (guess !== null) {
    if (sameKey(guess, start)) {
      p = start + guess.length;
      return fields[first];
    }
    const other = names[first + 1];
    if (other !== null && sameKey(other, start)) {
      p = start + other.length;
      const field = fields[first + 1];
      names[first + 1] = guess;
      fields[first + 1] = fields[first];
      names[first] = other;
      fields[first] = field;
      return field;
    }
  }
  const s = src;
  let i = start;
  let h = 0x811c9dc5 | 0;
  let c = s[i];
  while (c !== 34) {
    // Escaped keys spell known names only by accident; decodeJson reads them.
    if (STRING_CLASS[c] !== 0) throw fail();
    h = Math.imul(h ^ c, 0x01000193);
    c = s[++i];
  }
  const len = i - start + 1;
  p = i + 1;
  for (let slot = h & shape.mask; ; slot = (slot + 1) & shape.mask) {
    const name = shape.keyNames[slot];
    if (name === null) return null;
    if (shape.keyHashes[slot] === h && name.length === len && sameKey(name, start)) {
      names[first + 1] = names[first];
      fields[first + 1] = fields[first];
      names[first] = name;
      fields[first] = shape.keyFields[slot];
      return shape.keyFields[slot];
    }
  }
}

/** Whether the text at `at` is `key` (its name and closing quote). @param {Key} key @param {number} at */
function sameKey(key, at) {
  const words = key.words;
  const last = key.last;
  if (at + 4 * last + 4 > end) {
    const bytes = key.bytes;
    for (let i = 0; i < bytes.length; i++) if (src[at + i] !== bytes[i]) return false;
    return true;
  }
  const view = srcView;
  for (let k = 0; k < last; k++) if (view.getInt32(at + 4 * k, true) !== words[k]) return false;
  return (view.getInt32(at + 4 * last, true) & key.mask) === words[last];
}

/** @param {Field} field */
function list(field) {
  if (src[p] !== 91) throw fail();
  p++;
  let c = src[p];
  if (c <= 32) c = next();
  if (c === 93) {
    p++;
    return;
  }
  const packed = field.packed;
  let at = 0;
  let reserved = 0;
  if (packed !== null) {
    room(8);
    writeTag(field);
    at = o;
    reserved = packed.lenBytes;
    o += reserved;
  }
  for (;;) {
    if (packed !== null) packedValue(field, c);
    else value(field, c);
    c = src[p];
    if (c <= 32) c = next();
    p++;
    if (c === 44) {
      c = src[p];
      if (c <= 32) c = next();
      continue;
    }
    if (c !== 93) throw fail();
    break;
  }
  if (packed !== null) closeLength(packed, at, reserved);
}

/**
 * Writes one field (tag and value) from the value at `p`, whose first byte is `c`.
 * @param {Field} field @param {number} c
 */
function value(field, c) {
  switch (field.kind) {
    case MESSAGE: {
      if (c !== 123) throw fail();
      const shape = /** @type {Shape} */ (field.shape);
      room(16);
      writeTag(field);
      const at = o;
      const reserved = shape.lenBytes;
      o += reserved;
      if (!shape.keyValue || !attribute()) message(shape);
      closeLength(shape, at, reserved);
      return;
    }
    case STRING:
      if (c !== 34) throw fail();
      string(field);
      return;
    case ID:
      if (c !== 34) throw fail();
      id(field);
      return;
    case BYTES:
      if (c !== 34) throw fail();
      bytes(field);
      return;
    case BOOL: {
      room(4);
      let v = false;
      if (c === 116) {
        literal('true');
        v = true;
      } else if (c === 102) {
        literal('false');
      } else {
        throw fail();
      }
      if (v || field.always) {
        writeTag(field);
        out[o++] = v ? 1 : 0;
      }
      return;
    }
    case DOUBLE: {
      const v = double(c);
      if (field.always || !Object.is(v, 0)) {
        room(10);
        writeTag(field);
        outView.setFloat64(o, v, true);
        o += 8;
      }
      return;
    }
    case FIXED64:
    case SFIXED64:
    case INT64:
    case UINT64:
      int64(field, c);
      return;
    default:
      int32(field, c);
  }
}

/**
 * One element of a packed list: its value without a tag.
 * @param {Field} field @param {number} c
 */
function packedValue(field, c) {
  room(10);
  switch (field.kind) {
    case DOUBLE:
      outView.setFloat64(o, double(c), true);
      o += 8;
      return;
    case FIXED64:
      readInt64(c, false);
      writeFixed64();
      return;
    case INT64:
      readInt64(c, true);
      writeVarint64(lo, hi);
      return;
    case INT32:
      readInt64(c, true);
      // Within 32 bits: the high half only carries the sign.
      if (hi === 0 ? lo > 0x7fffffff : hi !== 0xffffffff || lo < 0x80000000) throw fail();
      writeVarint64(lo, hi);
      return;
    default:
      readInt64(c, false);
      writeVarint64(lo, hi);
  }
}

/** @param {string} word true, false or null */
function literal(word) {
  for (let i = 0; i < word.length; i++) if (src[p + i] !== word.charCodeAt(i)) throw fail();
  p += word.length;
}

// ---- attributes ----

const ATTRIBUTE_HEAD = keyOf('{"key');
const ATTRIBUTE_MIDDLE = keyOf(',"value":{"stringValue');
const INT_ATTRIBUTE_MIDDLE = keyOf(',"value":{"intValue');

/**
 * Writes the fields of the KeyValue at `p` when it is written the way nearly every sender writes an attribute,
 * compactly, key first, with a string or integer value under its camelCase name; returns false, having
 * consumed and written nothing, for anything else (which `message` then reads). Attributes are most of a
 * request, and taking one in a single pass costs a fraction of the general path's calls.
 */
function attribute() {
  const s = src;
  const start = p;
  const from = o;
  if (anyDepth > MAX_ANY_DEPTH || !sameKey(ATTRIBUTE_HEAD, start) || s[start + 6] !== 58 || s[start + 7] !== 34) return false;
  // Both strings together are no longer than the text left.
  room(end - p + 32);
  const d = out;
  d[o] = 0x0a;
  const keyAt = o + 1;
  o += 2;
  p = start + 7;
  copyString();
  const keyLength = o - keyAt - 1;
  if (keyLength >= 0x80) return restore(start, from);
  if (keyLength === 0) o = from;
  else d[keyAt] = keyLength;
  const isString = sameKey(ATTRIBUTE_MIDDLE, p);
  if (!isString && !sameKey(INT_ATTRIBUTE_MIDDLE, p)) return restore(start, from);
  p += isString ? ATTRIBUTE_MIDDLE.length : INT_ATTRIBUTE_MIDDLE.length;
  if (s[p] !== 58) return restore(start, from);
  p++;
  d[o] = 0x12;
  const valueAt = o + 1;
  o += 2;
  if (isString) {
    if (s[p] !== 34) return restore(start, from);
    d[o] = 0x0a;
    const textAt = o + 1;
    o += 2;
    copyString();
    const textLength = o - textAt - 1;
    if (textLength >= 0x80) return restore(start, from);
    d[textAt] = textLength;
  } else {
    const c = s[p];
    if (c !== 34 && c !== 45 && !(c >= 48 && c <= 57)) return restore(start, from);
    readInt64(c, true);
    d[o++] = 0x18;
    writeVarint64(lo, hi);
  }
  const valueLength = o - valueAt - 1;
  if (valueLength >= 0x80 || s[p] !== 125 || s[p + 1] !== 125) return restore(start, from);
  d[valueAt] = valueLength;
  p += 2;
  return true;
}

/** Undoes what `attribute` read and wrote. @param {number} start @param {number} from @returns {false} */
function restore(start, from) {
  p = start;
  o = from;
  return false;
}

// ---- strings ----

/**
 * Copies the string at `p` (which holds `"`) as UTF-8, escapes resolved, to the output, and moves past it.
 * Bytes that are not valid UTF-8 are copied as they are: decodeProto's decoding replaces them exactly
 * as decodeJson's decoding of the whole text does, since quotes and escapes never split a sequence.
 */
function copyString() {
  const s = src;
  const d = out;
  const sv = srcView;
  const dv = outView;
  const wordsEnd = end - 4;
  let i = p + 1;
  let w = o;
  for (;;) {
    // Four bytes at a time while none is a quote, a backslash or a control character.
    while (i <= wordsEnd) {
      const v = sv.getInt32(i, true);
      const quote = v ^ 0x22222222;
      const backslash = v ^ 0x5c5c5c5c;
      if (((((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) !== 0) break;
      dv.setInt32(w, v, true);
      i += 4;
      w += 4;
    }
    let c = s[i];
    while (STRING_CLASS[c] === 0) {
      d[w++] = c;
      c = s[++i];
    }
    if (c === 34) break;
    if (c !== 92) throw fail();
    p = i;
    o = w;
    unescape();
    i = p;
    w = o;
  }
  p = i + 1;
  o = w;
}

/** Resolves the escape at `p` (which holds the backslash). */
function unescape() {
  const e = src[p + 1];
  if (e !== 117) {
    const b = ESCAPED[e];
    if (b < 0 || e === undefined) throw fail();
    out[o++] = b;
    p += 2;
    return;
  }
  let code = hex4(p + 2);
  p += 6;
  if (code >= 0xd800 && code <= 0xdfff) {
    // Only a pair is a character; protobuf strings cannot hold half of one.
    if (code > 0xdbff || src[p] !== 92 || src[p + 1] !== 117) throw fail();
    const low = hex4(p + 2);
    if (low < 0xdc00 || low > 0xdfff) throw fail();
    p += 6;
    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    out[o++] = 0xf0 | (code >>> 18);
    out[o++] = 0x80 | ((code >>> 12) & 0x3f);
    out[o++] = 0x80 | ((code >>> 6) & 0x3f);
    out[o++] = 0x80 | (code & 0x3f);
  } else if (code < 0x80) {
    out[o++] = code;
  } else if (code < 0x800) {
    out[o++] = 0xc0 | (code >>> 6);
    out[o++] = 0x80 | (code & 0x3f);
  } else {
    out[o++] = 0xe0 | (code >>> 12);
    out[o++] = 0x80 | ((code >>> 6) & 0x3f);
    out[o++] = 0x80 | (code & 0x3f);
  }
}

/** @param {number} at */
function hex4(at) {
  const a = HEX_VALUE[src[at]];
  const b = HEX_VALUE[src[at + 1]];
  const c = HEX_VALUE[src[at + 2]];
  const d = HEX_VALUE[src[at + 3]];
  if ((a | b | c | d) > 15) throw fail();
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/** @param {Field} field */
function string(field) {
  // A string's UTF-8 is never longer than its JSON text.
  room(end - p + 16);
  const tagAt = o;
  writeTag(field);
  const at = o;
  const reserved = STRING_LENGTH.lenBytes;
  o += reserved;
  copyString();
  if (o === at + reserved && !field.always) {
    o = tagAt;
    return;
  }
  closeLength(STRING_LENGTH, at, reserved);
}

/**
 * The raw bytes of the string at `p` when it has no escapes (else not transcoded); moves past it.
 * @returns {number} where its content starts; it ends at p - 1
 */
function plainString() {
  const s = src;
  const start = p + 1;
  let i = start;
  let c = s[i];
  while (STRING_CLASS[c] === 0) c = s[++i];
  if (c !== 34) throw fail();
  p = i + 1;
  return start;
}

/** A trace or span id: hex of exactly its size, or empty for none. @param {Field} field */
function id(field) {
  const s = src;
  const start = p + 1;
  if (s[start] === 34) {
    p = start + 1;
    return;
  }
  // Any other length, or an escape, puts a non-hex character among these or no quote after them.
  const stop = start + 2 * field.idBytes;
  if (s[stop] !== 34) throw fail();
  room(20);
  writeTag(field);
  const d = out;
  const sv = srcView;
  let w = o;
  d[w++] = field.idBytes;
  for (let i = start; i < stop; i += 2) {
    const b = HEX_PAIR[sv.getUint16(i)];
    if (b > 255) throw fail();
    d[w++] = b;
  }
  o = w;
  p = stop + 1;
}

/** Base64, which decodeJson reads with Buffer's lenient decoder: so does this. @param {Field} field */
function bytes(field) {
  const start = plainString();
  const text = src.latin1Slice(start, p - 1);
  if (!BASE64.test(text)) throw fail();
  const decoded = Buffer.from(text, 'base64');
  if (decoded.length === 0 && !field.always) return;
  room(decoded.length + 16);
  writeTag(field);
  writeVarint32(decoded.length);
  decoded.copy(out, o);
  o += decoded.length;
}

// ---- numbers ----

/**
 * A JSON number token at `p`, as JSON.parse reads it. A mantissa below 2^53 (any of up to 15 digits) scaled by
 * at most 10^22 is one correctly rounded division or multiplication of exact doubles, hence what Number()
 * gives; others go to Number().
 * @returns {number}
 */
function number() {
  const start = p;
  let c = src[p];
  const neg = c === 45;
  if (neg) c = src[++p];
  let m = 0;
  let digits = 0;
  let scale = 0;
  if (c === 48) {
    c = src[++p];
    if (c >= 48 && c <= 57) throw fail();
  } else if (c >= 49 && c <= 57) {
    do {
      m = m * 10 + (c - 48);
      digits++;
      c = src[++p];
    } while (c >= 48 && c <= 57);
  } else {
    throw fail();
  }
  if (c === 46) {
    c = src[++p];
    if (!(c >= 48 && c <= 57)) throw fail();
    do {
      if (m !== 0 || c !== 48) {
        m = m * 10 + (c - 48);
        digits++;
      }
      scale--;
      c = src[++p];
    } while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69) {
    c = src[++p];
    let expNeg = false;
    if (c === 43 || c === 45) {
      expNeg = c === 45;
      c = src[++p];
    }
    if (!(c >= 48 && c <= 57)) throw fail();
    let e = 0;
    do {
      if (e < 100000) e = e * 10 + (c - 48);
      c = src[++p];
    } while (c >= 48 && c <= 57);
    scale += expNeg ? -e : e;
  }
  let v;
  if ((digits > 15 && !(digits === 16 && m < 9007199254740992)) || scale > 22 || scale < -22) v = Math.abs(Number(src.latin1Slice(start, p)));
  else v = scale === 0 ? m : scale > 0 ? m * POW10[scale] : m / POW10[-scale];
  return neg ? -v : v;
}

/**
 * A double: a number, or a string holding NaN, Infinity, -Infinity or a number token (as `-0`, which JSON
 * numbers lose on the way through most encoders). decodeJson reads any string Number() reads; other spellings
 * (spaces, hex, leading zeros) are left to it.
 * @param {number} c
 */
function double(c) {
  if (c !== 34) return number();
  const s = src;
  const digit = s[p + 1] === 45 ? s[p + 2] : s[p + 1];
  if (digit >= 48 && digit <= 57) {
    p++;
    const v = number();
    if (s[p] !== 34) throw fail();
    p++;
    return v;
  }
  const start = plainString();
  const text = s.latin1Slice(start, p - 1);
  if (text === 'NaN') return NaN;
  if (text === 'Infinity') return Infinity;
  if (text === '-Infinity') return -Infinity;
  throw fail();
}

/**
 * The decimal digits [start, stop) (16 to 20) as the 64-bit magnitude lo/hi; hi may exceed 32 bits when the
 * value exceeds 64, which the range check then refuses.
 * @param {number} start @param {number} stop
 */
function digitsToHalves(start, stop) {
  const s = src;
  // v = high·10^9 + low with high < 2^37: split high at 2^16, and high's part of the product again,
  // so that every product and sum stays an exact double (below 2^53).
  let high = 0;
  for (let i = start; i < stop - 9; i++) high = high * 10 + (s[i] - 48);
  let low = 0;
  for (let i = stop - 9; i < stop; i++) low = low * 10 + (s[i] - 48);
  const hh = Math.floor(high / 65536);
  const t = (high - hh * 65536) * 1e9 + low;
  const a = hh * 1e9;
  const aHigh = Math.floor(a / 65536);
  const l = (a - aHigh * 65536) * 65536 + t;
  const carry = Math.floor(l / U32);
  lo = l - carry * U32;
  hi = aHigh + carry;
}

/**
 * Reads a 64-bit integer, given as a decimal string or as an integer number token, into lo/hi/negative.
 * Number tokens of 16 or more digits are read exactly, as decodeJson reads them.
 * @param {number} c @param {boolean} signed
 */
function readInt64(c, signed) {
  const s = src;
  let start = c === 34 ? p + 1 : p;
  negative = s[start] === 45;
  if (negative) start++;
  let stop = start;
  // Read on the way, and exact up to 15 digits: counts and small values need no second pass, timestamps (19) do.
  let v = 0;
  let d = s[stop];
  while (d >= 48 && d <= 57) {
    v = v * 10 + (d - 48);
    d = s[++stop];
  }
  if (c === 34) {
    if (s[stop] !== 34) throw fail();
    p = stop + 1;
  } else {
    // Fractions, exponents and leading zeros are legal but rare: decodeJson reads them.
    const after = s[stop];
    if (after === 46 || after === 101 || after === 69 || (s[start] === 48 && stop - start > 1)) throw fail();
    p = stop;
  }
  if (stop === start || stop - start > 20) throw fail();
  if (stop - start > 15) digitsToHalves(start, stop);
  else if (v < U32) {
    hi = 0;
    lo = v;
  } else {
    hi = Math.floor(v / U32);
    lo = v - hi * U32;
  }
  if (signed) {
    if (hi > 0x7fffffff && !(negative && hi === 0x80000000 && lo === 0)) throw fail();
  } else if (hi > 0xffffffff || (negative && (lo | hi) !== 0)) {
    throw fail();
  }
  if (negative && (lo | hi) !== 0) {
    lo = (~lo + 1) >>> 0;
    hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
  }
}

/** @param {Field} field @param {number} c */
function int64(field, c) {
  const kind = field.kind;
  readInt64(c, kind === SFIXED64 || kind === INT64);
  if ((lo | hi) === 0 && !field.always) return;
  room(12);
  writeTag(field);
  if (kind === FIXED64 || kind === SFIXED64) {
    writeFixed64();
  } else {
    writeVarint64(lo, hi);
  }
}

/**
 * A 32-bit integer or enum: a number, a decimal string of up to 10 digits, or for an enum its value's name.
 * @param {Field} field @param {number} c
 */
function int32(field, c) {
  let v;
  if (c === 34) {
    const start = plainString();
    const stop = p - 1;
    const values = field.enumValues;
    let named;
    if (values !== null) named = values.get(src.latin1Slice(start, stop));
    if (named !== undefined) {
      v = named;
    } else {
      let i = src[start] === 45 ? start + 1 : start;
      if (i === stop || stop - i > 10) throw fail();
      v = 0;
      for (; i < stop; i++) {
        const d = src[i] - 48;
        if (d < 0 || d > 9) throw fail();
        v = v * 10 + d;
      }
      if (src[start] === 45) v = -v;
    }
  } else {
    v = number();
    if (!Number.isInteger(v)) throw fail();
  }
  const signed = field.kind === INT32 || field.kind === ENUM || field.kind === SINT32;
  if (signed ? v < -2147483648 || v > 2147483647 : v < 0 || v > 4294967295) throw fail();
  if (v === 0 && !field.always) return;
  room(12);
  writeTag(field);
  switch (field.kind) {
    case FIXED32:
      writeFixed32(v);
      return;
    case SINT32:
      writeVarint32(((v << 1) ^ (v >> 31)) >>> 0);
      return;
    case UINT32:
      writeVarint32(v);
      return;
    default:
      // Negative int32 and enum values are sign-extended to ten bytes on the wire.
      if (v < 0) writeVarint64(v >>> 0, 0xffffffff);
      else writeVarint32(v);
  }
}

// ---- unknown fields ----

/** Checks the JSON value at `p` (of a field the schema lacks) and moves past it, without recursion. */
function skipValue() {
  let depth = 0;
  for (;;) {
    let c = next();
    if (c === 123) {
      p++;
      if (next() !== 125) {
        pushContainer(depth++, 1);
        skipKey();
        continue;
      }
      p++;
    } else if (c === 91) {
      p++;
      if (next() !== 93) {
        pushContainer(depth++, 2);
        continue;
      }
      p++;
    } else if (c === 34) {
      skipString();
    } else if (c === 116) {
      literal('true');
    } else if (c === 102) {
      literal('false');
    } else if (c === 110) {
      literal('null');
    } else {
      number();
    }
    for (;;) {
      if (depth === 0) return;
      c = next();
      const inObject = skipStack[depth - 1] === 1;
      p++;
      if (c === 44) {
        if (inObject) skipKey();
        break;
      }
      if (c !== (inObject ? 125 : 93)) throw fail();
      depth--;
    }
  }
}

/** @param {number} depth @param {number} container */
function pushContainer(depth, container) {
  if (depth === skipStack.length) {
    const bigger = new Uint8Array(depth * 2);
    bigger.set(skipStack);
    skipStack = bigger;
  }
  skipStack[depth] = container;
}

/** A member's key and colon, in an object being skipped. */
function skipKey() {
  if (next() !== 34) throw fail();
  skipString();
  if (next() !== 58) throw fail();
  p++;
}

/** Checks the string at `p` and moves past it; any escaped text, lone surrogates too, is fine here. */
function skipString() {
  p++;
  for (;;) {
    let c = src[p];
    while (STRING_CLASS[c] === 0) c = src[++p];
    if (c === 34) break;
    if (c !== 92) throw fail();
    const e = src[p + 1];
    if (e === 117) {
      hex4(p + 2);
      p += 6;
    } else if (ESCAPED[e] >= 0) {
      p += 2;
    } else {
      throw fail();
    }
  }
  p++;
}

/**
 * The protobuf encoding of the OTLP/JSON request `body`, in memory to keep (kept-bytes.js); null when this transcoder
 * does not write it (see the top of this file): decodeJson then decodes it or says what is wrong.
 * @param {import('./signals.js').Signal} signal
 * @param {Buffer} body
 * @returns {Buffer|null}
 */
export function jsonToProto(signal, body) {
  const shape = /** @type {Shape} */ (ROOTS.get(signal.name));
  src = /** @type {SlicingBuffer} */ (body);
  srcView = new DataView(body.buffer, body.byteOffset, body.length);
  p = 0;
  end = body.length;
  o = 0;
  anyDepth = 0;
  // Room for everything but packed numbers (8 bytes from as little as 2 characters), which ask as they go.
  room(end + (end >>> 1) + 1024);
  try {
    const c = next();
    if (p === end) return EMPTY;
    if (c !== 123) return null;
    message(shape);
    next();
    if (p !== end) return null;
    const own = outputBuffer(o, signal.name);
    out.copy(own, 0, 0, o);
    return own;
  } catch (err) {
    if (err === NOT_TRANSCODED) return null;
    throw err;
  } finally {
    src = /** @type {SlicingBuffer} */ (EMPTY);
    srcView = new DataView(EMPTY.buffer, EMPTY.byteOffset, 0);
    // A rare huge request should not pin its output buffer for the life of the process.
    if (out.length > 1 << 22) {
      out = Buffer.allocUnsafeSlow(1 << 16);
      outView = new DataView(out.buffer, out.byteOffset, out.length);
    }
  }
}
