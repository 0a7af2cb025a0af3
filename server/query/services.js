// GET /api/services: every service with something stored, for the views' service filters, counted from
// the stores themselves so that a service seen only in old items is still listed.
import { scanAll } from './scan.js';
import { serviceColors } from '../store/service-colors.js';

/**
 * `color`: the service's colour, an index into the UI's palette given in order of first arrival (store/service-colors.js).
 * @param {import('../store/store.js').Store} store
 * @returns {Promise<{ name: string, spans: number, logs: number, points: number, color: number }[]>} sorted by name
 */
export async function servicesStored(store) {
  const colors = serviceColors(store);
  /** @type {Map<string, { name: string, spans: number, logs: number, points: number, color: number }>} */
  const services = new Map();
  for (const [signal, field] of /** @type {const} */ ([['traces', 'spans'], ['logs', 'logs'], ['metrics', 'points']])) {
    // Items of one request share their context: count a run of them with one lookup.
    /** @type {any} */
    let ctx = null;
    let run = 0;
    const flush = () => {
      if (!ctx) return;
      let row = services.get(ctx.service);
      if (!row) services.set(ctx.service, (row = { name: ctx.service, spans: 0, logs: 0, points: 0, color: colors.of(ctx.service) }));
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
