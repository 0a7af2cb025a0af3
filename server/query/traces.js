// Traces as the query engine sees them: a summary per stored trace, worked out from the trace index's span
// lists (spans stored unbuilt are read only for the few fields a summary needs) and kept on the list
// until its spans change, so asking again over every stored trace costs only what arrived since.
import { compareNanos, durationNanos } from '../otlp/model.js';
import { nanosText } from '../otlp/items.js';
import { attributeFilter, containsIgnoringCase, durationFilters, durationNs, traceIdMatcher } from './filters.js';

/**
 * @typedef {import('../otlp/model.js').SpanEntry} SpanEntry
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
 * @typedef {{ head: number, length: number, removals: number, compacted: number, services: Map<string, number>, root: { name: string, service: string }|null,
 *   first: { name: string, service: string }|null, spanCount: number, errorCount: number, start: string, end: string,
 *   startNs: number, durationNs: number, facts: Facts, finished: boolean }} Summary
 *   `services`: how many spans of each; `startNs`, `durationNs`: as numbers, for sorting and comparing
 *   every stored trace without parsing; `finished`: whether the fields from all spans were worked out after the
 *   last spans were read
 * @typedef {{ service: (string|undefined)[], error: (boolean|undefined)[], roots: Window, starts: Window, ends: Window }} Facts
 *   what each span (by its place in the trace's list) adds, so that spans leaving from the front can be
 *   taken out again: eviction takes them oldest first, and the same trace may keep growing meanwhile
 */

/**
 * Places in a trace's list with a time (a 64-bit count of nanoseconds, as its 32-bit halves), oldest first, the front
 * leaving as spans are evicted. Kept monotonic (each time beyond the ones before it), its front is the least (or
 * greatest) of what is stored.
 */
class Window {
  /**
   * @param {1|-1|0} keeps 1: the least time (a new time no later than the last makes it useless); -1: the greatest;
   * 0: every place (the roots, whose times are not compared)
   */
  constructor(keeps) {
    this.keeps = keeps;
    /** @type {{ at: number, hi: number, lo: number }[]} */
    this.items = [];
    this.head = 0;
  }

  /** @param {number} at @param {number} hi @param {number} lo */
  push(at, hi, lo) {
    const items = this.items;
    const keeps = this.keeps;
    while (keeps !== 0 && items.length > this.head) {
      const last = items[items.length - 1];
      const order = hi !== last.hi ? (hi < last.hi ? -1 : 1) : lo < last.lo ? -1 : lo > last.lo ? 1 : 0;
      if (order * keeps > 0) break;
      items.pop();
    }
    items.push({ at, hi, lo });
  }

  /** Drops what is before `head` in the list. @param {number} head */
  drop(head) {
    while (this.head < this.items.length && this.items[this.head].at < head) this.head++;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The list lost its first `by` places: what is left moves down. @param {number} by */
  shift(by) {
    this.drop(by);
    for (let i = this.head; i < this.items.length; i++) this.items[i].at -= by;
  }

  /** @returns {{ at: number, hi: number, lo: number }|undefined} */
  front() {
    return this.items[this.head];
  }

  /** The front's time in decimal, '0' when there is none. */
  frontText() {
    const front = this.items[this.head];
    return front ? nanosText(front.hi, front.lo) : '0';
  }
}

/** @param {TraceSpans} trace @returns {Summary} */
function emptySummary(trace) {
  return {
    head: trace.head,
    length: trace.head,
    removals: trace.removals,
    compacted: trace.compacted,
    services: new Map(),
    root: null,
    first: null,
    spanCount: 0,
    errorCount: 0,
    start: '0',
    end: '0',
    startNs: 0,
    durationNs: 0,
    finished: false,
    facts: {
      service: [],
      error: [],
      roots: new Window(0),
      starts: new Window(1),
      ends: new Window(-1),
    },
  };
}

/** @param {SpanEntry|undefined} entry */
const named = (entry) => (entry ? { name: entry.outline().name, service: entry.ctx.service } : null);

/**
 * The summary of a trace, brought up to date with what arrived and what was evicted since it was last
 * worked out: a cost of the spans that changed, not of the trace.
 * @param {TraceSpans} trace @returns {Summary}
 */
export function summaryOf(trace) {
  const list = trace.entries;
  const kept = /** @type {Summary|null} */ (trace.summary);
  if (kept && upToDate(kept, trace)) return kept;
  const s = readSpans(trace, Infinity);
  const { facts } = s;
  for (const w of [facts.roots, facts.starts, facts.ends]) w.drop(s.head);
  s.spanCount = s.length - s.head;
  s.first = named(list[s.head]);
  const root = facts.roots.front();
  s.root = root ? named(list[root.at]) : null;
  s.start = facts.starts.frontText();
  s.end = facts.ends.frontText();
  s.startNs = Number(s.start);
  s.durationNs = durationNs(s.start, s.end);
  s.finished = true;
  return s;
}

/** @param {Summary} s @param {TraceSpans} trace */
const upToDate = (s, trace) =>
  s.finished && s.head === trace.head && s.removals === trace.removals && s.compacted === trace.compacted && s.length === trace.entries.length;

/** Spans a summary reads at most between two looks at the clock, when a scan brings a large trace's up to date. */
const SPANS_PER_STEP = 2000;
/** Times a summary read in steps may start again from nothing (the first step is one) before the rest is read at once. */
const MAX_RESTARTS = 3;

/**
 * How far the trace's list moved down since its kept summary was read, or null when the summary must start again:
 * there is none, spans were taken out other than from the front (every place moved), or the list now starts before
 * where the summary does.
 * @param {TraceSpans} trace @returns {number|null}
 */
function keptShift(trace) {
  const s = /** @type {Summary|null} */ (trace.summary);
  if (!s || s.removals !== trace.removals) return null;
  const by = trace.compacted - s.compacted;
  return trace.head < s.head - by ? null : by;
}

/** How many spans `summaryOf` would read now: all of them when it must start again. @param {TraceSpans} trace */
function unread(trace) {
  const by = keptShift(trace);
  if (by === null) return trace.entries.length - trace.head;
  return trace.entries.length - Math.max(/** @type {Summary} */ (trace.summary).length - by, trace.head);
}

/**
 * Brings a trace's summary up to date in steps, giving way between them once the slice is spent: the first look
 * at a trace of a hundred thousand spans (a test's one trace id, sent again and again) reads them all, about
 * 200 ms in one step. Returns nothing when there is little to read, so that a scan awaits only for such traces.
 * @param {TraceSpans} trace @param {import('./scan.js').Slicer} slicer @returns {Promise<void>|undefined}
 */
export function readSummaryInSteps(trace, slicer) {
  if (unread(trace) <= SPANS_PER_STEP) return undefined;
  return (async () => {
    // Spans keep arriving between the steps (a test sending the same trace ids again and again), and a trace that
    // loses spans from its middle starts its summary again: both are bounded, and `summaryOf` reads what is left.
    let steps = 4 * Math.ceil(unread(trace) / SPANS_PER_STEP) + 8;
    let restarts = 0;
    while (steps-- > 0 && restarts <= MAX_RESTARTS && unread(trace) > SPANS_PER_STEP) {
      const before = trace.summary;
      if (readSpans(trace, SPANS_PER_STEP) !== before) restarts++;
      if (slicer.spent()) await slicer.pause();
    }
  })();
}

/**
 * Reads up to `most` spans into the trace's summary, after taking out what left, and keeps it on the trace; the
 * fields worked out from all of them wait for `summaryOf`.
 * @param {TraceSpans} trace @param {number} most @returns {Summary}
 */
function readSpans(trace, most) {
  const list = trace.entries;
  const by = keptShift(trace);
  const s = by === null ? emptySummary(trace) : /** @type {Summary} */ (trace.summary);
  if (by) {
    // The list cut off spans that left from the front: the summary moves down with it rather than start again,
    // which for a trace that keeps growing (a test's one trace id, sent again and again) read a hundred thousand
    // spans at once.
    leave(s, by);
    s.head -= by;
    s.length -= by;
    s.facts.service.splice(0, by);
    s.facts.error.splice(0, by);
    for (const w of [s.facts.roots, s.facts.starts, s.facts.ends]) w.shift(by);
    s.compacted = trace.compacted;
  }
  const { facts, services } = s;
  leave(s, trace.head);
  const end = Math.min(list.length, s.length + most);
  for (let i = s.length; i < end; i++) {
    const entry = /** @type {SpanEntry} */ (list[i]);
    const span = entry.facts();
    const service = entry.ctx.service;
    facts.service[i] = service;
    services.set(service, (services.get(service) ?? 0) + 1);
    const error = span.statusCode === 2;
    facts.error[i] = error;
    if (error) s.errorCount++;
    if (span.isRoot) facts.roots.push(i, 0, 0);
    if ((span.startHi | span.startLo) !== 0) facts.starts.push(i, span.startHi, span.startLo);
    facts.ends.push(i, span.endHi, span.endLo);
  }
  s.length = end;
  s.finished = false;
  trace.summary = s;
  return s;
}

/** Takes the spans before `head` out of the summary: they left from the front. @param {Summary} s @param {number} head */
function leave(s, head) {
  const { facts, services } = s;
  for (let i = s.head; i < Math.min(head, s.length); i++) {
    const service = /** @type {string} */ (facts.service[i]);
    const left = /** @type {number} */ (services.get(service)) - 1;
    if (left === 0) services.delete(service);
    else services.set(service, left);
    if (facts.error[i]) s.errorCount--;
    facts.service[i] = undefined;
    facts.error[i] = undefined;
  }
  s.length = Math.max(s.length, head);
  s.head = head;
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
    services: [...s.services.keys()],
    spanCount: s.spanCount,
    errorCount: s.errorCount,
    startTimeUnixNano: s.start,
    endTimeUnixNano: s.end,
    durationNanos: durationNanos(s.start, s.end),
  };
}

/** @param {TraceSpans} trace @returns {SpanEntry[]} */
export const spansOf = (trace) => /** @type {SpanEntry[]} */ (trace.entries.slice(trace.head));

/** @param {TraceSpans} t */
const traceDurationNs = (t) => summaryOf(t).durationNs;

/**
 * A trace of this few spans with no summary yet is matched by service by reading its spans: a scan of a store of
 * a hundred thousand one-span traces built and kept a summary for each (about 1 KB), which cost a waiter's first
 * look ~150 MB and every collection after it the time to mark them.
 */
const READ_SPANS_UP_TO = 8;

/**
 * So is a trace whose summary is further behind than a step: a scan reads such a summary in steps first
 * (`readSummaryInSteps`), but gives up on a trace that keeps losing spans from its middle while it reads, and reading
 * the rest at once held the loop 80 ms (a snapshot by service while a client sent the same trace ids again and again).
 * Its spans' contexts say the service without decoding them.
 * @param {TraceSpans} t @param {string} service
 */
function hasService(t, service) {
  const { entries, head } = t;
  if ((t.summary !== null || entries.length - head > READ_SPANS_UP_TO) && unread(t) <= SPANS_PER_STEP) return summaryOf(t).services.has(service);
  for (let i = head; i < entries.length; i++) if (entries[i]?.ctx.service === service) return true;
  return false;
}

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
  if (q.service !== undefined) {
    const service = q.service;
    out.push({ label: `service=${service}`, match: (t) => hasService(t, service) });
  }
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

/** @param {(e: SpanEntry) => boolean} test @returns {(t: TraceSpans) => boolean} */
function anySpan(test) {
  return (t) => {
    for (let i = t.head; i < t.entries.length; i++) if (test(/** @type {SpanEntry} */ (t.entries[i]))) return true;
    return false;
  };
}

/**
 * A trace's earliest start, as a number, as its summary has it. A trace with no summary keeps only the earliest start
 * of its spans, read from those that arrived since it was last asked: the Traces view ranks every stored trace by
 * start once a second, and building a summary of each new trace (a score of objects, kept while the trace is) cost
 * the server more in collections than in reading the spans. A trace with a summary, or one that lost spans since,
 * has it from its summary; the summary reads a large trace in steps (`readSummaryInSteps`).
 * @param {TraceSpans} t
 */
export function startNsOf(t) {
  if (t.summary !== null) return summaryOf(t).startNs;
  if (t.earliestRead < 0 || t.earliestHead !== t.head || t.earliestCompacted !== t.compacted || t.earliestRemovals !== t.removals) {
    if (t.earliestRead >= 0) return summaryOf(t).startNs;
    t.earliestRead = t.head;
    t.earliestHead = t.head;
    t.earliestCompacted = t.compacted;
    t.earliestRemovals = t.removals;
    t.earliestHi = -1;
  }
  const list = t.entries;
  let hi = t.earliestHi;
  let lo = t.earliestLo;
  for (let i = t.earliestRead; i < list.length; i++) {
    const { hi: startHi, lo: startLo } = /** @type {SpanEntry} */ (list[i]).startHalves();
    if ((startHi | startLo) === 0) continue;
    if (hi < 0 || startHi < hi || (startHi === hi && startLo < lo)) {
      hi = startHi;
      lo = startLo;
    }
  }
  t.earliestRead = list.length;
  t.earliestHi = hi;
  t.earliestLo = lo;
  return hi < 0 ? 0 : hi * 4294967296 + lo;
}

/** What a traces page is sorted by, highest first; ties go to the trace that arrived last. @type {Record<string, (t: TraceSpans) => number>} */
export const TRACE_SORT_KEYS = {
  arrival: (t) => t.firstSeq,
  start: startNsOf,
  duration: traceDurationNs,
  spans: (t) => t.entries.length - t.head,
};
