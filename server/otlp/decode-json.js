// Decodes OTLP/JSON into the canonical model (docs/internals.md), driven by the proto schema's
// reflection so that the shape of every message is defined once, in proto/. It is the reference for what
// OTLP/JSON means; the receivers run it only on what json-proto.js declines to write as protobuf.
import { DecodeError } from './errors.js';
import { EMPTY_ARRAY } from './model.js';
import { requestType } from './schema.js';
import { ID_FIELDS } from './signals.js';

/**
 * Counted in messages, where the protobuf decoder counts nested values (64): a kvlist level is three
 * messages (AnyValue, KeyValueList, KeyValue) and the envelope about six, so anything the protobuf
 * decoder takes is taken here too.
 */
const MAX_DEPTH = 6 + 3 * 64;
/**
 * Attribute fields that name a string of the request's string table by index (common.proto): a signal with such a
 * table resolves them (its row's `resolveJsonStrings`), every other signal ignores them, so neither keeps them in
 * the model.
 */
const REFERENCE_FIELDS = new Set(['KeyValue.keyStrindex', 'AnyValue.stringValueStrindex']);
/** Whether the request being decoded keeps REFERENCE_FIELDS for resolving (its signal has a string table). */
let keepReferences = false;
const SIGNED_64 = new Set(['int64', 'sint64', 'sfixed64']);
const UNSIGNED_64 = new Set(['uint64', 'fixed64']);
const INT_32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT_32 = new Set(['uint32', 'fixed32']);
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** Carries the path to the offending field up to the request's root. */
class FieldError extends Error {
  /** @param {string} path @param {string} problem */
  constructor(path, problem) {
    super(problem);
    this.path = path;
    this.problem = problem;
  }
}

/**
 * @typedef {{
 *   name: string, snake: string, kind: string, repeated: boolean, oneof: string|null,
 *   idBytes: number, message: CompiledType|null, enumValues: Record<string, number>|null, reference: boolean,
 * }} CompiledField
 * @typedef {{ fields: CompiledField[], byName: Map<string, CompiledField>, empty: any }} CompiledType
 */

/** @type {Map<any, CompiledType>} */
const compiled = new Map();

/** The field's original (proto) name, which OTLP/JSON accepts too. @param {string} name */
export function snakeCase(name) {
  return name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

/** @param {any} field */
function kindOf(field) {
  const t = field.type;
  if (field.resolvedType && field.resolvedType.fieldsArray) return 'message';
  if (field.resolvedType) return 'enum';
  if (t === 'string' || t === 'bool' || t === 'bytes') return t;
  if (t === 'double' || t === 'float') return 'double';
  if (SIGNED_64.has(t)) return 'i64';
  if (UNSIGNED_64.has(t)) return 'u64';
  if (INT_32.has(t)) return 'i32';
  if (UINT_32.has(t)) return 'u32';
  throw new Error(`unsupported proto type ${t}`);
}

/** @param {any} type protobufjs Type @returns {CompiledType} */
function compile(type) {
  const known = compiled.get(type);
  if (known) return known;
  /** @type {CompiledType} */
  const out = { fields: [], byName: new Map(), empty: null };
  compiled.set(type, out);
  for (const field of type.fieldsArray) {
    field.resolve();
    const kind = kindOf(field);
    /** @type {CompiledField} */
    const f = {
      name: field.name,
      snake: snakeCase(field.name),
      kind,
      repeated: field.repeated,
      oneof: field.partOf ? field.partOf.name : null,
      idBytes: kind === 'bytes' ? (ID_FIELDS.get(field.name) ?? 0) : 0,
      message: null,
      enumValues: kind === 'enum' ? field.resolvedType.values : null,
      reference: REFERENCE_FIELDS.has(`${type.name}.${field.name}`),
    };
    out.fields.push(f);
    out.byName.set(f.name, f);
    out.byName.set(f.snake, f);
    if (kind === 'message') f.message = compile(field.resolvedType);
  }
  return out;
}

/** The frozen default of a message type: what an unset sub-message decodes to. @param {CompiledType} type */
function emptyOf(type) {
  if (type.empty === null) type.empty = Object.freeze(message(type, {}, 0));
  return type.empty;
}

/** @param {any} v */
function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

/** @param {any} v @param {boolean} signed */
function int64(v, signed) {
  let n;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new FieldError('', `expected an integer, got ${describe(v)}`);
    n = BigInt(v);
  } else if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) {
    n = BigInt(v);
  } else {
    throw new FieldError('', `expected a 64-bit integer (a number or a decimal string), got ${describe(v)}`);
  }
  if (signed ? n < I64_MIN || n > I64_MAX : n < 0n || n > U64_MAX)
    throw new FieldError('', `${v} is out of range for a ${signed ? 'signed' : 'unsigned'} 64-bit integer`);
  return n.toString();
}

/** @param {any} v @param {boolean} signed */
function int32(v, signed) {
  const n = typeof v === 'string' && /^-?\d{1,10}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new FieldError('', `expected an integer, got ${describe(v)}`);
  if (signed ? n < -2147483648 || n > 2147483647 : n < 0 || n > 4294967295)
    throw new FieldError('', `${n} is out of range for a ${signed ? 'signed' : 'unsigned'} 32-bit integer`);
  // An integer has no negative zero (`-0` in the text is 0, as protobuf carries it).
  return n === 0 ? 0 : n;
}

/** @param {any} v */
function double(v) {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
  throw new FieldError('', `expected a number, got ${describe(v)}`);
}

const HEX = /^[0-9a-fA-F]*$/;
/** Base64, standard or URL-safe, as Buffer decodes it. */
export const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/;

/** @param {any} v @param {number} idBytes */
function bytes(v, idBytes) {
  if (typeof v !== 'string') throw new FieldError('', `expected a string, got ${describe(v)}`);
  if (idBytes) {
    if (v === '') return '';
    if (v.length !== idBytes * 2 || !HEX.test(v)) throw new FieldError('', `expected ${idBytes * 2} hex characters, got ${describe(v)}`);
    return v.toLowerCase();
  }
  if (!BASE64.test(v)) throw new FieldError('', `expected base64, got ${describe(v)}`);
  return Buffer.from(v, 'base64').toString('base64');
}

/** @param {CompiledField} f @param {any} v @param {number} depth */
function scalar(f, v, depth) {
  switch (f.kind) {
    case 'string':
      if (typeof v !== 'string') throw new FieldError('', `expected a string, got ${describe(v)}`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw new FieldError('', `expected true or false, got ${describe(v)}`);
      return v;
    case 'double':
      return double(v);
    case 'i64':
      return int64(v, true);
    case 'u64':
      return int64(v, false);
    case 'i32':
      return int32(v, true);
    case 'u32':
      return int32(v, false);
    case 'enum': {
      const values = /** @type {Record<string, number>} */ (f.enumValues);
      if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(values, v)) return values[v];
      return int32(v, true);
    }
    case 'bytes':
      return bytes(v, f.idBytes);
    default:
      return message(/** @type {CompiledType} */ (f.message), v, depth + 1);
  }
}

/** @param {CompiledType} type @param {any} json @param {number} depth */
function message(type, json, depth) {
  if (depth > MAX_DEPTH) throw new FieldError('', 'nested too deep');
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new FieldError('', `expected an object, got ${describe(json)}`);
  /** @type {any} */
  const out = {};
  /** @type {Map<string, string>|null} */
  let oneofsSet = null;
  for (const f of type.fields) {
    let v = json[f.name];
    let seen = f.name;
    if (v === undefined || v === null) {
      v = json[f.snake];
      seen = f.snake;
    }
    if (f.reference && (!keepReferences || v === undefined || v === null)) continue;
    if (v === undefined || v === null) {
      if (f.oneof) continue;
      out[f.name] = f.repeated ? EMPTY_ARRAY : defaultOf(f);
      continue;
    }
    try {
      if (f.oneof) {
        oneofsSet ??= new Map();
        const other = oneofsSet.get(f.oneof);
        if (other) throw new FieldError('', `only one of ${other} and ${f.name} may be set`);
        oneofsSet.set(f.oneof, f.name);
      }
      if (f.repeated) {
        if (!Array.isArray(v)) throw new FieldError('', `expected an array, got ${describe(v)}`);
        if (v.length === 0) {
          out[f.name] = EMPTY_ARRAY;
        } else {
          const list = new Array(v.length);
          for (let i = 0; i < v.length; i++) {
            try {
              list[i] = scalar(f, v[i], depth);
            } catch (err) {
              throw prefix(err, `[${i}]`);
            }
          }
          out[f.name] = list;
        }
      } else {
        out[f.name] = scalar(f, v, depth);
      }
    } catch (err) {
      throw prefix(err, '.' + seen);
    }
  }
  return out;
}

/** @param {CompiledField} f */
function defaultOf(f) {
  switch (f.kind) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'i64':
    case 'u64':
      return '0';
    case 'message':
      return emptyOf(/** @type {CompiledType} */ (f.message));
    default:
      return 0;
  }
}

/** @param {unknown} err @param {string} segment */
function prefix(err, segment) {
  if (err instanceof FieldError) {
    err.path = segment + err.path;
    return err;
  }
  return err;
}

/** A number token of 16 or more digits right after `:`, `[` or `,`: one JSON.parse would round. */
const LONG_INTEGER = /[:[,]\s*-?\d{16}/;

/**
 * OTLP/JSON lets senders write 64-bit integers as plain numbers; JSON.parse would round those past 2^53.
 * Wraps every integer token of 16 or more digits (outside strings) in quotes first, so it arrives as the
 * exact decimal string the model keeps.
 * @param {string} text
 */
export function quoteLongIntegers(text) {
  if (!LONG_INTEGER.test(text)) return text;
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c !== 45 && (c < 48 || c > 57)) continue;
    let j = i + (c === 45 ? 1 : 0);
    while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
    // A fraction or exponent makes it a double, which stays a number.
    let k = j;
    if (text.charCodeAt(k) === 46) {
      k++;
      while (k < text.length && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
    }
    if (text.charCodeAt(k) === 101 || text.charCodeAt(k) === 69) {
      k++;
      if (text.charCodeAt(k) === 43 || text.charCodeAt(k) === 45) k++;
      while (k < text.length && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
    }
    if (k === j && j - i >= 16) {
      out += text.slice(from, i) + '"' + text.slice(i, j) + '"';
      from = j;
    }
    i = k - 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * @param {import('./signals.js').Signal} signal
 * @param {string|Buffer} text
 * @returns {any} the canonical Export*ServiceRequest
 */
export function decodeJson(signal, text) {
  const source = typeof text === 'string' ? text : text.toString('utf8');
  let json;
  try {
    json = source.trim() === '' ? {} : JSON.parse(quoteLongIntegers(source));
  } catch (err) {
    throw new DecodeError(`invalid JSON: ${/** @type {Error} */ (err).message}`);
  }
  keepReferences = signal.resolveJsonStrings !== undefined;
  try {
    const request = message(compile(requestType(signal.name)), json, 0);
    signal.resolveJsonStrings?.(request, (path, problem) => new FieldError(path, problem));
    return request;
  } catch (err) {
    if (err instanceof FieldError) {
      const where = err.path ? err.path.replace(/^\./, '') : 'request';
      throw new DecodeError(`invalid OTLP/JSON at ${where}: ${err.problem}`);
    }
    throw err;
  } finally {
    keepReferences = false;
  }
}
