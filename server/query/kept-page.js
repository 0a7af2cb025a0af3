// The first page of a list of stored items, kept between asks. A view open during ingest asks for its first
// page once a second; kept, that page costs the items that arrived since the last ask instead of a scan
// of the whole store (100,000 log records, sorted by time, took the server longer than storing them).
// A page is kept per ring and query, the few most recently asked; it is worked out again from everything
// stored when an item it shows was evicted, or a larger page is asked for.
import { scanNewestFirst, TopPage } from './scan.js';

/** How many queries of one ring (or store, for traces) keep their page: a few browser tabs' views. */
const KEPT_QUERIES = 8;
/** A kept page holds at least this many items, so a view that grows a little does not start again. */
const MIN_KEPT = 200;
/** Larger pages (an export, a snapshot) are asked for once: they are not kept. */
export const MAX_KEPT = 1000;

/**
 * @typedef {{ seq: number }} Item a store's item; a journal's entries are found in order by their position instead (`seqOf`)
 * @typedef {{ key: number, seq: number, item: Item }} Ranked
 * @typedef {import('./scan.js').Indexed<any> & { size: number }} Ring a store's ring, or the journal's
 * @typedef {{ items: Item[], positions: number[][], next: number[]|null, total: number }} FirstPage
 */

class Kept {
  constructor() {
    /** the highest sequence number looked at */
    this.seen = -Infinity;
    /** the sequence numbers of every stored match, oldest first, from `head` on; none when every item matches */
    /** @type {number[]} */
    this.matched = [];
    this.head = 0;
    /** @type {Ranked[]} the highest-ranked matches, highest first */
    this.top = [];
    this.size = 0;
    /** @type {Promise<unknown>} asks of one page run one after another */
    this.last = Promise.resolve();
  }

  get total() {
    return this.matched.length - this.head;
  }

  /** Forgets the matches the ring no longer holds; false when one of them is on the page. @param {number} lowest */
  evictBelow(lowest) {
    while (this.head < this.matched.length && this.matched[this.head] < lowest) this.head++;
    if (this.head > 1024 && this.head * 2 > this.matched.length) {
      this.matched = this.matched.slice(this.head);
      this.head = 0;
    }
    return this.top.every((r) => r.seq >= lowest);
  }
}

/** @type {WeakMap<object, Map<string, Kept>>} */
const byRing = new WeakMap();

/**
 * Runs `work` on the kept state of `query` over `owner` (a ring, a store), made by `make` the first time; the
 * KEPT_QUERIES asked last are kept, and asks of one query run one after another.
 * @template {{ last: Promise<unknown> }} K @template R
 * @param {WeakMap<object, Map<string, K>>} byOwner @param {object} owner @param {string} query
 * @param {() => K} make @param {(kept: K) => Promise<R>} work @returns {Promise<R>}
 */
export function askKept(byOwner, owner, query, make, work) {
  let pages = byOwner.get(owner);
  if (!pages) byOwner.set(owner, (pages = new Map()));
  const kept = pages.get(query) ?? make();
  pages.delete(query);
  pages.set(query, kept);
  if (pages.size > KEPT_QUERIES) pages.delete(/** @type {string} */ (pages.keys().next().value));
  const answer = kept.last.then(() => work(kept));
  kept.last = answer.catch(() => {});
  return answer;
}

/**
 * The first `limit` matches of a ring's items, ranked by `keyOf` then sequence number, highest first, with the
 * exact number of matches: what TopPage over a scan of every stored item gives, at the cost of what arrived
 * since the same query was last asked.
 * @param {Ring} ring @param {string} query what identifies the matches and their ranking
 * @param {number} limit @param {(item: any) => boolean} match @param {(item: any) => number} keyOf
 * @param {boolean} matchesAll every item matches (a query without filters): the ring's size is their number, and
 *   a view's first ask after a while, which looks at everything that arrived since, keeps no list of them
 * @param {(item: any) => number} seqOf an item's sequence number, rising in the ring's order
 * @returns {Promise<FirstPage>}
 */
export function keptFirstPage(ring, query, limit, match, keyOf, matchesAll, seqOf) {
  return askKept(
    byRing,
    ring,
    query,
    () => new Kept(),
    (kept) => update(kept, ring, limit, match, keyOf, matchesAll, seqOf),
  );
}

/**
 * @param {Kept} kept @param {Ring} ring @param {number} limit @param {(item: any) => boolean} match
 * @param {(item: any) => number} keyOf @param {boolean} matchesAll @param {(item: any) => number} seqOf
 */
async function update(kept, ring, limit, match, keyOf, matchesAll, seqOf) {
  const lowest = ring.size ? seqOf(ring.at(0)) : Infinity;
  if (!kept.evictBelow(lowest) || limit > kept.size) {
    kept.seen = -Infinity;
    kept.matched = [];
    kept.head = 0;
    kept.top = [];
    kept.size = Math.max(limit, MIN_KEPT);
  }
  if (ring.size) {
    const newest = seqOf(ring.at(ring.size - 1));
    /** @type {number[]} newest first */
    const arrived = [];
    const top = new TopPage(kept.size);
    await scanNewestFirst(
      ring,
      seqOf,
      (e) => {
        if (!match(e)) return;
        const seq = seqOf(e);
        if (!matchesAll) arrived.push(seq);
        top.offer(keyOf(e), seq, e);
      },
      undefined,
      kept.seen,
    );
    kept.seen = Math.max(kept.seen, newest);
    for (let i = arrived.length - 1; i >= 0; i--) kept.matched.push(arrived[i]);
    const { items, positions } = await top.result();
    kept.top = merge(
      kept.top,
      items.map((item, i) => ({ key: positions[i][0], seq: positions[i][1], item })),
      kept.size,
    );
  }
  // As with a scan, what was evicted while the scan gave way is still in this answer, and found gone in the next.
  const shown = kept.top.slice(0, limit);
  const positions = shown.map((r) => [r.key, r.seq]);
  const total = matchesAll ? ring.size : kept.total;
  return { items: shown.map((r) => r.item), positions, next: total > shown.length && shown.length ? positions[shown.length - 1] : null, total };
}

/** Two lists ranked highest first, as one, its first `size`. @param {Ranked[]} a @param {Ranked[]} b @param {number} size */
function merge(a, b, size) {
  /** @type {Ranked[]} */
  const out = [];
  let i = 0;
  let j = 0;
  while (out.length < size && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && (a[i].key > b[j].key || (a[i].key === b[j].key && a[i].seq > b[j].seq)))) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}
