// How many data points each metric (metricKey: one metric of one resource instance) has stored, kept as points
// arrive and are evicted, so the live feed can tell a metrics list that a metric appeared or went away without
// grouping every stored point again.
import { metricKey } from './views.js';

/** @typedef {import('../store/store.js').Entry} Entry */

export class MetricCensus {
  /** @param {Iterable<Entry>} stored the data points stored now */
  constructor(stored) {
    /** @type {Map<string, number>} */
    this.points = new Map();
    this.count(stored, 1);
  }

  /**
   * Counts a stored batch in. @param {Entry[]} added @param {Iterable<Entry>} evicted
   * @returns {number} how many metrics appeared or went away
   */
  apply(added, evicted) {
    return this.count(added, 1) + this.count(evicted, -1);
  }

  clear() {
    this.points.clear();
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
      if (after > 0) this.points.set(identity, after);
      else this.points.delete(identity);
      if ((before === 0) !== after <= 0) changed++;
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
