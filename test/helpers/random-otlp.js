// Seeded random OTLP requests and the unusual-but-legal ways to put them on the wire, for comparing
// decoders. Generation follows the schema by reflection, so a field added to proto/ is covered too.
import protobuf from 'protobufjs';
import { seededRandom } from './random.js';

/**
 * @typedef {{ next: () => number, int: (n: number) => number, chance: (p: number) => boolean,
 *   pick: <T>(list: readonly T[]) => T, bytes: (n: number) => Buffer }} Random
 */

/** Helpers over a seeded generator; the seed makes a failure reproducible. @param {number} seed */
export function createRandom(seed) {
  const next = seededRandom(seed);
  /** @type {Random} */
  const random = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    bytes: (n) => {
      const out = Buffer.alloc(n);
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
      return out;
    },
  };
  return random;
}

/** protobufjs types util.Long loosely; it holds the `long` package, whose statics these are. */
const Long =
  /** @type {{
   *   fromString(text: string, unsigned?: boolean): protobuf.Long,
   *   fromBits(low: number, high: number, unsigned?: boolean): protobuf.Long,
   * }} */ (/** @type {unknown} */ (protobuf.util.Long));

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED_LONG_TYPES = new Set(['uint64', 'fixed64']);
const ID_BYTES = new Map([
  ['traceId', 16],
  ['spanId', 8],
  ['parentSpanId', 8],
  ['profileId', 16],
]);
/** Attribute fields that name a profiles dictionary string by index. */
const REFERENCE_FIELDS = new Set(['KeyValue.keyStrindex', 'AnyValue.stringValueStrindex']);

const STRING_PIECES = ['GET /api/orders', 'service.name', 'ü', 'ß', '漢字', '😀', '👩‍💻', 'e\u0301', '\u0000', '\n', '"', '\\', '\u2028', ' ', 'ǅ', '\uFFFD', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'];

/** @param {Random} r */
function randomString(r) {
  if (r.chance(0.15)) return '';
  if (r.chance(0.02)) return 'x'.repeat(1000 + r.int(20000)) + r.pick(STRING_PIECES);
  let s = '';
  for (let n = 1 + r.int(4); n > 0; n--) s += r.pick(STRING_PIECES);
  return s;
}

const SIGNED_EDGES = [
  0n,
  1n,
  -1n,
  127n,
  128n,
  2n ** 31n - 1n,
  -(2n ** 31n),
  2n ** 32n,
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 53n + 1n,
  -(2n ** 53n) - 1n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  -(2n ** 63n) + 1n,
];
const UNSIGNED_EDGES = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n];

/** @param {Random} r @param {boolean} unsigned */
function randomInt64(r, unsigned) {
  if (r.chance(0.4)) return String(r.pick(unsigned ? UNSIGNED_EDGES : SIGNED_EDGES));
  if (r.chance(0.3)) return String(r.int(1000));
  const bits = (BigInt(r.int(2 ** 32)) << 32n) | BigInt(r.int(2 ** 32));
  // Nanosecond timestamps are the common case: 2^60..2^61.
  if (r.chance(0.3)) return String(1768469400000000000n + BigInt(r.int(2 ** 40)));
  return String(unsigned ? BigInt.asUintN(64, bits) : BigInt.asIntN(64, bits));
}

const DOUBLE_EDGES = [0, -0, NaN, Infinity, -Infinity, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 0.1, 1e-300, -1.5];

/** @param {Random} r */
function randomDouble(r) {
  if (r.chance(0.3)) return r.pick(DOUBLE_EDGES);
  if (r.chance(0.3)) return r.bytes(8).readDoubleLE(0);
  return (r.next() - 0.5) * 10 ** (r.int(20) - 5);
}

/** @param {Random} r */
function randomUint32(r) {
  return r.chance(0.3) ? r.pick([0, 1, 127, 128, 2 ** 31, 2 ** 32 - 1]) : r.int(r.chance(0.5) ? 1000 : 2 ** 32);
}

/** @param {Random} r */
function randomInt32(r) {
  return r.chance(0.3) ? r.pick([0, 1, -1, 2 ** 31 - 1, -(2 ** 31)]) : r.int(2 ** 32) - 2 ** 31;
}

/**
 * @typedef {{ anyIds?: boolean, maxDepth?: number, references?: boolean }} GenerateOptions
 *   anyIds: ids of any length (the protobuf decoder keeps them; OTLP/JSON only takes 16 or 8 bytes);
 *   references: whether attributes may name dictionary strings by index (profiles resolve them, so a random
 *   index would be out of range; the other signals ignore them)
 */

/**
 * @param {Random} r
 * @param {protobuf.Field} field
 * @param {number} depth
 * @param {Required<GenerateOptions>} options
 */
function randomScalar(r, field, depth, options) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return randomMessage(r, resolved, depth + 1, options);
  if (resolved instanceof protobuf.Enum) {
    const values = Object.values(resolved.values);
    return r.chance(0.9) ? r.pick(values) : r.pick([values.length + 3, -1, 2 ** 31 - 1]);
  }
  if (LONG_TYPES.has(field.type)) return randomInt64(r, UNSIGNED_LONG_TYPES.has(field.type));
  switch (field.type) {
    case 'string':
      return randomString(r);
    case 'bool':
      return r.chance(0.5);
    case 'double':
    case 'float':
      return randomDouble(r);
    case 'uint32':
    case 'fixed32':
      return randomUint32(r);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return randomInt32(r);
    case 'bytes': {
      const idBytes = ID_BYTES.get(field.name);
      if (idBytes !== undefined) {
        if (r.chance(0.15)) return '';
        return r.bytes(options.anyIds ? r.int(21) : idBytes).toString('hex');
      }
      return r.bytes(r.chance(0.05) ? 2000 : r.int(40)).toString('base64');
    }
    default:
      throw new Error(`no generator for ${field.type}`);
  }
}

/** Messages that hold items: these get longer lists, the rest short ones. */
const CONTAINERS = /^(resource(Spans|Metrics|Logs)|scope(Spans|Metrics|Logs)|spans|metrics|logRecords|dataPoints)$/;

/**
 * A random message of `type` in the canonical model's notation, with fields left out at random.
 * @param {Random} r
 * @param {protobuf.Type} type
 * @param {number} depth
 * @param {Required<GenerateOptions>} options
 * @returns {Record<string, any>}
 */
function randomMessage(r, type, depth, options) {
  /** @type {Record<string, any>} */
  const out = {};
  const tooDeep = depth >= options.maxDepth;
  for (const oneof of type.oneofsArray) {
    const members = oneof.fieldsArray.filter(
      (f) => !(tooDeep && f.resolvedType instanceof protobuf.Type) && (options.references || !REFERENCE_FIELDS.has(`${type.name}.${f.name}`)),
    );
    // proto3 `optional` is a oneof of one field: set or unset, both meaningful.
    if (members.length === 0 || r.chance(0.2)) continue;
    const field = r.pick(members);
    out[field.name] = randomScalar(r, field, depth, options);
  }
  for (const field of type.fieldsArray) {
    if (field.partOf) continue;
    if (r.chance(0.2)) continue;
    if (!options.references && REFERENCE_FIELDS.has(`${type.name}.${field.name}`)) continue;
    if (field.repeated) {
      const isMessage = field.resolvedType instanceof protobuf.Type;
      const max = tooDeep && isMessage ? 0 : CONTAINERS.test(field.name) ? 4 : 3;
      const n = r.chance(0.02) && !isMessage ? 200 : r.int(max + 1);
      const list = [];
      for (let i = 0; i < n; i++) list.push(randomScalar(r, field, depth, options));
      out[field.name] = list;
    } else if (!(tooDeep && field.resolvedType instanceof protobuf.Type)) {
      out[field.name] = randomScalar(r, field, depth, options);
    }
  }
  return out;
}

/**
 * @param {Random} r
 * @param {protobuf.Type} type an Export*ServiceRequest
 * @param {GenerateOptions} [options]
 */
export function randomRequest(r, type, options = {}) {
  return randomMessage(r, type, 0, { anyIds: options.anyIds ?? false, maxDepth: options.maxDepth ?? 7, references: options.references ?? true });
}

// ---- an encoder that uses the liberties the protobuf format allows ----

/** @param {protobuf.Field} field */
function wireType(field) {
  if (field.resolvedType instanceof protobuf.Type) return 2;
  if (field.resolvedType instanceof protobuf.Enum) return 0;
  switch (field.type) {
    case 'double':
    case 'fixed64':
    case 'sfixed64':
      return 1;
    case 'fixed32':
    case 'sfixed32':
    case 'float':
      return 5;
    case 'string':
    case 'bytes':
      return 2;
    default:
      return 0;
  }
}

const SCALAR_WRITERS = new Set(['double', 'fixed64', 'sfixed64', 'int64', 'uint64', 'sint64', 'fixed32', 'uint32', 'int32', 'sint32', 'bool', 'string']);

/** @param {protobuf.Writer} w @param {protobuf.Field} field @param {any} value @param {Random} r */
function writeScalar(w, field, value, r) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    w.fork();
    writeFields(w, resolved, value, r);
    w.ldelim();
    return;
  }
  if (resolved instanceof protobuf.Enum) {
    w.int32(value);
    return;
  }
  if (field.type === 'bytes') {
    w.bytes(Buffer.from(value, ID_BYTES.has(field.name) ? 'hex' : 'base64'));
    return;
  }
  if (!SCALAR_WRITERS.has(field.type)) throw new Error(`no writer for ${field.type}`);
  // protobufjs names each scalar writer after its type.
  const arg = LONG_TYPES.has(field.type) ? Long.fromString(String(value), UNSIGNED_LONG_TYPES.has(field.type)) : value;
  /** @type {any} */ (w)[field.type](arg);
}

/** An unknown field, as a newer sender's schema would add: every wire type, groups included. @param {protobuf.Writer} w @param {Random} r */
function writeUnknown(w, r) {
  const number = 100 + r.int(1000);
  switch (r.int(5)) {
    case 0:
      w.uint32((number << 3) | 0).uint64(Long.fromString(randomInt64(r, true), true));
      break;
    case 1:
      w.uint32((number << 3) | 1).fixed64(Long.fromBits(r.int(2 ** 32), r.int(2 ** 32), true));
      break;
    case 2:
      w.uint32((number << 3) | 2).bytes(r.bytes(r.int(20)));
      break;
    case 3:
      w.uint32((number << 3) | 3);
      w.uint32((1 << 3) | 0).uint32(r.int(1000));
      w.uint32((2 << 3) | 2).string('in a group');
      w.uint32((number << 3) | 4);
      break;
    default:
      w.uint32((number << 3) | 5).fixed32(r.int(2 ** 32));
  }
}

/** @param {protobuf.Writer} w @param {protobuf.Type} type @param {Record<string, any>} object @param {Random} r */
function writeFields(w, type, object, r) {
  const fields = type.fieldsArray.filter((f) => object[f.name] !== undefined && object[f.name] !== null);
  // Field order on the wire is not guaranteed; a decoder must not depend on it.
  for (let i = fields.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [fields[i], fields[j]] = [fields[j], fields[i]];
  }
  for (const field of fields) {
    if (r.chance(0.05)) writeUnknown(w, r);
    const value = object[field.name];
    const wt = wireType(field);
    if (!field.repeated) {
      w.uint32((field.id << 3) | wt);
      writeScalar(w, field, value, r);
      continue;
    }
    if (value.length === 0) continue;
    // Repeated numbers come packed (proto3's default) or one tag per value (what proto2 senders do).
    if (wt !== 2 && r.chance(0.5)) {
      w.uint32((field.id << 3) | 2).fork();
      for (const v of value) writeScalar(w, field, v, r);
      w.ldelim();
    } else {
      for (const v of value) {
        w.uint32((field.id << 3) | wt);
        writeScalar(w, field, v, r);
      }
    }
  }
  if (r.chance(0.05)) writeUnknown(w, r);
}

/**
 * Encodes `object` (canonical notation) with shuffled field order, explicit default values, unpacked
 * repeated numbers and unknown fields of every wire type: all legal, none of it what protobufjs writes.
 * @param {Random} r @param {protobuf.Type} type @param {Record<string, any>} object
 * @returns {Uint8Array}
 */
export function encodeLiberally(r, type, object) {
  const w = protobuf.Writer.create();
  writeFields(w, type, object, r);
  return w.finish();
}

// ---- OTLP/JSON in its accepted variants ----

/** @param {string} name */
function snakeCase(name) {
  return name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

/**
 * @param {Random} r @param {protobuf.Field} field @param {any} value
 * @param {{ snake: boolean }} style
 */
function jsonScalar(r, field, value, style) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return jsonMessage(r, resolved, value, style);
  if (resolved instanceof protobuf.Enum) {
    const name = resolved.valuesById[value];
    return name !== undefined && r.chance(0.3) ? name : value;
  }
  if (LONG_TYPES.has(field.type)) {
    const n = BigInt(value);
    const safe = n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);
    return safe && r.chance(0.5) ? Number(n) : value;
  }
  if (field.type === 'double') {
    if (Number.isNaN(value) || value === Infinity || value === -Infinity) return String(value);
    // JSON.stringify turns -0 into 0; the string keeps the sign and is accepted for doubles.
    if (Object.is(value, -0)) return '-0';
    return value;
  }
  if (field.type === 'bytes' && value !== '') {
    if (ID_BYTES.has(field.name)) return r.chance(0.2) ? value.toUpperCase() : value;
    if (r.chance(0.3)) return Buffer.from(value, 'base64').toString('base64url');
  }
  return value;
}

/** @param {protobuf.Field} field @param {any} value */
function isDefault(field, value) {
  if (field.partOf) return false;
  if (field.repeated) return value.length === 0;
  return value === '' || (value === 0 && !Object.is(value, -0)) || value === false || value === '0';
}

/**
 * @param {Random} r @param {protobuf.Type} type @param {Record<string, any>} object
 * @param {{ snake: boolean }} style
 */
function jsonMessage(r, type, object, style) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    if (value === undefined) continue;
    if (isDefault(field, value) && r.chance(0.7)) continue;
    const key = style.snake ? snakeCase(field.name) : field.name;
    out[key] = field.repeated ? value.map((/** @type {any} */ v) => jsonScalar(r, field, v, style)) : jsonScalar(r, field, value, style);
  }
  if (r.chance(0.05)) out.someFutureField = { nested: [1, 'two'] };
  return out;
}

/**
 * OTLP/JSON text for a canonical request: lowerCamelCase or snake_case keys, 64-bit integers as numbers
 * when that is exact, enum names now and then, defaults left out or written, unknown fields added.
 * @param {Random} r @param {protobuf.Type} type @param {Record<string, any>} canonical
 * @param {{ snake: boolean }} style
 * @returns {string}
 */
export function toOtlpJson(r, type, canonical, style) {
  return JSON.stringify(jsonMessage(r, type, canonical, style));
}
