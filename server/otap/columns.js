// Reading OTAP's Arrow columns. A column may be missing (the producer leaves out columns with no values), plain or
// dictionary-encoded; every reader answers null where a value is null or its column absent.
import { Type } from 'apache-arrow';

/** @typedef {(row: number) => any} Column */

const NONE = () => null;

/**
 * A named child of a record batch or struct column. 64-bit timestamps and durations are read from their raw
 * values: apache-arrow's getter turns timestamps into milliseconds.
 * @param {any} parent a RecordBatch or a struct Vector, or null @param {string} name @returns {Column}
 */
export function column(parent, name) {
  const vector = parent?.getChild(name);
  if (!vector) return NONE;
  const type = vector.type.typeId === Type.Dictionary ? vector.type.dictionary : vector.type;
  if (type.typeId === Type.Timestamp && vector.type.typeId !== Type.Dictionary) return rawInt64(vector);
  return (row) => vector.get(row);
}

/** @param {any} vector @returns {Column} */
function rawInt64(vector) {
  const [data] = vector.data;
  const values = /** @type {BigInt64Array} */ (data.values);
  const offset = data.offset;
  return (row) => (vector.isValid(row) ? values[offset + row] : null);
}

/** The struct column `name` itself, for its children. @param {any} batch @param {string} name */
export function struct(batch, name) {
  return batch?.getChild(name) ?? null;
}

/** @param {any} v a value read from a column, as an unsigned 64-bit integer (nanoseconds) */
export function nanos(v) {
  return v === null ? 0n : BigInt.asUintN(64, BigInt(v));
}
