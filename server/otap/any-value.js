// Attribute values: the OTAP attribute tables' typed columns, and the CBOR that carries arrays and maps
// (otel-arrow serializes those as one CBOR item: indefinite-length arrays and maps, strings, integers, floats,
// booleans, byte strings, null for an empty value).
import { column } from './columns.js';

/**
 * An AnyValue as the writer takes it.
 * @typedef {{ t: 'empty' } | { t: 'str', v: string } | { t: 'int', v: bigint } | { t: 'double', v: number }
 *   | { t: 'bool', v: boolean } | { t: 'bytes', v: Uint8Array } | { t: 'array', v: AnyValue[] }
 *   | { t: 'kvlist', v: [string, AnyValue][] }} AnyValue
 */

export class ValueError extends Error {}

/** pcommon.ValueType numbers, as the `type` columns carry them. */
const EMPTY = 0,
  STR = 1,
  INT = 2,
  DOUBLE = 3,
  BOOL = 4,
  MAP = 5,
  SLICE = 6,
  BYTES = 7;

/** @type {AnyValue} */
export const EMPTY_VALUE = Object.freeze({ t: 'empty' });

/**
 * The columns of a table whose rows are typed values (attributes, log bodies).
 * @param {any} parent
 */
export function valueColumns(parent) {
  return {
    type: column(parent, 'type'),
    str: column(parent, 'str'),
    int: column(parent, 'int'),
    double: column(parent, 'double'),
    bool: column(parent, 'bool'),
    bytes: column(parent, 'bytes'),
    ser: column(parent, 'ser'),
  };
}

/**
 * @param {ReturnType<typeof valueColumns>} c @param {number} row
 * @returns {{ value: AnyValue, same: unknown }} `same`: what equal values share, for the parent-id deltas; the
 *   producer never counts arrays, maps or empty values equal, so theirs is a new object each time
 */
export function valueAt(c, row) {
  const type = c.type(row);
  switch (type) {
    case STR: {
      const v = c.str(row) ?? '';
      return { value: { t: 'str', v }, same: v };
    }
    case INT: {
      const v = BigInt(c.int(row) ?? 0);
      return { value: { t: 'int', v }, same: v };
    }
    case DOUBLE: {
      const v = c.double(row) ?? 0;
      return { value: { t: 'double', v }, same: v };
    }
    case BOOL: {
      const v = Boolean(c.bool(row));
      return { value: { t: 'bool', v }, same: v };
    }
    case BYTES: {
      const v = c.bytes(row) ?? new Uint8Array(0);
      return { value: { t: 'bytes', v }, same: Buffer.from(v).toString('latin1') };
    }
    case MAP:
    case SLICE: {
      const ser = c.ser(row) ?? new Uint8Array(0);
      return { value: fromCbor(ser), same: {} };
    }
    case EMPTY:
    case null:
      return { value: EMPTY_VALUE, same: {} };
    default:
      throw new ValueError(`row ${row} has value type ${type}, which is none of pcommon's`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** @param {Uint8Array} bytes @returns {AnyValue} */
export function fromCbor(bytes) {
  if (bytes.length === 0) return EMPTY_VALUE;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const BREAK = Symbol('break');
  /** @param {number} n */
  const need = (n) => {
    if (at + n > bytes.length) throw new ValueError('the CBOR of an array or map value is truncated');
  };
  /** @param {number} info @returns {bigint|number} */
  const arg = (info) => {
    if (info < 24) return info;
    if (info === 24) return (need(1), bytes[at++]);
    if (info === 25) return (need(2), (at += 2), view.getUint16(at - 2));
    if (info === 26) return (need(4), (at += 4), view.getUint32(at - 4));
    if (info === 27) return (need(8), (at += 8), view.getBigUint64(at - 8));
    throw new ValueError(`CBOR additional information ${info} is not supported`);
  };
  /** @param {number} depth @returns {AnyValue|typeof BREAK} */
  const item = (depth) => {
    if (depth > 64) throw new ValueError('the CBOR of a value nests deeper than 64');
    need(1);
    const head = bytes[at++];
    const major = head >> 5;
    const info = head & 31;
    if (major === 7) {
      if (info === 31) return BREAK;
      if (info === 20 || info === 21) return { t: 'bool', v: info === 21 };
      if (info === 22 || info === 23) return EMPTY_VALUE;
      if (info === 25) return (need(2), (at += 2), { t: 'double', v: half(view.getUint16(at - 2)) });
      if (info === 26) return (need(4), (at += 4), { t: 'double', v: view.getFloat32(at - 4) });
      if (info === 27) return (need(8), (at += 8), { t: 'double', v: view.getFloat64(at - 8) });
      throw new ValueError(`CBOR simple value ${info} is not supported`);
    }
    if (major === 0) return { t: 'int', v: BigInt.asIntN(64, BigInt(arg(info))) };
    if (major === 1) return { t: 'int', v: BigInt.asIntN(64, -1n - BigInt(arg(info))) };
    if (major === 2 || major === 3) {
      const n = Number(arg(info));
      need(n);
      const raw = bytes.subarray(at, (at += n));
      if (major === 2) return { t: 'bytes', v: raw };
      try {
        return { t: 'str', v: utf8.decode(raw) };
      } catch {
        throw new ValueError('a CBOR text string is not valid UTF-8');
      }
    }
    if (major === 4 || major === 5) {
      const count = info === 31 ? Infinity : Number(arg(info));
      /** @type {any[]} */
      const out = [];
      for (let i = 0; i < count; i++) {
        const first = item(depth + 1);
        if (first === BREAK) {
          if (count !== Infinity) throw new ValueError('a CBOR break inside a definite-length item');
          break;
        }
        if (major === 4) out.push(first);
        else {
          if (first.t !== 'str') throw new ValueError('a CBOR map key is not a string');
          const v = item(depth + 1);
          if (v === BREAK) throw new ValueError('a CBOR map ends between a key and its value');
          out.push([first.v, v]);
        }
      }
      return major === 4 ? { t: 'array', v: out } : { t: 'kvlist', v: out };
    }
    throw new ValueError(`CBOR major type ${major} is not supported`);
  };
  const value = item(0);
  if (value === BREAK) throw new ValueError('the CBOR of a value is a lone break');
  return value;
}

/** @param {number} h an IEEE 754 half-precision float's bits */
function half(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}
