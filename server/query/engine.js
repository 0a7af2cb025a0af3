// The query engine: one shape for every list (spans, traces, logs, metrics, profiles, requests) that the REST routes,
// the waiters (minCount) and the live feed's change notices all use. A page is chosen from everything
// stored, in slices that never hold the event loop for long, with an exact total and a cursor.
import { parseQuery, makeCursor, QueryError } from './params.js';
import { streamView } from '../store/otap-streams.js';
import { allOf, spanFilters, logFilters, metricFilters, requestFilters, traceIdMatcher, SORT_KEYS } from './filters.js';
import { scanNewestFirst, scanAll, Slicer, TopPage } from './scan.js';
import { traceFilters, traceRow, summaryOf, spansOf, readSummaryInSteps, TRACE_SORT_KEYS } from './traces.js';
import { spanView, logView, metricViews, metricKey, shortKey } from './views.js';
import { SAMPLE_WORDS, aggregateOf, profileFilters, profileRow, sampleItemView, snapshotOfSamples, typeOf } from './profiles.js';
import { keptFirstPage, MAX_KEPT } from './kept-page.js';
import { keptTracesPage } from './kept-traces.js';
import { signalByListKind } from '../otlp/signals.js';

/**
 * @typedef {import('./params.js').ListKind} ListKind
 * @typedef {import('./params.js').ItemListKind} ItemListKind
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {{ filters: (q: ParsedQuery) => import('./filters.js').Filter<any>[], view: (e: any) => any }} ItemList
 *   `any`: the kind of entry a list holds follows from its signal's row, which the types cannot see
 * @typedef {import('./params.js').ParsedQuery} ParsedQuery
 * @typedef {import('./scan.js').Progress} Progress
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../otlp/model.js').PointEntry} PointEntry
 * @typedef {import('../store/store.js').TraceSpans} TraceSpans
 * @typedef {import('../store/journal.js').Journal} Journal
 *
 * @typedef {{ count: number, total: number, items: any[], positions: number[][], reversed: boolean, next: number[]|null,
 *   extra?: Record<string, number>, traceIds?: Set<string> }} Page
 *   `count`: what minCount compares with (items, or data points for metrics); `total`: what the answer's
 *   total says; `items`: the page from the top of the sort down, rendered by the listing's `view`;
 *   `positions`: the cursor that continues after each item, so an answer may stop early and still lead
 *   to the rest; `reversed`: the answer lists them the other way round (order); `traceIds`: every
 *   matching trace (trace listings asked for it), so a waiter can follow them one by one
 * @typedef {{
 *   kind: ListKind, noun: string, field: string, query: ParsedQuery,
 *   feed: import('../otlp/signals.js').SignalName|'journal',
 *   perTrace: boolean,
 *   filters: { label: string, match: (item: any) => boolean }[],
 *   match: (item: any) => boolean,
 *   seqOf: (item: any) => number,
 *   view: (item: any) => any,
 *   page: (progress?: Progress, withTraceIds?: boolean) => Promise<Page>,
 *   all: () => Iterable<any>,
 *   prepare?: (item: any, slicer: import('./scan.js').Slicer) => Promise<void>|undefined,
 *   groups: { key: string, of: (item: any) => string, noun: string },
 *   aggregate?: () => Promise<any>,
 *   snapshot?: (matching: Entry[], take: (n: number, what: string) => void) => Promise<any[]>,
 * }} Listing
 *   `match` takes one item of the feed (a store entry or journal entry), or for trace listings
 *   (`perTrace`) a trace's span list; `all`: what the filters choose from, for explaining a miss;
 *   `prepare`: what a scan calls before matching an item, for work long enough to need slices of its own;
 *   `groups`: the filter that names where items come from, to say where the others came from; `aggregate`
 *   (profiles): every match merged into one stack tree and a table of functions; `snapshot`: the list's part
 *   of GET /api/snapshot, for a list that writes its own (verify/snapshot.js writes the others)
 * @typedef {{ has: Record<string, (e: Entry) => string>, describe: (e: Entry) => string, name: (e: Entry) => string }} ItemWords
 *   what /api/verify says of an item of a list that brings its own words: what it has for each filter, how it
 *   is described, and what it is called among what else arrived
 */

const BY_SERVICE = { key: 'service', of: (/** @type {Entry} */ e) => e.ctx.service, noun: 'services' };

/**
 * How each signal's item list filters and shows one stored item, by its row's listKind. Data points are listed
 * by metric instead (metricsListing): a signal whose row stores `points`.
 * @type {Partial<Record<ItemListKind, ItemList>>}
 */
const ITEM_LISTS = {
  spans: { filters: spanFilters, view: spanView },
  logs: { filters: logFilters, view: logView },
};

/** Whether a signal's items can be listed (and so verified and snapshotted): a signal may be stored only. @param {Signal} signal */
export const hasList = (signal) => signal.storedItems !== 'items' || Object.hasOwn(ITEM_LISTS, signal.listKind);
/**
 * How the live feed shows one stored item of a signal whose items it sends one by one; undefined for the others
 * (metrics go by metric). @param {Signal} signal @returns {((e: Entry) => any)|undefined}
 */
export const itemView = (signal) => (signal.storedItems === 'samples' ? sampleItemView : ITEM_LISTS[signal.listKind]?.view);
/**
 * The words verify uses for the items of a list that brings its own (itemWords); undefined for the lists
 * verify/select.js and verify.js describe themselves.
 * @param {string} kind a list kind @returns {ItemWords|undefined}
 */
export const itemWords = (kind) => (signalByListKind(kind)?.storedItems === 'samples' ? SAMPLE_WORDS : undefined);
/** The suffix of the list kind that merges a signal's stored samples (`<listKind>/aggregate`). */
const AGGREGATE = /\/aggregate$/;
/** @param {Entry} e */
const seqOfEntry = (e) => e.seq;

/**
 * @param {ListKind} kind @param {Record<string, unknown>} raw the query string
 * @param {{ store: Store, journal: Journal }} sources
 * @returns {Listing} @throws {import('./params.js').QueryError}
 */
export function listing(kind, raw, { store, journal }) {
  const q = parseQuery(kind, raw);
  if (kind === 'traces') return tracesListing(store, q);
  if (kind === 'requests') return requestsListing(journal, q);
  const signal = /** @type {Signal} */ (signalByListKind(kind.replace(AGGREGATE, '')));
  if (signal.storedItems === 'points') return metricsListing(store, q, signal);
  return signal.storedItems === 'samples' ? profilesListing(store, q, signal) : itemListing(store, q, signal);
}

/** @param {Store} store @param {ParsedQuery} q @param {Signal} signal @returns {Listing} */
function itemListing(store, q, signal) {
  const kind = signal.listKind;
  const { filters: filtersOf, view } = /** @type {ItemList} */ (ITEM_LISTS[kind]);
  const filters = filtersOf(q);
  const match = allOf(filters);
  const keyOf = q.sort === 'arrival' ? seqOfEntry : SORT_KEYS[kind][q.sort];
  // The trace index finds a trace's spans without a scan.
  const byTrace = signal.traceIndex && q.traceId !== undefined;
  const source = () => (byTrace ? spansOfTraces(store, q.traceId) : store.ring(signal.name));
  // A view asks for its first page again and again as items arrive: that page is kept (a waiter's scans are not).
  const kept = !byTrace && q.cursor === undefined && q.limit <= MAX_KEPT;
  return {
    kind,
    noun: signal.item.many,
    field: kind,
    query: q,
    feed: signal.name,
    perTrace: false,
    filters,
    match,
    seqOf: seqOfEntry,
    view,
    page: async (progress) => {
      if (kept && progress === undefined) {
        const { total, ...page } = await keptFirstPage(store.ring(signal.name), keptKey(kind, q), q.limit, match, keyOf, filters.length === 0, seqOfEntry);
        return { count: total, total, ...page, reversed: q.order === 'asc' };
      }
      let total = 0;
      const top = new TopPage(q.limit, q.cursor);
      await scanNewestFirst(
        source(),
        seqOfEntry,
        (e) => {
          if (!match(e)) return;
          total++;
          top.offer(keyOf(e), e.seq, e);
        },
        progress,
      );
      return { count: total, total, ...(await top.result()), reversed: q.order === 'asc' };
    },
    all: () => store.ring(signal.name),
    groups: BY_SERVICE,
  };
}

/** What tells one list's matches and their order from another's: its kind and filters, not its paging. @param {ListKind} kind @param {ParsedQuery} q */
function keptKey(kind, q) {
  const { limit, cursor, order, minCount, timeoutMs, ...filters } = q;
  return JSON.stringify([kind, filters]);
}

/** The stored spans of every trace whose id is this one or starts with it, oldest first. @param {Store} store @param {string} id */
function spansOfTraces(store, id) {
  const traces = tracesById(store, id);
  if (traces.length === 1) return spansOf(traces[0]);
  return traces.flatMap(spansOf).sort((a, b) => a.seq - b.seq);
}

/**
 * Traces whose id is this one or starts with it.
 * @param {Store} store @param {string} id @returns {TraceSpans[]}
 */
export function tracesById(store, id) {
  if (id.length === 32) {
    const trace = store.traces.get(id);
    return trace ? [trace] : [];
  }
  const is = traceIdMatcher(id);
  return [...store.eachTrace()].filter((t) => is(t.traceId));
}

/** @param {Store} store @param {ParsedQuery} q @returns {Listing} */
function tracesListing(store, q) {
  const filters = traceFilters(q);
  const match = allOf(filters);
  const keyOf = TRACE_SORT_KEYS[q.sort];
  return {
    kind: 'traces',
    noun: 'traces',
    field: 'traces',
    query: q,
    feed: 'traces',
    perTrace: true,
    filters,
    match,
    seqOf: (/** @type {TraceSpans} */ t) => t.firstSeq,
    view: traceRow,
    page: async (progress, withTraceIds = false) => {
      // As with items (itemListing), the first page a view asks for again and again is kept.
      if (progress === undefined && !withTraceIds && q.cursor === undefined && q.limit <= MAX_KEPT && q.traceId?.length !== 32) {
        const { total, ...page } = await keptTracesPage(store, keptKey('traces', q), q.limit, match, keyOf, filters.length === 0);
        return { count: total, total, ...page, reversed: q.order === 'asc' };
      }
      let total = 0;
      const traceIds = withTraceIds ? new Set() : undefined;
      const top = new TopPage(q.limit, q.cursor);
      const candidates = q.traceId !== undefined && q.traceId.length === 32 ? tracesById(store, q.traceId) : store.eachTrace();
      await scanAll(
        candidates,
        (/** @type {TraceSpans} */ t) => {
          if (t.head === t.entries.length || !match(t)) return;
          total++;
          traceIds?.add(t.traceId);
          top.offer(keyOf(t), t.firstSeq, t);
        },
        readSummaryInSteps,
      );
      return { count: total, total, ...(await top.result()), reversed: q.order === 'asc', traceIds };
    },
    all: () => store.eachTrace(),
    prepare: readSummaryInSteps,
    groups: {
      key: 'service',
      of: (/** @type {TraceSpans} */ t) => {
        const s = summaryOf(t);
        return (s.root ?? s.first)?.service ?? '';
      },
      noun: 'services',
    },
  };
}

/**
 * Metrics are counted by data point, the unit they arrive in: minCount=3 waits for three points. A page is
 * of metrics (one metric of one resource instance each), sorted by name, then service; only the metrics of
 * the page are turned into views, one at a time between slices.
 * @param {Store} store @param {ParsedQuery} q @param {Signal} signal @returns {Listing}
 */
function metricsListing(store, q, signal) {
  const filters = metricFilters(q);
  const match = allOf(filters);
  return {
    kind: signal.listKind,
    noun: signal.item.many,
    field: signal.listKind,
    query: q,
    feed: signal.name,
    perTrace: false,
    filters,
    match,
    seqOf: seqOfEntry,
    view: (m) => m,
    page: async (progress) => {
      /** @type {Map<string, PointEntry[]>} by identity, newest point first */
      const byIdentity = new Map();
      /** @type {any} */
      let lastCtx = null;
      /** @type {PointEntry[]} */
      let points = [];
      // A signal that stores points stores PointEntries: the row says so, the ring's type cannot.
      const ring = /** @type {import('./scan.js').Indexed<PointEntry>} */ (/** @type {unknown} */ (store.ring(signal.name)));
      await scanNewestFirst(
        ring,
        seqOfEntry,
        (e) => {
          if (!match(e)) return;
          // The points of one metric in one request share their context.
          if (e.ctx !== lastCtx) {
            lastCtx = e.ctx;
            const identity = metricKey(e);
            points = byIdentity.get(identity) ?? [];
            if (!points.length) byIdentity.set(identity, points);
          }
          points.push(e);
        },
        progress,
      );
      let metrics = [...byIdentity].map(([identity, entries]) => ({
        key: shortKey(identity),
        entries,
        name: entries[0].ctx.metric.name,
        service: entries[0].ctx.service,
      }));
      if (q.key !== undefined) metrics = metrics.filter((m) => m.key === q.key);
      const pointCount = metrics.reduce((n, m) => n + m.entries.length, 0);
      metrics.sort((a, b) => cmp(a.name, b.name) || cmp(a.service, b.service) || cmp(a.key, b.key));
      const from = q.cursor ? q.cursor[0] : 0;
      const slicer = new Slicer(1);
      const views = [];
      const positions = [];
      for (const m of metrics.slice(from, from + q.limit)) {
        views.push(metricViews(m.entries.reverse(), { points: q.points })[0]);
        positions.push([from + views.length, 0]);
        if (slicer.due()) await slicer.pause();
      }
      const next = from + q.limit < metrics.length ? [from + q.limit, 0] : null;
      return { count: pointCount, total: metrics.length, items: views, positions, reversed: q.order === 'desc', next, extra: { points: pointCount } };
    },
    all: () => store.ring(signal.name),
    groups: BY_SERVICE,
  };
}

/**
 * Profiles are counted by sample, the unit they are stored in: minCount=3 waits for three samples. A page is of
 * profiles, newest first, each with its matching samples.
 * @param {Store} store @param {ParsedQuery} q @param {Signal} signal a row that stores `samples` @returns {Listing}
 */
function profilesListing(store, q, signal) {
  const filters = profileFilters(q);
  const match = allOf(filters);
  /** The matching samples of each profile, newest profile first, each profile's samples oldest first. @param {Progress} [progress] */
  const byProfile = async (progress) => {
    /** @type {Map<any, Entry[]>} */
    const profiles = new Map();
    let count = 0;
    await scanNewestFirst(
      store.ring(signal.name),
      seqOfEntry,
      (e) => {
        if (!match(e)) return;
        count++;
        let samples = profiles.get(e.ctx);
        if (!samples) profiles.set(e.ctx, (samples = []));
        samples.push(e);
      },
      progress,
    );
    return { count, profiles: [...profiles.values()].map((samples) => samples.reverse()) };
  };
  return {
    kind: signal.listKind,
    noun: signal.item.many,
    field: signal.listKind,
    query: q,
    feed: signal.name,
    perTrace: false,
    filters,
    match,
    seqOf: seqOfEntry,
    view: (samples) => profileRow(samples, { samples: q.samples }),
    page: async (progress) => {
      const { count, profiles } = await byProfile(progress);
      const from = q.cursor ? q.cursor[0] : 0;
      const items = profiles.slice(from, from + q.limit);
      const positions = items.map((_, i) => [from + i + 1, 0]);
      const next = from + q.limit < profiles.length ? [from + q.limit, 0] : null;
      return { count, total: profiles.length, items, positions, reversed: q.order === 'asc', next, extra: { samples: count } };
    },
    aggregate: async () => {
      const { profiles } = await byProfile();
      const types = new Set(profiles.map((samples) => typeOf(samples[0].ctx.profile)));
      if (types.size > 1) throw new QueryError(`samples of ${types.size} types match (${[...types].join(', ')}), and their values do not add up: give type`);
      const [type = ':'] = types;
      const { samples, total, tree, functions } = await aggregateOf(profiles.flat());
      const [name, unit] = type.split(':');
      return { type: name, unit, profiles: profiles.length, samples, total, tree, functions: functions.slice(0, q.top) };
    },
    snapshot: snapshotOfSamples,
    all: () => store.ring(signal.name),
    groups: BY_SERVICE,
  };
}

/** @param {string} a @param {string} b */
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A row of the grouped request list: an OTAP stream, and how many of its batches still held match the filters.
 * @typedef {{ record: import('../store/otap-streams.js').StreamRecord, matched: number }} StreamRow
 */

/** The filters of the request list that a stream's batches have and the stream itself does not (it has signal and transport). */
const BATCH_FILTERS = ['outcome', 'fault', 'service'];

/** @param {Journal} journal @param {ParsedQuery} q @returns {Listing} */
function requestsListing(journal, q) {
  if (q.group !== undefined && q.stream !== undefined) throw new QueryError("give group or stream, not both: stream lists one stream's batches");
  const grouped = q.group === 'streams';
  const filters = requestFilters(q);
  const match = allOf(filters);
  const seqOf = (/** @type {import('../store/journal.js').JournalEntry} */ e) => journal.positionOf(e);
  const streamFiltersOnly = BATCH_FILTERS.every((name) => q[name] === undefined);
  /** @param {import('../store/otap-streams.js').StreamRecord} r a stream with no batch held still has a place when only its own filters are given */
  const standsAlone = (r) => streamFiltersOnly && (q.signal === undefined || r.meta.signal === q.signal) && (q.transport === undefined || q.transport === 'otap');
  return {
    kind: 'requests',
    noun: 'requests',
    field: 'requests',
    query: q,
    feed: 'journal',
    perTrace: false,
    filters,
    match,
    seqOf,
    view: (/** @type {any} */ e) => ('record' in e ? { stream: streamView(e.record), matched: e.matched } : e),
    page: async (progress) => {
      // As with items (itemListing), the first page a view asks for again and again is kept. A page that shows OTAP
      // streams is worked out from all their batches; grouped by stream with no stream held, it is the list without
      // grouping, but for batches whose stream is gone, which show in neither.
      if ((!grouped || journal.streams.records.size === 0) && progress === undefined && q.cursor === undefined && q.limit <= MAX_KEPT) {
        const kept = grouped ? (/** @type {import('../store/journal.js').JournalEntry} */ e) => !e.otap && match(e) : match;
        const { total, ...page } = await keptFirstPage(journal.entries, keptKey('requests', q), q.limit, kept, seqOf, !grouped && filters.length === 0, seqOf);
        return { count: total, total, ...page, reversed: q.order === 'asc' };
      }
      let total = 0;
      const top = new TopPage(q.limit, q.cursor);
      /** @type {Map<number, number>} */
      const matchedByStream = new Map();
      await scanNewestFirst(
        journal.entries,
        seqOf,
        (e) => {
          if (!match(e)) return;
          if (grouped && e.otap) {
            matchedByStream.set(e.otap.stream, (matchedByStream.get(e.otap.stream) ?? 0) + 1);
            return;
          }
          total++;
          const at = seqOf(e);
          top.offer(at, at, e);
        },
        progress,
      );
      if (grouped)
        for (const record of journal.streams.all()) {
          const matched = matchedByStream.get(record.id) ?? 0;
          if (matched === 0 && !(record.kept === 0 && standsAlone(record))) continue;
          total++;
          top.offer(record.position, record.position, /** @type {StreamRow} */ ({ record, matched }));
        }
      return { count: total, total, ...(await top.result()), reversed: q.order === 'asc' };
    },
    all: () => journal.entries,
    groups: { key: 'signal', of: (e) => e.signal ?? '(no signal)', noun: 'signals' },
  };
}

/** The cursor of a page's next page, as the answer carries it. @param {Page} page */
export function nextCursor(page) {
  return page.next ? makeCursor(page.next) : undefined;
}
