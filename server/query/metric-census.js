// How many data points each metric (metricKey: one metric of one resource instance) has stored, kept as points
// arrive and are evicted, so the live feed can tell a metrics list that a metric appeared or went away without
// grouping every stored point again.
import { metricKey } from './views.js';
import { Slicer } from './scan.js';
import { Evicted, PlaceRing } from '../store/places.js';

/** @typedef {import('../store/store.js').Entry} Entry */

/**
 * @typedef {{ size: number, at(i: number): Entry|undefined } | PlaceRing<Entry>} StoredPoints
 *   the store's ring of data points, read oldest first: a PlaceRing's by each point's context, without making it
 * @typedef {Entry[] | Evicted<Entry>} Points
 *   points that arrived (their entries), or that were evicted (the store's Evicted, which makes no entry)
 */

/** Runs of points (one metric of one request each) counted between looks at the clock. */
const COUNTED_BETWEEN_LOOKS = 256;

/**
 * Calls `visit` with each run of points that share a context, and their number, in order: the points of one metric
 * in one request are stored together and share their context.
 * @param {number} length @param {(i: number) => any} contextAt @param {(ctx: any, n: number) => void} visit
 */
function forEachRun(length, contextAt, visit) {
  let ctx = null;
  let run = 0;
  for (let i = 0; i < length; i++) {
    const next = contextAt(i);
    if (next !== ctx) {
      if (run > 0) visit(ctx, run);
      ctx = next;
      run = 0;
    }
    run++;
  }
  if (run > 0) visit(ctx, run);
}

export class MetricCensus {
  /**
   * Counts the points stored now in slices of the admin API's share of the loop: a full store (100,000 points) counted
   * at once held it 420-610 ms when a metrics list was first opened. Until they are counted (`ready`), what arrives
   * and goes is counted too but reported as no change, and `onCounted` learns whether any metric may have appeared
   * or gone meanwhile.
   * @param {StoredPoints} stored @param {(changed: boolean) => void} [onCounted]
   */
  constructor(stored, onCounted = () => {}) {
    /** @type {Map<string, number>} */
    this.points = new Map();
    this.counting = true;
    /** whether anything arrived or went while the stored points were being counted */
    this.moved = false;
    this.abandoned = false;
    // The points stored now, taken at once, since the ring evicts as telemetry arrives: as runs of one context, whose
    // points are one metric of one request. Taken as entries, 100,000 of them were made and held while they were
    // counted in slices: 24-46 ms of CPU a count, 3-10 ms by context (100,000 points of bench:ui's requests).
    /** @type {any[]} */
    const contexts = [];
    /** @type {number[]} */
    const runs = [];
    const contextAt = stored instanceof PlaceRing ? (/** @type {number} */ i) => stored.contextAt(i) : (/** @type {number} */ i) => stored.at(i)?.ctx;
    forEachRun(stored.size, contextAt, (ctx, n) => {
      contexts.push(ctx);
      runs.push(n);
    });
    this.ready = this.#countStored(contexts, runs).then(() => {
      if (this.abandoned) return;
      this.counting = false;
      // Evicted before it was counted, a metric's tally reached zero through a negative: it is gone.
      for (const [identity, n] of this.points) if (n <= 0) this.points.delete(identity);
      onCounted(this.moved);
    });
  }

  /** @param {any[]} contexts @param {number[]} runs how many points of each context */
  async #countStored(contexts, runs) {
    const slicer = new Slicer();
    await slicer.pause();
    for (let from = 0; from < contexts.length && !this.abandoned; from += COUNTED_BETWEEN_LOOKS) {
      const to = Math.min(from + COUNTED_BETWEEN_LOOKS, contexts.length);
      for (let i = from; i < to; i++) this.#tally(contexts[i], runs[i]);
      if (slicer.spent()) await slicer.pause();
    }
  }

  /**
   * Counts a stored batch in. @param {Entry[]} added @param {import('../store/store.js').EvictedItems} evicted
   * @returns {number} how many metrics appeared or went away (0 while the stored points are being counted)
   */
  apply(added, evicted) {
    const changed = this.count(added, 1) + this.count(evicted instanceof Evicted || Array.isArray(evicted) ? evicted : [...evicted], -1);
    if (!this.counting) return changed;
    if (added.length > 0 || changed !== 0) this.moved = true;
    return 0;
  }

  /** The store was emptied: so is the census, and the points it was counting are gone. */
  clear() {
    this.points.clear();
    if (this.counting) {
      this.abandoned = true;
      this.counting = false;
    }
  }

  /** No view watches the metrics any more: the count stops. */
  abandon() {
    this.abandoned = true;
  }

  /** @param {Points} points @param {1|-1} sign @returns {number} metrics that appeared (sign 1) or went away (-1) */
  count(points, sign) {
    const contextAt = points instanceof Evicted ? (/** @type {number} */ i) => points.contextAt(i) : (/** @type {number} */ i) => points[i].ctx;
    let changed = 0;
    forEachRun(points.length, contextAt, (ctx, n) => (changed += this.#tally(ctx, sign * n)));
    return changed;
  }

  /**
   * Adds `delta` points to the tally of the metric of `ctx`. @param {any} ctx @param {number} delta
   * @returns {0|1} whether the metric appeared or went away
   */
  #tally(ctx, delta) {
    const identity = metricKey({ ctx });
    const before = this.points.get(identity) ?? 0;
    const after = before + delta;
    // While the stored points are being counted, a point evicted before its count leaves a negative tally.
    if (after > 0 || this.counting) this.points.set(identity, after);
    else this.points.delete(identity);
    return before > 0 !== after > 0 ? 1 : 0;
  }
}
