// What the store holds of each service, kept as items arrive and go:
// - its colour, an index into the UI's palette given in the order services first arrive and kept while the
//   process runs, so a service has the same colour in every view, in every tab and after a reload (colours chosen
//   in the browser followed whatever that page happened to show first); clearing the store or evicting a
//   service's items keeps its colour;
// - how many items of each signal it has stored, so that GET /api/services, asked by every view as it opens,
//   costs the number of services rather than a scan of every stored item (300,000 items: 110-150 ms of the
//   telemetry loop's time, each time).
import { SIGNALS_SHOWN, signalByName } from '../otlp/signals.js';

/** Names given their own index; past this many, a name's index comes from a hash of it (stable, may be shared). */
const MAX_NAMES = 10_000;

/**
 * @typedef {{ name: string, color: number } & Record<import('../otlp/signals.js').Signal['short'], number>} StoredService
 *   how many items of each signal the service has stored, under the signal's short word (spans, logs, points,
 *   samples); `color`: its colour index
 */

/** @type {WeakMap<import('./store.js').Store, StoredServices>} */
const byStore = new WeakMap();

export class StoredServices {
  /** @type {Map<string, number>} */
  #index = new Map();
  /** @type {Map<string, { counts: Record<string, number>, total: number }>} only services with something stored */
  #stored = new Map();

  /** @param {import('./store.js').Store} store */
  constructor(store) {
    store.subscribe(({ signal, entries, evicted }) => {
      const short = /** @type {import('../otlp/signals.js').Signal} */ (signalByName(signal)).short;
      // The items of one scope of a request share their context: one lookup per run of them.
      this.#countRuns(short, entries.length, (i) => entries[i].ctx, 1);
      const contextAt =
        'contextAt' in evicted
          ? (/** @type {number} */ i) => /** @type {any} */ (evicted).contextAt(i)
          : (/** @type {number} */ i) => /** @type {any} */ (evicted)[i].ctx;
      this.#countRuns(short, evicted.length, contextAt, -1);
    });
    store.onCleared(() => this.#stored.clear());
  }

  /** @param {string} short @param {number} length @param {(i: number) => any} contextAt @param {1|-1} sign */
  #countRuns(short, length, contextAt, sign) {
    let ctx = null;
    let run = 0;
    for (let i = 0; i < length; i++) {
      const next = contextAt(i);
      if (next === ctx) {
        run++;
        continue;
      }
      if (ctx) this.#count(ctx.service, short, sign * run);
      ctx = next;
      run = 1;
    }
    if (ctx) this.#count(ctx.service, short, sign * run);
  }

  /** @param {string} service @param {string} short @param {number} by */
  #count(service, short, by) {
    let row = this.#stored.get(service);
    if (!row) {
      this.of(service);
      this.#stored.set(service, (row = { counts: Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.short, 0])), total: 0 }));
    }
    row.counts[short] += by;
    row.total += by;
    if (row.total <= 0) this.#stored.delete(service);
  }

  /** The colour index of a service, given now if it has none yet. @param {string} service @returns {number} */
  of(service) {
    let i = this.#index.get(service);
    if (i !== undefined) return i;
    if (this.#index.size >= MAX_NAMES) return MAX_NAMES + (hash(service) % MAX_NAMES);
    i = this.#index.size;
    this.#index.set(service, i);
    return i;
  }

  /** Every service with something stored, sorted by name. @returns {StoredService[]} */
  list() {
    return [...this.#stored]
      .map(([name, { counts }]) => /** @type {StoredService} */ ({ name, ...counts, color: this.of(name) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** FNV-1a over the UTF-16 code units. @param {string} text */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * What a store holds of each service; the first call starts counting arrivals, so the composition root makes
 * it as soon as the store exists.
 * @param {import('./store.js').Store} store
 */
export function storedServices(store) {
  let services = byStore.get(store);
  if (!services) byStore.set(store, (services = new StoredServices(store)));
  return services;
}
