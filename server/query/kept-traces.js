// The first page of a traces list, kept between asks: kept-page.js's counterpart for traces, whose rank moves as
// their spans arrive and go. A view open on the Traces list asks for its first page once a second while spans
// arrive; ranking every stored trace for each ask costs what is stored, however little arrived. Kept, an ask costs
// the traces that gained or lost spans since the last one (npm run bench:first-page, 100,000 spans stored: in
// 100,000 traces, after 1,200 new spans 0.88 ms against 9.37 ms for a scan; in 12,500 traces, 0.18 ms against 0.94;
// when about half the traces changed, a scan is cheaper, and an ask is one).
//
// Per query, the matching traces (their number is the page's total), and the highest-ranked of them, with a
// floor: every matching trace outside them ranks at or below it. A trace that gained or lost spans is ranked
// again; the page is worked out again from every stored trace when too few are left above the floor, a larger
// page is asked for, the store was cleared, or more traces changed than the store remembers (store.js TraceChanges).
import { below, scanAll, Slicer, TopPage } from './scan.js';
import { readSummaryInSteps } from './traces.js';
import { askKept } from './kept-page.js';

/** A kept page holds at least this many traces, so a view that grows a little does not start again. */
const MIN_KEPT = 200;
/**
 * Ranking a changed trace again costs about what scanning two does: past one change in two stored traces, every trace
 * is ranked again. A scan pays for the new and changed traces' keys too, and a trace that lost its last span costs
 * nothing to rank again. With 12,000 new spans between asks (a Traces tab at 12,000 spans a second), the kept page
 * asked alone (npm run bench:first-page, median ms) took 1.20 ms in 12,500 traces and 7.05 ms in 100,000 where it was
 * 1.96 and 18.66 with one change in eight as the bound, which worked every trace out again at each of those asks.
 */
const RANKED_AGAIN_PER_SCANNED = 2;

/**
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/store.js').TraceSpans} TraceSpans
 * @typedef {{ key: number, seq: number }} Rank ranked by key, then by the first span's sequence number, highest first
 * @typedef {{ items: TraceSpans[], positions: number[][], next: number[]|null, total: number }} FirstPage
 */

const LOWEST = Object.freeze({ key: -Infinity, seq: -Infinity });

class Kept {
  /** @param {boolean} everyTrace whether the query has no filter */
  constructor(everyTrace) {
    /** the store's clears when this was worked out: -1, never */
    this.clears = -1;
    /** where in the store's record of changed traces this has read to */
    this.changesRead = 0;
    /** @type {Set<TraceSpans>} */
    this.matching = new Set();
    /** whether every stored trace matches: then none is kept in `matching`, and the store's index counts them */
    this.everyTrace = everyTrace;
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
 * @param {boolean} everyTrace whether the query has no filter: every stored trace matches
 * @returns {Promise<FirstPage>}
 */
export function keptTracesPage(store, query, limit, match, keyOf, everyTrace) {
  return askKept(
    byStore,
    store,
    query,
    () => new Kept(everyTrace),
    (kept) => update(kept, store, limit, match, keyOf),
  );
}

/** How many stored traces match. @param {Kept} kept @param {Store} store */
const total = (kept, store) => (kept.everyTrace ? store.traces.size : kept.matching.size);

/** The members, highest-ranked first. @param {Kept} kept */
const ranked = (kept) => [...kept.members].sort(([, a], [, b]) => (below(b, a.key, a.seq) ? -1 : 1));

/** @param {Kept} kept @param {Store} store @param {number} limit @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf */
async function update(kept, store, limit, match, keyOf) {
  const changes = store.traceChanges;
  const fresh =
    kept.clears !== store.clears ||
    limit > kept.size ||
    !changes.holds(kept.changesRead) ||
    (changes.count - kept.changesRead) * RANKED_AGAIN_PER_SCANNED > store.traces.size;
  if (fresh) await workOut(kept, store, Math.max(limit, MIN_KEPT), match, keyOf);
  else {
    const changed = changedSince(kept, store);
    const slicer = new Slicer();
    for (const t of changed) {
      const preparing = readSummaryInSteps(t, slicer);
      if (preparing) await preparing;
      rankAgain(kept, t, match, keyOf);
      if (slicer.due()) await slicer.pause();
    }
    trim(kept);
    if (kept.members.size < limit && total(kept, store) > kept.members.size) await workOut(kept, store, kept.size, match, keyOf);
  }
  const shown = ranked(kept).slice(0, limit);
  const positions = shown.map(([, r]) => [r.key, r.seq]);
  const matches = total(kept, store);
  return { items: shown.map(([t]) => t), positions, next: matches > shown.length && shown.length ? positions[shown.length - 1] : null, total: matches };
}

/**
 * Every stored trace ranked, the `size` highest kept. What changes while the scan gives way is ranked again at the
 * next ask: the marks are taken before it starts.
 * @param {Kept} kept @param {Store} store @param {number} size @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf
 */
async function workOut(kept, store, size, match, keyOf) {
  kept.clears = store.clears;
  kept.changesRead = store.traceChanges.count;
  kept.size = size;
  kept.matching = new Set();
  const adding = !kept.everyTrace;
  // One more than kept: the highest outside is the floor.
  const top = new TopPage(size + 1);
  await scanAll(
    store.eachTrace(),
    (/** @type {TraceSpans} */ t) => {
      if (t.head === t.entries.length || !match(t)) return;
      if (adding) kept.matching.add(t);
      top.offer(keyOf(t), t.firstSeq, t);
    },
    readSummaryInSteps,
  );
  const { items, positions } = await top.result();
  kept.members = new Map(items.slice(0, size).map((t, i) => [t, { key: positions[i][0], seq: positions[i][1] }]));
  kept.floor = items.length > size ? { key: positions[size][0], seq: positions[size][1] } : LOWEST;
}

/** The traces that gained spans or lost them since the last ask. @param {Kept} kept @param {Store} store */
function changedSince(kept, store) {
  /** @type {Set<TraceSpans>} */
  const changed = new Set();
  const changes = store.traceChanges;
  changes.readFrom(kept.changesRead, changes.count, (t) => changed.add(t));
  kept.changesRead = changes.count;
  return changed;
}

/** @param {Kept} kept @param {TraceSpans} t @param {(t: TraceSpans) => boolean} match @param {(t: TraceSpans) => number} keyOf */
function rankAgain(kept, t, match, keyOf) {
  // A trace that lost its last span is out of the store's index, and may come back as another list of spans.
  const matches = t.head < t.entries.length && match(t);
  if (!matches) {
    if (!kept.everyTrace) kept.matching.delete(t);
    kept.members.delete(t);
    return;
  }
  if (!kept.everyTrace) kept.matching.add(t);
  const rank = { key: keyOf(t), seq: t.firstSeq };
  if (below(kept.floor, rank.key, rank.seq)) kept.members.set(t, rank);
  else kept.members.delete(t);
}

/** Members past twice the size kept go, the highest of them the new floor. @param {Kept} kept */
function trim(kept) {
  if (kept.members.size <= 2 * kept.size) return;
  const members = ranked(kept);
  for (let i = kept.size; i < members.length; i++) kept.members.delete(members[i][0]);
  kept.floor = members[kept.size][1];
}
