// The first page of a traces list, kept between asks: kept-page.js's counterpart for traces, whose rank moves as
// their spans arrive and go. The Traces view asks for its first page once a second while spans arrive, and
// ranking every stored trace for it (twenty thousand, by start) cost the telemetry loop more than the page: a tab
// open on it took a tenth of ingest. Kept, an ask costs the traces that gained or lost spans since the last one.
//
// Per query, the matching traces (their number is the page's total), and the highest-ranked of them, with a
// floor: every matching trace outside them ranks at or below it. A trace that gained or lost spans is ranked
// again; the page is worked out again from every stored trace when too few are left above the floor, a larger
// page is asked for, the store was cleared, or more traces lost spans than the store remembers.
import { scanAll, scanNewestFirst, Slicer, TopPage } from './scan.js';
import { readSummaryInSteps } from './traces.js';

/** How many queries keep their page: a few browser tabs' views. */
const KEPT_QUERIES = 8;
/** A kept page holds at least this many traces, so a view that grows a little does not start again. */
const MIN_KEPT = 200;

/**
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/store.js').TraceSpans} TraceSpans
 * @typedef {import('../otlp/model.js').SpanEntry} SpanEntry
 * @typedef {{ key: number, seq: number }} Rank ranked by key, then by the first span's sequence number, highest first
 * @typedef {{ items: TraceSpans[], positions: number[][], next: number[]|null, total: number }} FirstPage
 */

const LOWEST = Object.freeze({ key: -Infinity, seq: -Infinity });

class Kept {
  constructor() {
    /** the store's clears when this was worked out: -1, never */
    this.clears = -1;
    /** the highest span sequence number looked at */
    this.seen = -Infinity;
    /** where in the store's losses (store.js TraceLosses) this has read to */
    this.lossesRead = 0;
    /** @type {Set<TraceSpans>} */
    this.matching = new Set();
    /** @type {Map<TraceSpans, Rank>} the highest-ranked matching traces, every one above `floor` */
    this.members = new Map();
    /** @type {Rank} every matching trace not a member ranks at or below it */
    this.floor = LOWEST;
    this.size = 0;
    /** @type {Promise<unknown>} asks of one page run one after another */
    this.last = Promise.resolve();
  }
}

/** @type {WeakMap<Store, Map<string, Kept>>} */
const byStore = new WeakMap();

/**
 * The first `limit` matching traces, ranked by `keyOf` then first arrival, highest first, with the exact number of
 * matches: what TopPage over a scan of every stored trace gives, at the cost of the traces that changed since the
 * same query was last asked.
 * @param {Store} store @param {string} query what identifies the matches and their ranking
 * @param {number} limit @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf
 * @returns {Promise<FirstPage>}
 */
export function keptTracesPage(store, query, limit, match, keyOf) {
  let pages = byStore.get(store);
  if (!pages) byStore.set(store, (pages = new Map()));
  let kept = pages.get(query);
  pages.delete(query);
  if (!kept) kept = new Kept();
  pages.set(query, kept);
  if (pages.size > KEPT_QUERIES) pages.delete(/** @type {string} */ (pages.keys().next().value));
  const k = /** @type {Kept} */ (kept);
  const answer = k.last.then(() => update(k, store, limit, match, keyOf));
  k.last = answer.catch(() => {});
  return answer;
}

/** @param {Rank} a @param {Rank} b a ranks above b */
const above = (a, b) => a.key > b.key || (a.key === b.key && a.seq > b.seq);

/** @param {Kept} kept @param {Store} store @param {number} limit @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf */
async function update(kept, store, limit, match, keyOf) {
  const losses = store.traceLosses;
  const fresh = kept.clears !== store.clears || limit > kept.size || !losses.holds(kept.lossesRead);
  if (fresh) await workOut(kept, store, Math.max(limit, MIN_KEPT), match, keyOf);
  else {
    const changed = await changedSince(kept, store);
    const slicer = new Slicer();
    for (const t of changed) {
      const preparing = readSummaryInSteps(t, slicer);
      if (preparing) await preparing;
      rankAgain(kept, t, match, keyOf);
      if (slicer.due()) await slicer.pause();
    }
    trim(kept);
    if (kept.members.size < limit && kept.matching.size > kept.members.size) await workOut(kept, store, kept.size, match, keyOf);
  }
  const shown = [...kept.members].sort((a, b) => (above(a[1], b[1]) ? -1 : 1)).slice(0, limit);
  const positions = shown.map(([, r]) => [r.key, r.seq]);
  const total = kept.matching.size;
  return { items: shown.map(([t]) => t), positions, next: total > shown.length && shown.length ? positions[shown.length - 1] : null, total };
}

/**
 * Every stored trace ranked, the `size` highest kept. What changes while the scan gives way is ranked again at the
 * next ask: the marks are taken before it starts.
 * @param {Kept} kept @param {Store} store @param {number} size @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf
 */
async function workOut(kept, store, size, match, keyOf) {
  kept.clears = store.clears;
  kept.seen = newestSpanSeq(store);
  kept.lossesRead = store.traceLosses.count;
  kept.size = size;
  kept.matching = new Set();
  // One more than kept: the highest outside is the floor.
  const top = new TopPage(size + 1);
  await scanAll(
    store.eachTrace(),
    (/** @type {TraceSpans} */ t) => {
      if (t.head === t.entries.length || !match(t)) return;
      kept.matching.add(t);
      top.offer(keyOf(t), t.firstSeq, t);
    },
    readSummaryInSteps,
  );
  const { items, positions } = await top.result();
  kept.members = new Map(items.slice(0, size).map((t, i) => [t, { key: positions[i][0], seq: positions[i][1] }]));
  kept.floor = items.length > size ? { key: positions[size][0], seq: positions[size][1] } : LOWEST;
}

/** The traces that gained spans or lost them since the last ask. @param {Kept} kept @param {Store} store */
async function changedSince(kept, store) {
  /** @type {Set<TraceSpans>} */
  const changed = new Set();
  const newest = newestSpanSeq(store);
  const lossesRead = kept.lossesRead;
  kept.lossesRead = store.traceLosses.count;
  store.traceLosses.readFrom(lossesRead, kept.lossesRead, (t) => changed.add(t));
  await scanNewestFirst(
    /** @type {import('./scan.js').Indexed<SpanEntry>} */ (/** @type {unknown} */ (store.ring('traces'))),
    (e) => e.seq,
    (e) => {
      if (e.seq <= newest && e.trace) changed.add(e.trace);
    },
    undefined,
    kept.seen,
  );
  kept.seen = Math.max(kept.seen, newest);
  return changed;
}

/** @param {Store} store */
function newestSpanSeq(store) {
  const ring = store.ring('traces');
  return ring.size ? /** @type {SpanEntry} */ (ring.at(ring.size - 1)).seq : -Infinity;
}

/** @param {Kept} kept @param {TraceSpans} t @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf */
function rankAgain(kept, t, match, keyOf) {
  // A trace that lost its last span is out of the store's index, and may come back as another list of spans.
  const matches = t.head < t.entries.length && match(t);
  if (!matches) {
    kept.matching.delete(t);
    kept.members.delete(t);
    return;
  }
  kept.matching.add(t);
  const rank = { key: keyOf(t), seq: t.firstSeq };
  if (above(rank, kept.floor)) kept.members.set(t, rank);
  else kept.members.delete(t);
}

/** Members past twice the size kept go, the highest of them the new floor. @param {Kept} kept */
function trim(kept) {
  if (kept.members.size <= 2 * kept.size) return;
  const ranked = [...kept.members].sort((a, b) => (above(a[1], b[1]) ? -1 : 1));
  for (let i = kept.size; i < ranked.length; i++) kept.members.delete(ranked[i][0]);
  kept.floor = ranked[kept.size][1];
}
