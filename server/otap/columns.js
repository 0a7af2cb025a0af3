// Reading OTAP's Arrow columns. A column may be missing (the producer leaves out columns with no values), plain or
// dictionary-encoded; every reader answers null where a value is null or its column absent.
//
// Numbers are read from the column's typed array and dictionary values from a cache that grows with the dictionary:
// apache-arrow's `get` walks a visitor per value and starts a new memo of a dictionary at each delta, which made
// reading the tables cost more than everything else a batch does.
import { Type, Vector, makeData } from 'apache-arrow';

/** @typedef {(row: number) => any} Column */

/**
 * Rows a loop over a table goes through between two looks at the clock. A request is written from its tables in
 * steps that take turns with all other sliced work (../turns.js): a log record with a few attributes takes about
 * 15 µs to write, and a batch of 50,000 of them held the event loop 0.5-1.2 s written at once.
 */
const ROWS_A_STEP = 64;

/** Whether a loop over a table's rows should yield after `row`, the last of a step. @param {number} row */
export const stepEndsAt = (row) => row % ROWS_A_STEP === ROWS_A_STEP - 1;

/**
 * A piece of work done in steps: it yields between them, and returns its result once done.
 * @template T
 * @typedef {Generator<void, T, void>} Steps
 */

const NONE = () => null;

/** Types whose typed array holds the values as the column means them (timestamps and durations in nanoseconds). */
const RAW = new Set([Type.Int, Type.Float, Type.Timestamp, Type.Duration]);

/**
 * A dictionary's values, each decoded the first time a row asks for it: deltas append chunks to a dictionary and keep
 * its first, so what was decoded for earlier batches stays. Decoded all at once, the 50,000 new strings of a large
 * batch's delta held the event loop for up to 30 ms before the batch's first row was written.
 */
class DecodedDictionary {
  constructor() {
    /** @type {unknown[]} its values by index, undefined where not decoded yet */
    this.values = [];
    /** @type {Column[]} */
    this.readers = [];
    /** @type {number[]} the index each chunk starts at */
    this.starts = [];
  }

  /** Takes in the chunks added since the last call. @param {any} dictionary a Vector */
  grow(dictionary) {
    while (this.readers.length < dictionary.data.length) {
      const chunk = dictionary.data[this.readers.length];
      this.starts.push(this.values.length);
      this.readers.push(reader(chunk, new Vector([chunk])));
      for (let i = 0; i < chunk.length; i++) this.values.push(undefined);
    }
    return this;
  }

  /** @param {number} index */
  at(index) {
    const value = this.values[index];
    return value !== undefined ? value : this.decode(index);
  }

  /** @param {number} index */
  decode(index) {
    if (!(index >= 0 && index < this.values.length)) return undefined;
    let chunk = this.starts.length - 1;
    while (this.starts[chunk] > index) chunk--;
    return (this.values[index] = this.readers[chunk](index - this.starts[chunk]));
  }
}

/** @type {WeakMap<object, DecodedDictionary>} by their first chunk */
const decoded = new WeakMap();

/** @param {any} dictionary a Vector @returns {DecodedDictionary} */
function decodedDictionary(dictionary) {
  const first = dictionary.data[0];
  let cache = decoded.get(first);
  if (!cache) decoded.set(first, (cache = new DecodedDictionary()));
  return cache.grow(dictionary);
}

/**
 * The same dictionary in one chunk, its decoded values kept: apache-arrow adds a chunk per delta and rebuilds the
 * dictionary's chunk index and memo at each, which grows with the stream. The chunks' bytes are copied end to end
 * (offsets rebased), not encoded again. Null for a dictionary with nulls, which is left as it is.
 * @param {any} dictionary a Vector of strings or bytes @returns {any}
 */
export function compacted(dictionary) {
  const chunks = dictionary.data;
  if (chunks.some((/** @type {any} */ d) => d.nullCount > 0)) return null;
  const { values } = decodedDictionary(dictionary);
  const type = dictionary.type;
  const length = values.length;
  let data;
  if (type.typeId === Type.FixedSizeBinary) {
    const width = type.byteWidth;
    const bytes = new Uint8Array(length * width);
    let at = 0;
    for (const d of chunks) {
      bytes.set(d.values.subarray(d.offset * width, (d.offset + d.length) * width), at);
      at += d.length * width;
    }
    data = makeData({ type, length, data: bytes });
  } else {
    let size = 0;
    for (const d of chunks) size += d.valueOffsets[d.offset + d.length] - d.valueOffsets[d.offset];
    const offsets = new Int32Array(length + 1);
    const bytes = new Uint8Array(size);
    let at = 0;
    let row = 0;
    for (const d of chunks) {
      const from = d.valueOffsets[d.offset];
      const to = d.valueOffsets[d.offset + d.length];
      bytes.set(d.values.subarray(from, to), at);
      for (let i = 1; i <= d.length; i++) offsets[++row] = at + d.valueOffsets[d.offset + i] - from;
      at += to - from;
    }
    data = makeData({ type, length, valueOffsets: offsets, data: bytes });
  }
  const vector = new Vector([data]);
  // A cache of its own, whose values (those decoded so far) are the old one's: the batch just read still refers to the
  // old dictionary. Its indices are the same, so what is left is decoded from the one chunk.
  const one = new DecodedDictionary();
  one.values = values;
  one.readers.push(reader(data, vector));
  one.starts.push(0);
  decoded.set(data, one);
  return vector;
}

/** @param {any} data one chunk @returns {(row: number) => boolean} */
function validity(data) {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return () => true;
  const offset = data.offset;
  return (row) => ((bitmap[(offset + row) >> 3] >> ((offset + row) & 7)) & 1) === 1;
}

/** @param {any} data @param {any} vector the same chunk as a Vector @returns {Column} */
function reader(data, vector) {
  const valid = validity(data);
  if (data.type.typeId === Type.Dictionary) {
    const values = decodedDictionary(data.dictionary);
    const indices = data.values;
    const offset = data.offset;
    return (row) => (valid(row) ? values.at(indices[offset + row]) : null);
  }
  if (RAW.has(data.type.typeId)) {
    const values = data.values;
    const offset = data.offset;
    return (row) => (valid(row) ? values[offset + row] : null);
  }
  return (row) => (valid(row) ? vector.get(row) : null);
}

/**
 * A named child of a record batch or struct column.
 * @param {any} parent a RecordBatch or a struct Vector, or null @param {string} name @returns {Column}
 */
export function column(parent, name) {
  const vector = parent?.getChild(name);
  if (!vector) return NONE;
  return reader(vector.data[0], vector);
}

/**
 * A list column of numbers, each row's values as an array ([] where null or absent), sliced from the child's
 * typed array.
 * @param {any} parent @param {string} name @returns {(row: number) => any[]}
 */
export function listColumn(parent, name) {
  const vector = parent?.getChild(name);
  if (!vector) return () => [];
  const data = vector.data[0];
  const child = data.children[0];
  if (!RAW.has(child.type.typeId) || child.nullCount > 0) return (row) => [...(vector.get(row) ?? [])];
  const valid = validity(data);
  const offsets = data.valueOffsets;
  const values = child.values;
  return (row) => (valid(row) ? Array.from(values.subarray(child.offset + offsets[data.offset + row], child.offset + offsets[data.offset + row + 1])) : []);
}

/** The struct column `name` itself, for its children. @param {any} batch @param {string} name */
export function struct(batch, name) {
  return batch?.getChild(name) ?? null;
}

/** @param {any} v a value read from a column, as an unsigned 64-bit integer (nanoseconds) */
export function nanos(v) {
  return v === null ? 0n : BigInt.asUintN(64, BigInt(v));
}
