// The resource and scope around each item: the main table's `resource` and `scope` struct columns, whose `id`s
// are differences from the previous row's. Rows come grouped by resource, then scope; a change of either id
// starts a new ResourceX or ScopeX message.
import { column, stepEndsAt, struct } from './columns.js';

/**
 * @typedef {import('./otlp-writer.js').OtlpWriter} OtlpWriter
 * @typedef {Map<number, import('./attributes.js').Attributes>} AttributeMap
 * @typedef {{ resource: AttributeMap, scope: AttributeMap }} EnvelopeAttributes
 */

/**
 * Writes the `Export*ServiceRequest` of a main table: the rootField (1) messages, each with their resource (1),
 * the scope groups (2: scope 1, items itemField, schema_url 3) and schema_url (3).
 * @param {OtlpWriter} w @param {any} batch
 * @param {EnvelopeAttributes} attrs
 * @param {number} itemField the item's field in its ScopeX message
 * @param {(row: number) => import('./columns.js').Steps<void>|void} writeItem writes the item of a row (its field
 *   tag is written around it), or returns the steps that write it (a metric of many data points)
 * @param {string} scopeSchemaUrl the main table's column of the scope's schema URL
 * @returns {import('./columns.js').Steps<void>}
 */
export function* writeEnvelopes(w, batch, attrs, itemField, writeItem, scopeSchemaUrl = 'schema_url') {
  const resource = struct(batch, 'resource');
  const resId = column(resource, 'id');
  const resUrl = column(resource, 'schema_url');
  const resDropped = column(resource, 'dropped_attributes_count');
  const scope = struct(batch, 'scope');
  const scopeId = column(scope, 'id');
  const scopeName = column(scope, 'name');
  const scopeVersion = column(scope, 'version');
  const scopeDropped = column(scope, 'dropped_attributes_count');
  const scopeUrl = column(batch, scopeSchemaUrl);

  let res = 0;
  let sc = 0;
  let prevRes = -1;
  let prevScope = -1;
  /** @type {string|null} */
  let openResourceUrl = null;
  /** @type {string|null} */
  let openScopeUrl = null;
  const closeScope = () => {
    if (openScopeUrl === null) return;
    w.string(3, openScopeUrl);
    w.end();
    openScopeUrl = null;
  };
  const closeResource = () => {
    closeScope();
    if (openResourceUrl === null) return;
    w.string(3, openResourceUrl);
    w.end();
    openResourceUrl = null;
  };
  for (let row = 0; row < batch.numRows; row++) {
    const resDelta = resId(row);
    res += Number(resDelta ?? 0);
    if (res !== prevRes) {
      closeResource();
      prevRes = res;
      prevScope = -1;
      w.begin(1);
      w.begin(1);
      if (resDelta !== null) w.attributes(1, attrs.resource.get(res));
      w.uint(2, resDropped(row) ?? 0);
      w.end();
      openResourceUrl = resUrl(row) ?? '';
    }
    const scopeDelta = scopeId(row);
    sc += Number(scopeDelta ?? 0);
    if (sc !== prevScope) {
      closeScope();
      prevScope = sc;
      w.begin(2);
      w.begin(1);
      w.string(1, scopeName(row) ?? '');
      w.string(2, scopeVersion(row) ?? '');
      if (scopeDelta !== null) w.attributes(3, attrs.scope.get(sc));
      w.uint(4, scopeDropped(row) ?? 0);
      w.end();
      openScopeUrl = scopeUrl(row) ?? '';
    }
    w.begin(itemField);
    const steps = writeItem(row);
    if (steps) yield* steps;
    w.end();
    if (stepEndsAt(row)) yield;
  }
  closeResource();
}
