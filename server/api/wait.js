// "Wait until": every list query takes minCount/timeoutMs and is answered once enough items match, woken by
// the store's and the journal's feeds rather than by polling, or with 408 and an explanation on timeout.

export const DEFAULT_WAIT_MS = 30_000;
export const MAX_WAIT_MS = 300_000;

/** Query-string properties every waitable route adds to its schema. */
export const WAIT_QUERY = {
  minCount: { type: 'integer', minimum: 1, description: 'wait until at least this many items match (counted before limit)' },
  timeoutMs: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_WAIT_MS,
    description: `how long to wait for minCount (default ${DEFAULT_WAIT_MS}); on timeout the answer is 408 with what matched and an explanation. Alone it waits for one item`,
  },
};

/** Query keys that shape the answer rather than select items. */
const CONTROL_KEYS = new Set(['limit', 'minCount', 'timeoutMs']);

/**
 * How one route is answered and waited for.
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ count: number, render: () => Record<string, any> }} Answer
 *   `count`: items matching (before limit), compared with minCount; `render`: the response body, built only
 *   when it is sent
 * @typedef {{
 *   noun: string,
 *   feed: { signal: import('../otlp/signals.js').SignalName } | 'journal',
 *   match: (item: any) => boolean,
 *   run: () => Answer,
 *   filterMatch: (key: string, value: unknown) => (item: any) => boolean,
 *   all: () => Iterable<any>,
 *   groups: { key: string, of: (item: any) => string, noun: string },
 * }} Listing
 *   `match`: the query's filter on one stored entry (or journal entry); `filterMatch`: one filter on its own,
 *   for the explanation; `all`: every stored item the filters choose from; `groups`: the filter that names
 *   where items come from (service, or signal for requests), to say where the non-matching ones came from.
 * @typedef {{ listing: Listing, need: number, seen: number, scheduled: boolean, finish: (answer: Answer|null) => void }} Waiter
 *   `seen` only grows with the feed, so it is never below the true count: nothing is missed, and the
 *   query runs again only when it may be satisfied.
 */

export class Waiters {
  /**
   * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} sources
   */
  constructor({ store, journal }) {
    /** @type {Set<Waiter>} */
    this.active = new Set();
    this.unsubscribe = [
      store.subscribe((batch) => {
        for (const w of this.active) {
          const feed = w.listing.feed;
          if (feed === 'journal' || feed.signal !== batch.signal) continue;
          let n = 0;
          for (const entry of batch.entries) if (w.listing.match(entry)) n++;
          if (n) this.grow(w, n);
        }
      }),
      journal.subscribe((entry) => {
        for (const w of this.active) if (w.listing.feed === 'journal' && w.listing.match(entry)) this.grow(w, 1);
      }),
    ];
  }

  get size() {
    return this.active.size;
  }

  /**
   * The feeds call their listeners in the middle of storing a request: only note it here, query later.
   * @param {Waiter} w @param {number} n
   */
  grow(w, n) {
    w.seen += n;
    if (w.seen < w.need || w.scheduled) return;
    w.scheduled = true;
    setImmediate(() => {
      w.scheduled = false;
      if (!this.active.has(w)) return;
      const answer = w.listing.run();
      if (answer.count >= w.need) w.finish(answer);
      else w.seen = answer.count;
    });
  }

  /**
   * Answers a list query, waiting first when it asks to.
   * @param {import('fastify').FastifyRequest} request
   * @param {import('fastify').FastifyReply} reply
   * @param {Listing} listing
   */
  async respond(request, reply, listing) {
    const q = /** @type {Record<string, any>} */ (request.query);
    const first = listing.run();
    if (q.minCount === undefined && q.timeoutMs === undefined) return first.render();
    const need = q.minCount ?? 1;
    if (first.count >= need) return first.render();
    const timeoutMs = q.timeoutMs ?? DEFAULT_WAIT_MS;
    const answer = await this.until(request.raw.socket, listing, need, first.count, timeoutMs);
    if (answer === 'gone') return reply.hijack();
    if (answer) return answer.render();
    const last = listing.run();
    return reply.code(408).send({ ...last.render(), error: explain(listing, q, need, last.count, timeoutMs) });
  }

  /**
   * @param {import('node:net').Socket} socket the client's connection: when it closes, the waiter goes
   * @param {Listing} listing @param {number} need @param {number} seen @param {number} timeoutMs
   * @returns {Promise<Answer|null|'gone'>} null when the time ran out
   */
  until(socket, listing, need, seen, timeoutMs) {
    if (socket.destroyed) return Promise.resolve(/** @type {'gone'} */ ('gone'));
    return new Promise((resolve) => {
      const gone = () => done('gone');
      const timer = setTimeout(() => done(null), timeoutMs);
      /** @type {Waiter} */
      const waiter = { listing, need, seen, scheduled: false, finish: (answer) => done(answer) };
      /** @param {Answer|null|'gone'} result */
      const done = (result) => {
        if (!this.active.delete(waiter)) return;
        clearTimeout(timer);
        socket.off('close', gone);
        resolve(result);
      };
      this.active.add(waiter);
      socket.on('close', gone);
    });
  }

  close() {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    for (const w of [...this.active]) w.finish(null);
  }
}

/** @param {string} key @param {unknown} value */
function filterLabel(key, value) {
  if (key === 'severity') return `severity>=${value}`;
  return `${key}=${value}`;
}

/**
 * "2 of 3 spans with service=checkout after 5000 ms; 16 spans stored in all; 14 spans from other services
 * (cart: 10, web: 4)": what matched, what did not, and where the rest came from. With several filters it
 * also counts what each filter alone matches, which points at the one that is wrong.
 * @param {Listing} listing @param {Record<string, any>} query @param {number} need @param {number} got @param {number} timeoutMs
 */
export function explain(listing, query, need, got, timeoutMs) {
  const filters = Object.entries(query).filter(([key, value]) => !CONTROL_KEYS.has(key) && value !== undefined);
  const noun = listing.noun;
  const wanted = filters.map(([k, v]) => filterLabel(k, v)).join(' and ');
  const parts = [`${got} of ${need} ${noun}${wanted ? ` with ${wanted}` : ''} after ${timeoutMs} ms`];
  if (!filters.length) return parts.join('; ');
  let stored = 0;
  const singles = filters.map(([key, value]) => ({ label: filterLabel(key, value), match: listing.filterMatch(key, value), n: 0 }));
  /** @type {Map<string, number>} */
  const otherGroups = new Map();
  const { groups } = listing;
  const wantedGroup = filters.find(([key]) => key === groups.key)?.[1];
  for (const item of listing.all()) {
    stored++;
    for (const s of singles) if (s.match(item)) s.n++;
    const group = groups.of(item);
    if (wantedGroup !== undefined && group !== String(wantedGroup)) otherGroups.set(group, (otherGroups.get(group) ?? 0) + 1);
  }
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
