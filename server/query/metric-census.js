// How many data points each metric (metricKey: one metric of one resource instance) has stored, kept as points
// arrive and are evicted, so the live feed can tell a metrics list that a metric appeared or went away without
// grouping every stored point again.
import { metricKey } from './views.js';
import { Slicer } from './scan.js';

/** @typedef {import('../store/store.js').Entry} Entry */

/**
 * @typedef {{ size: number, at(i: number): Entry|undefined }} StoredPoints
 *   the store's ring of data points, read oldest first
 */

/** Points counted between looks at the clock: a few hundred microseconds' work. */
const COUNTED_BETWEEN_LOOKS = 256;

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
    // The points stored now, as references: the ring evicts as telemetry arrives, and these are what is counted.
    /** @type {Entry[]} */
    const snapshot = new Array(stored.size);
    for (let i = 0; i < snapshot.length; i++) snapshot[i] = /** @type {Entry} */ (stored.at(i));
    this.ready = this.#countStored(snapshot).then(() => {
      if (this.abandoned) return;
      this.counting = false;
      // Evicted before it was counted, a metric's tally reached zero through a negative: it is gone.
      for (const [identity, n] of this.points) if (n <= 0) this.points.delete(identity);
      onCounted(this.moved);
    });
  }

  /** @param {Entry[]} snapshot */
  async #countStored(snapshot) {
    const slicer = new Slicer();
    await slicer.pause();
    for (let from = 0; from < snapshot.length && !this.abandoned; from += COUNTED_BETWEEN_LOOKS) {
      this.count(snapshot.slice(from, from + COUNTED_BETWEEN_LOOKS), 1);
      if (slicer.spent()) await slicer.pause();
    }
  }

  /**
   * Counts a stored batch in. @param {Entry[]} added @param {Iterable<Entry>} evicted
   * @returns {number} how many metrics appeared or went away (0 while the stored points are being counted)
   */
  apply(added, evicted) {
    const changed = this.count(added, 1) + this.count(evicted, -1);
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

  /** @param {Iterable<Entry>} entries @param {1|-1} sign @returns {number} metrics that appeared (sign 1) or went away (-1) */
  count(entries, sign) {
    let changed = 0;
    let ctx = null;
    let identity = '';
    let run = 0;
    const settle = () => {
      if (run === 0) return;
      const before = this.points.get(identity) ?? 0;
      const after = before + sign * run;
      // While the stored points are being counted, a point evicted before its count leaves a negative tally.
      if (after > 0 || this.counting) this.points.set(identity, after);
      else this.points.delete(identity);
      if (before > 0 !== after > 0) changed++;
    };
    // The points of one metric in one request are stored together and share their context.
    for (const entry of entries) {
      if (entry.ctx !== ctx) {
        settle();
        ctx = entry.ctx;
        identity = metricKey(entry);
        run = 0;
      }
      run++;
    }
    settle();
    return changed;
  }
}
