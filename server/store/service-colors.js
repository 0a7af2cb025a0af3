// Each service's colour, as an index into the UI's palette: given in the order services first arrive and kept
// while the process runs, so a service has the same colour in every view, in every tab and after a reload
// (colours chosen in the browser followed whatever that page happened to show first). Clearing the store or
// evicting a service's items keeps its colour.

/** Names given their own index; past this many, a name's index comes from a hash of it (stable, may be shared). */
const MAX_NAMES = 10_000;

/** @type {WeakMap<import('./store.js').Store, ServiceColors>} */
const byStore = new WeakMap();

export class ServiceColors {
  /** @type {Map<string, number>} */
  #index = new Map();

  /** @param {import('./store.js').Store} store */
  constructor(store) {
    store.subscribe(({ entries }) => {
      // The items of one request share their context: one lookup per run of them.
      let ctx = null;
      for (const entry of entries) {
        if (entry.ctx === ctx) continue;
        ctx = entry.ctx;
        this.of(ctx.service);
      }
    });
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
}

/** FNV-1a over the UTF-16 code units. @param {string} text */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The colours of a store's services; the first call starts counting arrivals, so the composition root makes
 * it as soon as the store exists.
 * @param {import('./store.js').Store} store
 */
export function serviceColors(store) {
  let colors = byStore.get(store);
  if (!colors) byStore.set(store, (colors = new ServiceColors(store)));
  return colors;
}
