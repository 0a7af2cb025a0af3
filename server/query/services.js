// GET /api/services: every service with something stored, for the views' service filters, counted from
// the stores themselves so that a service seen only in old items is still listed.
import { scanAll } from './scan.js';
import { serviceColors } from '../store/service-colors.js';
import { SIGNALS_SHOWN } from '../otlp/signals.js';

/**
 * @typedef {{ name: string, color: number } & Record<import('../otlp/signals.js').Signal['short'], number>} StoredService
 *   how many items of each signal the service has stored, under the signal's short word (spans, logs, points);
 *   `color`: the service's colour, an index into the UI's palette given in order of first arrival (store/service-colors.js)
 */

/** @param {import('../store/store.js').Store} store @returns {Promise<StoredService[]>} sorted by name */
export async function servicesStored(store) {
  const colors = serviceColors(store);
  /** @type {Map<string, StoredService>} */
  const services = new Map();
  /** @param {string} name @returns {StoredService} */
  const fresh = (name) => /** @type {StoredService} */ ({ name, ...Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.short, 0])), color: colors.of(name) });
  for (const { name: signal, short: field } of SIGNALS_SHOWN) {
    // Items of one request share their context: count a run of them with one lookup.
    /** @type {any} */
    let ctx = null;
    let run = 0;
    const flush = () => {
      if (!ctx) return;
      let row = services.get(ctx.service);
      if (!row) services.set(ctx.service, (row = fresh(ctx.service)));
      row[field] += run;
    };
    await scanAll(store.ring(signal), (entry) => {
      if (entry.ctx === ctx) {
        run++;
        return;
      }
      flush();
      ctx = entry.ctx;
      run = 1;
    });
    flush();
  }
  return [...services.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
