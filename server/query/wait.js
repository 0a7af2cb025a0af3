// "Wait until": every list query takes minCount/timeoutMs and is answered once enough items match, or with
// 408 and an explanation on timeout. A waiter counts what matches from the store's and the journal's
// feeds, looking only at the items that arrive and leave (traces: the traces they belong to, a few times a
// second), and asks the query engine again only when its count says the answer may be there: a thousand
// waiters on a full store cost ingestion next to nothing.
import { DEFAULT_WAIT_MS } from './params.js';
import { scanAll, Slicer } from './scan.js';
import { pageAnswer } from './respond.js';

/**
 * Trace waiters look again at the traces that changed at most this often, and at least RECHECK_FACTOR
 * times as long as the last look took: a trace filter may read every span of a trace, and the same
 * traces may grow by every request.
 */
export const RECHECK_MS = 50;
const RECHECK_FACTOR = 4;
/** Queries waiting at once (minCount, timeoutMs): more are answered 429. */
export const MAX_WAITERS = 1000;

/**
 * @typedef {import('./engine.js').Listing} Listing
 * @typedef {import('./engine.js').Page} Page
 * @typedef {import('./scan.js').Progress} Progress
 * @typedef {import('../store/store.js').Store} Store
 */

class Waiter {
  /** @param {Listing} listing @param {number} need @param {Store} store */
  constructor(listing, need, store) {
    this.listing = listing;
    this.need = need;
    this.store = store;
    /** items (or traces) matching now */
    this.count = 0;
    /** @type {Progress|null} where the engine's scan is, while one runs: what changes meanwhile is settled after it */
    this.scanning = null;
    this.delta = 0;
    /** @type {Set<string>} trace listings: the matching traces */
    this.traceIds = new Set();
    /** @type {Set<string>} trace listings: traces that changed since they were last looked at */
    this.touched = new Set();
    this.scheduled = false;
    /** @type {((page: Page) => void) | null} */
    this.finish = null;
    /** @type {NodeJS.Timeout|null} trace listings: the next look at `touched` */
    this.recheck = null;
    this.rechecking = false;
    this.nextRecheck = 0;
  }

  /** Runs the query and takes its count as the truth, plus whatever changed while it ran. */
  async measure() {
    const progress = { lowest: Infinity };
    this.scanning = progress;
    this.delta = 0;
    this.touched.clear();
    const page = await this.listing.page(progress, this.listing.perTrace);
    this.scanning = null;
    if (this.listing.perTrace) {
      this.traceIds = /** @type {Set<string>} */ (page.traceIds);
      this.count = this.traceIds.size;
      this.scheduleRecheck();
    } else this.count = page.count + this.delta;
    return page;
  }

  /**
   * Called by the feeds in the middle of storing a request: counts, and queries later if it may be enough.
   * @param {any[]} arrived @param {Iterable<any> & { readonly length: number }} evicted the items that went: an array, or the store's evicted log records and data points
   */
  onChange(arrived, evicted) {
    const { listing } = this;
    if (listing.perTrace) {
      // Whether a trace matches may take reading all its spans: the traces are looked at later, together.
      for (const e of arrived) this.touched.add(e.traceId);
      for (const e of evicted) this.touched.add(e.traceId);
      if (!this.scanning) this.scheduleRecheck();
      return;
    }
    // A waiter without filters (minCount over everything) only counts: no call per item.
    const everything = listing.filters.length === 0;
    let n = everything ? arrived.length : 0;
    if (!everything) for (const e of arrived) if (listing.match(e)) n++;
    // An eviction the running scan has not reached yet was never counted.
    if (everything && !this.scanning) n -= evicted.length;
    else for (const e of evicted) if ((!this.scanning || listing.seqOf(e) >= this.scanning.lowest) && listing.match(e)) n--;
    if (this.scanning) this.delta += n;
    else this.count += n;
    this.check();
  }

  scheduleRecheck() {
    if (this.recheck || this.rechecking || this.touched.size === 0 || !this.finish) return;
    this.recheck = setTimeout(() => void this.recheckTraces(), Math.max(0, this.nextRecheck - Date.now()));
  }

  /** Looks again at the traces that changed, in slices: whether each matches now. */
  async recheckTraces() {
    this.recheck = null;
    this.rechecking = true;
    const started = Date.now();
    const ids = [...this.touched];
    this.touched.clear();
    const slicer = new Slicer(1);
    for (const id of ids) {
      if (!this.finish) break;
      let trace = this.store.traces.get(id);
      const preparing = trace && this.listing.prepare?.(trace, slicer);
      if (preparing) {
        await preparing;
        trace = this.store.traces.get(id);
      }
      if (trace && this.listing.match(trace)) this.traceIds.add(id);
      else this.traceIds.delete(id);
      if (slicer.due()) await slicer.pause();
    }
    this.count = this.traceIds.size;
    this.nextRecheck = Date.now() + Math.max(RECHECK_MS, RECHECK_FACTOR * (Date.now() - started));
    this.rechecking = false;
    this.check();
    if (!this.scanning) this.scheduleRecheck();
  }

  check() {
    if (this.count < this.need || this.scheduled || this.scanning || !this.finish) return;
    this.scheduled = true;
    setImmediate(async () => {
      this.scheduled = false;
      if (!this.finish) return;
      const page = await this.measure();
      if (!this.finish) return;
      if (page.count >= this.need) this.finish(page);
      else this.check();
    });
  }
}

export class Waiters {
  /** @param {{ store: Store, journal: import('../store/journal.js').Journal }} sources */
  constructor({ store, journal }) {
    this.store = store;
    /** @type {Set<Waiter>} */
    this.active = new Set();
    this.unsubscribe = [
      store.subscribe((batch) => {
        for (const w of this.active) if (w.listing.feed === batch.signal) w.onChange(batch.entries, batch.evicted);
      }),
      journal.subscribe((entry, evicted) => {
        for (const w of this.active) if (w.listing.feed === 'journal') w.onChange([entry], evicted ? [evicted] : []);
      }),
    ];
  }

  /** Queries waiting for data: counted once their first look at the store is done and they follow the feeds. */
  get size() {
    let n = 0;
    for (const w of this.active) if (w.finish) n++;
    return n;
  }

  /**
   * What to answer a list query, waiting first when it asks to.
   * @param {Listing} listing @param {import('./respond.js').OnGone} onGone tells when the client has gone away
   * @returns {Promise<import('./respond.js').Answer|null>} null when the client went away while it waited
   */
  async answer(listing, onGone) {
    const q = listing.query;
    if (q.minCount === undefined && q.timeoutMs === undefined) return pageAnswer(listing, await listing.page());
    if (this.active.size >= MAX_WAITERS)
      return {
        status: 429,
        json: {
          statusCode: 429,
          error: 'Too Many Requests',
          message: `${this.active.size} queries are waiting already, the limit (${MAX_WAITERS}): retry when one has answered, or ask without minCount and timeoutMs`,
        },
      };
    const need = q.minCount ?? 1;
    const timeoutMs = q.timeoutMs ?? DEFAULT_WAIT_MS;
    const waiter = new Waiter(listing, need, this.store);
    this.active.add(waiter);
    const first = await waiter.measure();
    if (first.count >= need) {
      this.active.delete(waiter);
      return pageAnswer(listing, first);
    }
    const answer = await this.until(onGone, waiter, timeoutMs);
    if (answer === 'gone') return null;
    if (answer) return pageAnswer(listing, answer);
    const last = await listing.page();
    return pageAnswer(listing, last, { status: 408, error: await explain(listing, need, last.count, timeoutMs) });
  }

  /**
   * @param {import('./respond.js').OnGone} onGone when the client goes, the waiter goes
   * @param {Waiter} waiter @param {number} timeoutMs
   * @returns {Promise<Page|null|'gone'>} null when the time ran out
   */
  until(onGone, waiter, timeoutMs) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(null), timeoutMs);
      /** @param {Page|null|'gone'} result */
      const done = (result) => {
        if (!this.active.delete(waiter)) return;
        waiter.finish = null;
        clearTimeout(timer);
        if (waiter.recheck) clearTimeout(waiter.recheck);
        stopListening();
        resolve(result);
      };
      waiter.finish = done;
      const stopListening = onGone(() => done('gone'));
      waiter.scheduleRecheck();
      waiter.check();
    });
  }

  close() {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    for (const w of [...this.active]) {
      if (w.finish) w.finish(/** @type {any} */ (null));
      else this.active.delete(w);
    }
  }
}

/**
 * "2 of 3 spans with service=checkout after 5000 ms; 16 spans stored in all; 14 spans from other services
 * (cart: 10, web: 4)": what matched, what did not, and where the rest came from. With several filters it
 * also counts what each filter alone matches, which points at the one that is wrong.
 * @param {Listing} listing @param {number} need @param {number} got @param {number} timeoutMs
 */
export async function explain(listing, need, got, timeoutMs) {
  const { filters, noun, groups } = listing;
  const wanted = filters.map((f) => f.label).join(' and ');
  const parts = [`${got} of ${need} ${noun}${wanted ? ` with ${wanted}` : ''} after ${timeoutMs} ms`];
  if (!filters.length) return parts.join('; ');
  let stored = 0;
  const singles = filters.map((f) => ({ label: f.label, match: f.match, n: 0 }));
  /** @type {Map<string, number>} */
  const otherGroups = new Map();
  const wantedGroup = listing.query[groups.key];
  await scanAll(
    listing.all(),
    (item) => {
      stored++;
      for (const s of singles) if (s.match(item)) s.n++;
      if (wantedGroup === undefined) return;
      const group = groups.of(item);
      if (group !== String(wantedGroup)) otherGroups.set(group, (otherGroups.get(group) ?? 0) + 1);
    },
    listing.prepare,
  );
  if (filters.length > 1) parts.push(`of the ${stored} ${noun} stored, ${singles.map((s) => `${s.n} have ${s.label}`).join(', ')}`);
  else parts.push(`${stored} ${noun} stored in all`);
  const others = [...otherGroups.values()].reduce((a, b) => a + b, 0);
  if (others > 0) {
    const top = [...otherGroups.entries()].sort((a, b) => b[1] - a[1]);
    const shown = top.slice(0, 5).map(([name, n]) => `${name || '(none)'}: ${n}`);
    if (top.length > 5) shown.push(`${top.length - 5} more`);
    parts.push(`${others} ${noun} from other ${groups.noun} (${shown.join(', ')})`);
  }
  return parts.join('; ');
}
