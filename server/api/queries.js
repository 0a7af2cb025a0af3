// Query filters over the store, shared by the REST routes and anything else that selects stored items.
import { plainValue } from './views.js';
import { attributeIn } from '../otlp/decode-proto.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {(entry: Entry) => boolean} Predicate
 */

/** `attr.<key>=<value>` pairs of a query string. @param {Record<string, any>} query */
function attributeFilters(query) {
  /** @type {[string, string][]} */
  const out = [];
  for (const [name, value] of Object.entries(query)) {
    if (name.startsWith('attr.') && name.length > 5) out.push([name.slice(5), String(value)]);
  }
  return out;
}

/** @param {any} value an AnyValue, or undefined when the attribute is absent @param {string} expected */
function valueIs(value, expected) {
  if (value === undefined) return false;
  const v = plainValue(value);
  return (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)) === expected;
}

/**
 * Item attributes first, then the resource's: a filter on `service.version` works either way.
 * @param {[string, string][]} filters @returns {Predicate[]}
 */
function attributePredicates(filters) {
  return filters.map(
    ([key, value]) =>
      (entry) => valueIs(entry.attribute(key), value) || valueIs(attributeIn(entry.ctx.resource.attributes, key), value),
  );
}

/** @param {Record<string, any>} query @returns {Predicate[]} */
function common(query) {
  /** @type {Predicate[]} */
  const out = [];
  if (query.service) out.push((e) => e.ctx.service === query.service);
  return out;
}

/** @param {Record<string, any>} query @returns {Predicate[]} */
export function spanPredicates(query) {
  const out = common(query);
  if (query.name) out.push((e) => e.outline().name === query.name);
  if (query.traceId) out.push((e) => e.traceId === String(query.traceId).toLowerCase());
  if (query.error === true || query.error === 'true') out.push((e) => e.outline().statusCode === 2);
  out.push(...attributePredicates(attributeFilters(query)));
  return out;
}

/** @param {Record<string, any>} query @returns {Predicate[]} */
export function logPredicates(query) {
  const out = common(query);
  if (query.severity !== undefined) out.push((e) => e.item.severityNumber >= Number(query.severity));
  if (query.traceId) out.push((e) => e.traceId === String(query.traceId).toLowerCase());
  if (query.body) {
    const needle = String(query.body);
    out.push((e) => {
      const v = plainValue(e.item.body);
      return (typeof v === 'string' ? v : JSON.stringify(v) ?? '').includes(needle);
    });
  }
  out.push(...attributePredicates(attributeFilters(query)));
  return out;
}

/** @param {Record<string, any>} query @returns {Predicate[]} */
export function metricPredicates(query) {
  const out = common(query);
  if (query.name) out.push((e) => e.ctx.metric?.name === query.name);
  out.push(...attributePredicates(attributeFilters(query)));
  return out;
}

/** @template T @param {((item: T) => boolean)[]} predicates @returns {(item: T) => boolean} */
export function allOf(predicates) {
  return (entry) => {
    for (const p of predicates) if (!p(entry)) return false;
    return true;
  };
}

/**
 * Entries matching a query, in arrival order; `limit` keeps the newest ones.
 * @param {Iterable<Entry>} entries @param {Predicate} match @param {number} limit
 */
export function select(entries, match, limit) {
  /** @type {Entry[]} */
  const found = [];
  for (const entry of entries) if (match(entry)) found.push(entry);
  return { total: found.length, entries: found.length > limit ? found.slice(found.length - limit) : found };
}
