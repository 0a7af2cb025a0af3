// Attribute tables (RESOURCE_ATTRS, SPAN_ATTRS, LOG_ATTRS, ...): one row per attribute, `parent_id` naming the row
// of the table it belongs to. The producer sorts rows by key and value and, within a run of the same key and
// value, gives parent_id as the difference from the previous row's.
import { column, stepEndsAt } from './columns.js';
import { valueAt, valueColumns } from './any-value.js';

/** @typedef {[string, import('./any-value.js').AnyValue][]} Attributes */

/**
 * @param {any} batch a RecordBatch, or undefined when the batch had no such table
 * @returns {import('./columns.js').Steps<Map<number, Attributes>>}
 */
export function* attributesByParent(batch) {
  /** @type {Map<number, Attributes>} */
  const byParent = new Map();
  if (!batch) return byParent;
  const parent = column(batch, 'parent_id');
  const key = column(batch, 'key');
  const values = valueColumns(batch);
  let prevKey = null;
  let prevType = null;
  /** @type {unknown} */
  let prevSame = undefined;
  let prevParent = 0;
  for (let row = 0; row < batch.numRows; row++) {
    const k = key(row) ?? '';
    const type = values.type(row);
    const { value, same } = valueAt(values, row);
    const raw = Number(parent(row) ?? 0);
    const id = k === prevKey && type === prevType && same === prevSame ? prevParent + raw : raw;
    prevKey = k;
    prevType = type;
    prevSame = same;
    prevParent = id;
    let list = byParent.get(id);
    if (!list) byParent.set(id, (list = []));
    list.push([k, value]);
    if (stepEndsAt(row)) yield;
  }
  return byParent;
}

/**
 * Ids given as differences from the previous non-null id of their column (events', links' and attributes'
 * own ids, span ids).
 */
export class DeltaIds {
  constructor() {
    this.last = 0;
  }

  /** @param {number|null} delta @returns {number|null} */
  next(delta) {
    if (delta === null) return null;
    this.last += Number(delta);
    return this.last;
  }
}
