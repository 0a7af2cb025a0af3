// Traces as the query engine sees them: a summary per stored trace, worked out from the trace index's span
// lists (spans stored unbuilt are read only for the few fields a summary needs) and kept on the list
// until its spans change, so asking again over every stored trace costs only what arrived since.
import { compareNanos, durationNanos } from '../otlp/model.js';
import { attributeFilter, containsIgnoringCase, durationFilters, durationNs, traceIdMatcher } from './filters.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../store/store.js').TraceSpans} TraceSpans
 * @typedef {import('./params.js').ParsedQuery} ParsedQuery
 *
 * @typedef {object} TraceSummary one row of GET /api/traces
 * @property {string} traceId
 * @property {string} rootName the root span's name, or the first stored span's when the root is missing
 * @property {string} rootService the service of that span
 * @property {boolean} hasRoot whether a span without a parent is stored
 * @property {string[]} services every service with a span in the trace, in order of arrival
 * @property {number} spanCount
 * @property {number} errorCount spans with status code 2
 * @property {string} startTimeUnixNano the earliest start, "0" when no span has one
 * @property {string} endTimeUnixNano the latest end
 * @property {string} durationNanos
 *
 * @typedef {{ head: number, length: number, removals: number, services: Set<string>, root: { name: string, service: string }|null,
 *   first: { name: string, service: string }|null, spanCount: number, errorCount: number, start: string, end: string,
 *   startNs: number, durationNs: number }} Summary
 *   `startNs`, `durationNs`: the same as numbers, for sorting and comparing every stored trace without parsing
 */

/** @param {TraceSpans} trace @returns {Summary} */
export function summaryOf(trace) {
  const list = trace.entries;
  let s = /** @type {Summary|null} */ (trace.summary);
  if (s && s.head === trace.head && s.removals === trace.removals && s.length === list.length) return s;
  // Spans of a trace mostly arrive after the first: fold in only the new ones when nothing was taken out.
  const extend = s !== null && s.head === trace.head && s.removals === trace.removals && s.length < list.length;
  if (!s || !extend) {
    s = { head: trace.head, length: trace.head, removals: trace.removals, services: new Set(), root: null, first: null, spanCount: 0, errorCount: 0, start: '0', end: '0', startNs: 0, durationNs: 0 };
  }
  for (let i = s.length; i < list.length; i++) {
    const entry = /** @type {Entry} */ (list[i]);
    const span = entry.outline();
    const service = entry.ctx.service;
    s.services.add(service);
    s.spanCount++;
    if (span.statusCode === 2) s.errorCount++;
    s.first ??= { name: span.name, service };
    if (span.isRoot && s.root === null) s.root = { name: span.name, service };
    if (span.startTimeUnixNano !== '0' && (s.start === '0' || compareNanos(span.startTimeUnixNano, s.start) < 0)) s.start = span.startTimeUnixNano;
    if (compareNanos(s.end, span.endTimeUnixNano) < 0) s.end = span.endTimeUnixNano;
  }
  s.length = list.length;
  s.startNs = Number(s.start);
  s.durationNs = durationNs(s.start, s.end);
  trace.summary = s;
  return s;
}

/** @param {TraceSpans} trace @returns {TraceSummary} */
export function traceRow(trace) {
  const s = summaryOf(trace);
  const named = s.root ?? s.first ?? { name: '', service: '' };
  return {
    traceId: trace.traceId,
    rootName: named.name,
    rootService: named.service,
    hasRoot: s.root !== null,
    services: [...s.services],
    spanCount: s.spanCount,
    errorCount: s.errorCount,
    startTimeUnixNano: s.start,
    endTimeUnixNano: s.end,
    durationNanos: durationNanos(s.start, s.end),
  };
}

/** @param {TraceSpans} trace @returns {Entry[]} */
export const spansOf = (trace) => /** @type {Entry[]} */ (trace.entries.slice(trace.head));

/** @param {TraceSpans} t */
const traceDurationNs = (t) => summaryOf(t).durationNs;

/**
 * @param {ParsedQuery} q
 * @returns {{ label: string, match: (trace: TraceSpans) => boolean }[]} cheapest first: the summary's fields, then spans
 */
export function traceFilters(q) {
  /** @type {{ label: string, match: (trace: TraceSpans) => boolean }[]} */
  const out = [];
  if (q.traceId !== undefined) {
    const is = traceIdMatcher(q.traceId);
    out.push({ label: `traceId=${q.traceId}`, match: (t) => is(t.traceId) });
  }
  if (q.service !== undefined) out.push({ label: `service=${q.service}`, match: (t) => summaryOf(t).services.has(q.service) });
  if (q.error !== undefined) out.push({ label: `error=${q.error}`, match: (t) => summaryOf(t).errorCount > 0 === q.error });
  out.push(...durationFilters(q, traceDurationNs));
  if (q.from !== undefined) out.push({ label: `from=${q.from}`, match: (t) => compareNanos(summaryOf(t).start, q.from) >= 0 });
  if (q.to !== undefined) out.push({ label: `to=${q.to}`, match: (t) => compareNanos(summaryOf(t).start, q.to) <= 0 });
  if (q.rootName !== undefined) out.push({ label: `rootName=${q.rootName}`, match: (t) => rootName(t) === q.rootName });
  if (q.rootNameContains !== undefined) {
    const has = containsIgnoringCase(q.rootNameContains);
    out.push({ label: `rootNameContains=${q.rootNameContains}`, match: (t) => has(rootName(t)) });
  }
  if (q.name !== undefined) out.push({ label: `name=${q.name}`, match: anySpan((e) => e.outline().name === q.name) });
  if (q.nameContains !== undefined) {
    const has = containsIgnoringCase(q.nameContains);
    out.push({ label: `nameContains=${q.nameContains}`, match: anySpan((e) => has(e.outline().name)) });
  }
  for (const f of q.attributes.map(attributeFilter)) out.push({ label: f.label, match: anySpan(f.match) });
  return out;
}

/** @param {TraceSpans} t */
function rootName(t) {
  const s = summaryOf(t);
  return (s.root ?? s.first)?.name ?? '';
}

/** @param {(e: Entry) => boolean} test @returns {(t: TraceSpans) => boolean} */
function anySpan(test) {
  return (t) => {
    for (let i = t.head; i < t.entries.length; i++) if (test(/** @type {Entry} */ (t.entries[i]))) return true;
    return false;
  };
}

/** What a traces page is sorted by, highest first; ties go to the trace that arrived last. @type {Record<string, (t: TraceSpans) => number>} */
export const TRACE_SORT_KEYS = {
  arrival: (t) => t.firstSeq,
  start: (t) => summaryOf(t).startNs,
  duration: traceDurationNs,
  spans: (t) => summaryOf(t).spanCount,
};

