// What each parsed filter means for one stored item: predicates and sort keys over store entries and
// journal entries. Items stored unbuilt answer from their bytes (entry.outline(), entry.time(),
// entry.attribute() and the like, store.js), so a filter over every stored item builds none of them.
import { plainValue } from './views.js';
import { attributeIn, nanosBound } from '../otlp/items.js';
import { compareNanos } from '../otlp/model.js';

/**
 * @typedef {import('../otlp/model.js').Entry} Entry
 * @typedef {import('../otlp/model.js').SpanEntry} SpanEntry
 * @typedef {import('../otlp/model.js').LogEntry} LogEntry
 * @typedef {import('../otlp/model.js').PointEntry} PointEntry
 * @typedef {import('../otlp/model.js').TimedEntry} TimedEntry
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {import('./params.js').ParsedQuery} ParsedQuery
 * @typedef {import('./params.js').AttributeFilter} AttributeFilter
 * @typedef {import('../otlp/items.js').NanosBound} NanosBound
 */

/**
 * A filter, and its label as the query string wrote it.
 * @template {Entry} [E=Entry] @typedef {{ label: string, match: (entry: E) => boolean }} Filter
 */

/** @param {any} value an AnyValue, or undefined when absent @param {string|null} expected null: present at all */
function valueIs(value, expected) {
  if (value === undefined) return false;
  if (expected === null) return true;
  const v = plainValue(value);
  return (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)) === expected;
}

/** Item attributes first, then the resource's: a filter on `service.version` works either way. @param {AttributeFilter} f @returns {Filter<Entry>} */
export function attributeFilter({ key, value }) {
  return {
    label: value === null ? `attr.${key} present` : `attr.${key}=${value}`,
    match: (entry) => valueIs(entry.attribute(key), value) || valueIs(attributeIn(entry.ctx.resource.attributes, key), value),
  };
}

/** @param {string} needle @returns {(text: string) => boolean} */
export function containsIgnoringCase(needle) {
  const lower = needle.toLowerCase();
  return (text) => text.toLowerCase().includes(lower);
}

/** @param {string} id a full trace id or a prefix @returns {(traceId: string) => boolean} */
export function traceIdMatcher(id) {
  return id.length === 32 ? (t) => t === id : (t) => t.startsWith(id);
}

/** the digits a double holds exactly (2^53 is 16 digits long) */
const EXACT_DIGITS = 15;

/**
 * Nanoseconds between two model timestamps, 0 when either is unset. Epoch nanoseconds (19 digits) are past what a
 * double holds exactly, so subtracting them as numbers is off by up to 256 ns: timestamps that share all but their
 * last 15 digits (any two within about eleven days) subtract those digits; others go through BigInt.
 * @param {string} start @param {string} end
 */
export function durationNs(start, end) {
  if (start === '0' || end === '0') return 0;
  const cut = start.length - EXACT_DIGITS;
  if (cut <= 0 && end.length <= EXACT_DIGITS) return Number(end) - Number(start);
  if (cut > 0 && end.length === start.length && end.startsWith(start.slice(0, cut))) return Number(end.slice(cut)) - Number(start.slice(cut));
  return Number(BigInt(end) - BigInt(start));
}

/** @param {SpanEntry} e */
const spanDurationNs = (e) => {
  const o = e.outline();
  return durationNs(o.startTimeUnixNano, o.endTimeUnixNano);
};

/** A log record's time, or its observed time when it has none. @param {LogEntry} e */
export const logTime = (e) => e.time();

/**
 * Filters shared by spans, logs and data points: service, attributes, a time range.
 * @template {Entry} E
 * @param {ParsedQuery} q @param {(e: E, bound: NanosBound) => number} timeOrder how an item's time
 *   compares with a bound (its sign) @param {Filter<E>[]} own the signal's own filters
 * @returns {Filter<E>[]}
 */
function withCommon(q, timeOrder, own) {
  /** @type {Filter<E>[]} */
  const out = [];
  if (q.service !== undefined) out.push({ label: `service=${q.service}`, match: (e) => e.ctx.service === q.service });
  out.push(...own);
  if (q.from !== undefined) {
    const from = nanosBound(q.from);
    out.push({ label: `from=${q.from}`, match: (e) => timeOrder(e, from) >= 0 });
  }
  if (q.to !== undefined) {
    const to = nanosBound(q.to);
    out.push({ label: `to=${q.to}`, match: (e) => timeOrder(e, to) <= 0 });
  }
  out.push(...q.attributes.map(attributeFilter));
  return out;
}

/** @param {TimedEntry} e @param {NanosBound} bound */
const itemTimeOrder = (e, bound) => e.timeOrder(bound);

/** @param {ParsedQuery} q @returns {Filter<SpanEntry>[]} */
export function spanFilters(q) {
  /** @type {Filter<SpanEntry>[]} */
  const own = [];
  if (q.name !== undefined) own.push({ label: `name=${q.name}`, match: (e) => e.outline().name === q.name });
  if (q.nameContains !== undefined) {
    const has = containsIgnoringCase(q.nameContains);
    own.push({ label: `nameContains=${q.nameContains}`, match: (e) => has(e.outline().name) });
  }
  if (q.traceId !== undefined) {
    const is = traceIdMatcher(q.traceId);
    own.push({ label: `traceId=${q.traceId}`, match: (e) => is(e.traceId) });
  }
  if (q.spanId !== undefined) own.push({ label: `spanId=${q.spanId}`, match: (e) => e.spanId() === q.spanId });
  if (q.requestId !== undefined) own.push({ label: `requestId=${q.requestId}`, match: (e) => e.ctx.requestId === q.requestId });
  if (q.error !== undefined) own.push({ label: `error=${q.error}`, match: (e) => (e.outline().statusCode === 2) === q.error });
  own.push(...durationFilters(q, spanDurationNs));
  return withCommon(q, (e, bound) => compareNanos(e.outline().startTimeUnixNano, bound.text), own);
}

/** @template T @param {ParsedQuery} q @param {(item: T) => number} durationOf @returns {{ label: string, match: (item: T) => boolean }[]} */
export function durationFilters(q, durationOf) {
  const out = [];
  if (q.minDurationMs !== undefined) {
    const min = q.minDurationMs * 1e6;
    out.push({ label: `minDurationMs=${q.minDurationMs}`, match: (/** @type {T} */ x) => durationOf(x) >= min });
  }
  if (q.maxDurationMs !== undefined) {
    const max = q.maxDurationMs * 1e6;
    out.push({ label: `maxDurationMs=${q.maxDurationMs}`, match: (/** @type {T} */ x) => durationOf(x) <= max });
  }
  return out;
}

/** @param {ParsedQuery} q @returns {Filter<LogEntry>[]} */
export function logFilters(q) {
  /** @type {Filter<LogEntry>[]} */
  const own = [];
  if (q.severity !== undefined) own.push({ label: `severity>=${q.severity}`, match: (e) => e.severityNumber() >= q.severity });
  if (q.maxSeverity !== undefined) own.push({ label: `severity<=${q.maxSeverity}`, match: (e) => e.severityNumber() <= q.maxSeverity });
  if (q.body !== undefined) {
    const has = containsIgnoringCase(q.body);
    own.push({
      label: `body=${q.body}`,
      match: (e) => {
        const v = plainValue(e.body());
        return has(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
      },
    });
  }
  if (q.traceId !== undefined) {
    const is = traceIdMatcher(q.traceId);
    own.push({ label: `traceId=${q.traceId}`, match: (e) => is(e.traceId) });
  }
  if (q.spanId !== undefined) own.push({ label: `spanId=${q.spanId}`, match: (e) => e.spanId() === q.spanId });
  if (q.requestId !== undefined) own.push({ label: `requestId=${q.requestId}`, match: (e) => e.ctx.requestId === q.requestId });
  return withCommon(q, itemTimeOrder, own);
}

/** @param {ParsedQuery} q @returns {Filter<PointEntry>[]} */
export function metricFilters(q) {
  /** @type {Filter<PointEntry>[]} */
  const own = [];
  if (q.name !== undefined) own.push({ label: `name=${q.name}`, match: (e) => e.ctx.metric?.name === q.name });
  if (q.nameContains !== undefined) {
    const has = containsIgnoringCase(q.nameContains);
    own.push({ label: `nameContains=${q.nameContains}`, match: (e) => has(e.ctx.metric?.name ?? '') });
  }
  return withCommon(q, itemTimeOrder, own);
}

const ANY_FAULT = new Set(['*', 'true', 'any']);
const NO_FAULT = new Set(['none', 'false']);

/** @param {ParsedQuery} q @returns {{ label: string, match: (e: JournalEntry) => boolean }[]} */
export function requestFilters(q) {
  /** @type {{ label: string, match: (e: JournalEntry) => boolean }[]} */
  const out = [];
  if (q.signal !== undefined) out.push({ label: `signal=${q.signal}`, match: (e) => e.signal === q.signal });
  if (q.transport !== undefined) out.push({ label: `transport=${q.transport}`, match: (e) => e.transport === q.transport });
  if (q.outcome !== undefined) out.push({ label: `outcome=${q.outcome}`, match: (e) => e.outcome === q.outcome });
  if (q.stream !== undefined) out.push({ label: `stream=${q.stream}`, match: (e) => e.otap?.stream === q.stream });
  if (q.service !== undefined) {
    const service = q.service;
    out.push({ label: `service=${service}`, match: (e) => e.services?.includes(service) ?? false });
  }
  if (q.fault !== undefined) {
    const f = q.fault;
    const match = ANY_FAULT.has(f)
      ? (/** @type {JournalEntry} */ e) => e.fault !== null
      : NO_FAULT.has(f)
        ? (/** @type {JournalEntry} */ e) => e.fault === null
        : (/** @type {JournalEntry} */ e) => e.fault !== null && (e.fault.id === f || e.fault.action === f);
    out.push({ label: `fault=${f}`, match });
  }
  return out;
}

/** @template T @param {{ match: (item: T) => boolean }[]} filters @returns {(item: T) => boolean} */
export function allOf(filters) {
  const predicates = filters.map((f) => f.match);
  if (predicates.length === 0) return () => true;
  // Waiters call this for every item that arrives: one filter is called directly.
  if (predicates.length === 1) return predicates[0];
  return (item) => {
    for (const p of predicates) if (!p(item)) return false;
    return true;
  };
}

/**
 * What a page is sorted by, highest first; ties go to the newest arrival.
 * @type {Record<string, Record<string, (e: any) => number>>}
 */
export const SORT_KEYS = {
  spans: { start: (/** @type {SpanEntry} */ e) => Number(e.outline().startTimeUnixNano), duration: spanDurationNs },
  logs: { time: (/** @type {LogEntry} */ e) => e.timeNumber() },
};
