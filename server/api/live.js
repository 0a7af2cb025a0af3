// The live feed: a WebSocket at /api/live that streams stored items and journal entries to browsers in
// timed batches (protocol in docs/live.md). Observers never slow ingestion: the store's listener only
// appends references to a bounded per-client queue, and all conversion and serialisation happens on a timer.
import { WebSocketServer } from 'ws';
import { metricViews } from '../query/views.js';
import { itemView, listing } from '../query/engine.js';
import { MetricCensus } from '../query/metric-census.js';
import { accessOf, paceOf } from './access.js';
import { upgradeRefusal, refuseAndClose } from './upgrade.js';
import { SIGNALS_SHOWN } from '../otlp/signals.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {import('../otlp/signals.js').SignalName|'requests'} Feed a signal's stored items, or the journal's entries;
 *   a watched feed's query is that of its view's list (GET /api/traces, /api/logs, /api/metrics, /api/requests)
 * @typedef {{ flushMs?: number, noticeMs?: number, statsMs?: number, maxQueueItems?: number, flushBudgetMs?: number, maxBufferedBytes?: number,
 *   heartbeatMs?: number, behindLimitMs?: number, maxClients?: number }} LiveOptions
 */

export const PROTOCOL_VERSION = 2;
/** The feeds of stored items, in the order people see the signals: what a clearing of the store empties. */
const STORE_FEEDS = Object.freeze(SIGNALS_SHOWN.map((s) => s.name));
/** @type {readonly Feed[]} */
export const FEEDS = Object.freeze([...STORE_FEEDS, 'requests']);
/** The feeds of the signals whose items are sent one by one, and how each is shown (metrics go by metric). */
const ITEM_FEEDS = SIGNALS_SHOWN.flatMap((s) => {
  const view = itemView(s);
  return view ? [/** @type {const} */ ([s.name, view])] : [];
});

/** A value for every feed. @template T @param {(feed: Feed) => T} value @returns {Record<Feed, T>} */
const perFeed = (value) => /** @type {Record<Feed, T>} */ (Object.fromEntries(FEEDS.map((feed) => [feed, value(feed)])));

const DEFAULTS = {
  flushMs: 250,
  // A client's change notices come at most once a second, the first after a quiet second at the next flush: a view
  // refetches at most once a second anyway (web/src/live.ts), and each notice costs the server a WebSocket frame that
  // two threads handle (front-door.js).
  noticeMs: 1000,
  // The server's stats go to a client that watches them every 2 s when they changed, as the UI asked GET /api/stats:
  // an HTTP ask cost the server 1.3-2.1 ms of CPU under bench:ui's load, a message on the open socket a fraction.
  statsMs: 2000,
  // Per feed and client, per flush: 1000 spans every 250 ms is more than a person can follow.
  maxQueueItems: 1000,
  // Converting a stored span to its JSON view costs about as much CPU as receiving it, so the feed gets a
  // fixed slice of the server's time (under 1 % of a core at these defaults, a hundred or two spans per
  // flush on a laptop); what does not fit is skipped and counted.
  flushBudgetMs: 2,
  // A browser that has not read this much yet is behind: skip what would be sent until it catches up.
  maxBufferedBytes: 1 << 20,
  // ...and one that stays behind this long is cut: it holds its backlog in memory.
  behindLimitMs: 5_000,
  // A client holds at most maxBufferedBytes and one flush more (about 2.5 MiB): this bounds what browsers that
  // never read can cost.
  maxClients: 128,
  heartbeatMs: 30_000,
};

const CLOSE_GRACE_MS = 500;
/**
 * Each arrival is counted for every different query of its feed watched: a bound on what watches cost ingest. The UI
 * watches a feed without filters when a watch is refused.
 */
const MAX_WATCHED_QUERIES = 32;
const BUDGET_CHECK_EVERY = 16;
/** WebSocket close code 1008 (policy violation): the client did not read what it was sent. */
const CLOSE_BEHIND = 1008;

/**
 * What changed for a watched query since the feed began watching it, counted once for every client that watches the
 * same query (a client's `Watch` holds how much of it that client has been told): with a hundred clients watching
 * the same views, each arrival was counted a hundred times, and 128 such clients cost the soak's ingest 11-19 %.
 * Arrivals are matched on the timer, not when they are stored; past the queue's bound they all count as matches,
 * which costs a needless refetch at worst and never a missed one. A query without filters matches every arrival,
 * and queues none: a queued item lives until the timer, long enough to outlive the young generation it was made in,
 * and a Logs view's watch held 6,000 records a second so. `metrics` (the metrics feed): how many metrics appeared or
 * went away. `clients`: how many clients watch it.
 * @typedef {{ query: string, listing: import('../query/engine.js').Listing, added: number, evicted: number, matched: number,
 *   metrics: number, queue: any[][], queued: number, clients: number }} Watched
 * @typedef {{ watched: Watched, added: number, evicted: number, matched: number, metrics: number }} Watch a client's
 *   view of a watched query: the counts it has been told up to
 */

/** Whether a watch has anything to tell: items added or evicted, or metrics that appeared or went away. @param {Watch} watch */
const hasChanges = (watch) => watch.watched.added > watch.added || watch.watched.evicted > watch.evicted || watch.watched.metrics > watch.metrics;

/** Takes a client's view of its watched query up to now: it has nothing to tell. @param {Watch} watch */
function caughtUp(watch) {
  const { added, evicted, matched, metrics } = watch.watched;
  return Object.assign(watch, { added, evicted, matched, metrics });
}

/** A view's query string as the REST routes get it: a repeated parameter becomes a list, which the engine refuses. @param {string} text */
function queryObject(text) {
  /** @type {Record<string, string|string[]>} */
  const out = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const had = out[key];
    out[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return out;
}

class Client {
  /** @param {import('ws').WebSocket} ws */
  constructor(ws) {
    this.ws = ws;
    /** @type {Set<Feed>} */
    this.feeds = new Set();
    /** Store batches and journal entries waiting for the next flush, by reference only. */
    /** @type {Record<import('../otlp/signals.js').SignalName, Entry[][]> & { requests: JournalEntry[] }} */
    this.queues = perFeed(() => []);
    this.queued = perFeed(() => 0);
    this.skipped = perFeed(() => 0);
    /** how many items of each feed had arrived when this client stopped taking them (its queue full, or it behind) */
    this.closedAt = perFeed(() => 0);
    this.alive = true;
    /** when this client's unread backlog first passed the bound, or 0 */
    this.behindSince = 0;
    /** @type {Map<Feed, Watch>} the queries of the views this client shows (protocol version 2) */
    this.watches = new Map();
    /** flushes since this client's last change notice */
    this.flushesSinceNotice = Infinity;
    /** whether this client watches the stats (`watch` with `stats: true`) */
    this.watchesStats = false;
    /** the last stats message sent to this client */
    this.statsSent = '';
  }

  /** @param {Feed} feed */
  drop(feed) {
    this.skipped[feed] += this.queued[feed];
    this.queues[feed] = [];
    this.queued[feed] = 0;
  }
}

/**
 * Serves the live feed on the API's server. Returns `close()`, which the app's own close also calls.
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
 *   live?: LiveOptions, counted?: Int32Array, stats?: () => object }} deps `counted`: where the number of live clients
 *   is kept, in memory the front door's thread reads too (front-door.js); `stats`: GET /api/stats's answer
 */
export function registerLive(app, { store, journal, live = {}, counted = new Int32Array(1), stats = () => ({ signals: store.stats() }) }) {
  const options = { ...DEFAULTS, ...live };
  /** Counted in flushes, not read off a clock: a flush a millisecond early would put a notice off by a whole flush. */
  const flushesPerNotice = Math.max(1, Math.round(options.noticeMs / options.flushMs));
  const flushesPerStats = Math.max(1, Math.round(options.statsMs / options.flushMs));
  let flushesSinceStats = 0;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
  /** @type {Set<Client>} */
  const clients = new Set();
  // Counted before its 101 is written, in the same turn as onConnection: the front door stops counting an upgrade it
  // handed on as soon as it reads the answer, and would otherwise hand on one more in between.
  wss.on('headers', () => Atomics.store(counted, 0, clients.size + 1));
  /**
   * The clients that take each feed's arrivals now. A client whose queue is full, or that is behind, leaves the
   * set until the next flush empties its queue, and what arrives meanwhile is counted from `arrived`: with a
   * hundred browsers that do not keep up, each arrival would otherwise be offered to every one of them.
   * @type {Record<Feed, Set<Client>>}
   */
  const subscribers = perFeed(() => new Set());
  /** items of each feed stored (journal entries recorded) since the server started */
  const arrived = perFeed(() => 0);
  /** @type {ReturnType<typeof setInterval> | null} */
  let flushTimer = null;
  let closed = false;

  /**
   * How many of `n` arrivals a client's queue takes; one that takes fewer than all is full, and stops taking the
   * feed until it is reopened. Called after `arrived` counts them.
   * @param {Client} client @param {Feed} feed @param {number} n
   */
  function admit(client, feed, n) {
    if (client.queued[feed] + n < options.maxQueueItems) return n;
    const room = Math.max(0, options.maxQueueItems - client.queued[feed]);
    client.skipped[feed] += n - room;
    stopTaking(client, feed);
    return room;
  }

  /** @param {Client} client @param {Feed} feed */
  function stopTaking(client, feed) {
    if (subscribers[feed].delete(client)) client.closedAt[feed] = arrived[feed];
  }

  /** A client takes its feeds again, told what it missed while it did not. @param {Client} client */
  function reopen(client) {
    for (const feed of client.feeds) {
      if (subscribers[feed].has(client)) continue;
      client.skipped[feed] += arrived[feed] - client.closedAt[feed];
      subscribers[feed].add(client);
    }
  }

  /** @type {Record<Feed, Map<string, Watched>>} each feed's watched queries, by their text */
  const watched = perFeed(() => new Map());

  /**
   * Which metrics are stored, kept while a view watches the metrics feed: a list of metrics changes only when
   * one appears or goes away, which this tells without grouping every stored point again.
   * @type {MetricCensus|null}
   */
  let census = null;

  /** @param {Watched} watch @param {any[]} arrived @param {number} evicted @param {number} [metrics] */
  function note(watch, arrived, evicted, metrics = 0) {
    watch.added += arrived.length;
    watch.evicted += evicted;
    watch.metrics += metrics;
    if (watch.listing.perTrace || watch.listing.filters.length === 0) watch.matched += arrived.length;
    else if (watch.queued + arrived.length <= options.maxQueueItems) {
      watch.queue.push(arrived);
      watch.queued += arrived.length;
    } else watch.matched += arrived.length;
  }

  /** Matches a watched query's queued arrivals, as many as `budgetLeft` allows; the rest count as matches. @param {Watched} watch @param {() => boolean} budgetLeft */
  function matchQueued(watch, budgetLeft) {
    for (const batch of watch.queue) {
      if (budgetLeft()) for (const item of batch) watch.matched += watch.listing.match(item) ? 1 : 0;
      else watch.matched += batch.length;
    }
    watch.queue = [];
    watch.queued = 0;
  }

  const unsubscribeStore = store.subscribe(({ signal, entries, evicted }) => {
    const metrics = signal === 'metrics' && census ? census.apply(entries, evicted) : 0;
    for (const watch of watched[signal].values()) note(watch, entries, evicted.length, metrics);
    arrived[signal] += entries.length;
    for (const client of subscribers[signal]) {
      const n = admit(client, signal, entries.length);
      if (n <= 0) continue;
      client.queues[signal].push(n === entries.length ? entries : entries.slice(0, n));
      client.queued[signal] += n;
    }
  });

  const unsubscribeJournal = journal.subscribe((entry, evicted) => {
    if (watched.requests.size > 0) {
      const arrived = [entry];
      for (const watch of watched.requests.values()) note(watch, arrived, evicted ? 1 : 0);
    }
    arrived.requests++;
    for (const client of subscribers.requests) {
      if (admit(client, 'requests', 1) === 0) continue;
      client.queues.requests.push(entry);
      client.queued.requests++;
    }
  });

  // A stream that opens or closes changes its row in a grouped request list, though no entry is recorded.
  const unsubscribeStreams = journal.onStream(() => {
    for (const watch of watched.requests.values()) {
      watch.added++;
      watch.matched++;
    }
  });

  let clearNoticeSent = false;

  /**
   * A clearing empties what every open page shows, whoever cleared (DELETE /api/telemetry, or a test calling
   * clear() in-process): each client drops what it holds of the cleared feeds and is told to start over.
   * The store and the journal cleared in one turn, as DELETE does, make one notice.
   * @param {readonly Feed[]} feeds
   */
  function cleared(feeds) {
    for (const feed of feeds) {
      for (const watch of watched[feed].values()) {
        watch.queue = [];
        watch.queued = 0;
      }
    }
    for (const client of clients) {
      for (const feed of feeds) {
        client.queues[feed] = [];
        client.queued[feed] = 0;
        client.skipped[feed] = 0;
        client.closedAt[feed] = arrived[feed];
        const watch = client.watches.get(feed);
        if (watch) caughtUp(watch);
      }
    }
    if (feeds.includes('metrics')) census?.clear();
    if (clearNoticeSent) return;
    clearNoticeSent = true;
    queueMicrotask(() => {
      clearNoticeSent = false;
    });
    for (const client of clients) send(client, { type: 'cleared' });
  }
  const unsubscribeStoreCleared = store.onCleared(() => cleared(STORE_FEEDS));
  const unsubscribeJournalCleared = journal.onCleared(() => cleared(['requests']));

  /** @param {Client} client @param {unknown} message */
  function send(client, message) {
    if (client.ws.readyState === client.ws.OPEN) client.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  let rotation = 0;

  /** The stats message, made once for every client that watches them. */
  const statsMessage = () => JSON.stringify({ type: 'stats', stats: stats() });

  /** @param {Client} client @param {string} message */
  function sendStats(client, message) {
    if (message === client.statsSent) return;
    client.statsSent = message;
    send(client, message);
  }

  /** Every `statsMs`, the stats to each client that watches them and has not been sent these figures. */
  function flushStats() {
    if (++flushesSinceStats < flushesPerStats) return;
    flushesSinceStats = 0;
    let message = '';
    for (const client of clients) {
      if (!client.watchesStats || client.ws.bufferedAmount > options.maxBufferedBytes) continue;
      message ||= statsMessage();
      sendStats(client, message);
    }
  }

  function flush() {
    flushStats();
    const started = performance.now();
    let overBudget = false;
    const budgetLeft = () => !overBudget && !(overBudget = performance.now() - started > options.flushBudgetMs);
    // The queued arrivals are matched at every flush, notices due or not, so that a queue's bound is per flush.
    for (const feed of FEEDS) for (const watch of watched[feed].values()) matchQueued(watch, budgetLeft);
    // One span is often sent to several browsers: serialise it once per flush.
    /** @type {Map<object, string>} */
    const json = new Map();
    /** @param {any} item @param {(item: any) => any} view */
    const text = (item, view) => {
      let s = json.get(item);
      if (s === undefined) {
        s = JSON.stringify(view(item));
        json.set(item, s);
      }
      return s;
    };
    // Whoever comes first gets the most of the budget: take turns. Once the budget is spent (sending counts: with
    // a hundred browsers, the writes alone held the loop for 200 ms) the clients not yet served are served first
    // next time, keeping what they hold, within their queues' limits.
    const order = [...clients];
    const first = rotation % Math.max(1, order.length);
    let served = 0;
    for (const client of [...order.slice(first), ...order.slice(0, first)]) {
      if (served > 0 && !budgetLeft()) break;
      served++;
      if (client.ws.readyState !== client.ws.OPEN) continue;
      if (client.ws.bufferedAmount > options.maxBufferedBytes) {
        client.behindSince ||= Date.now();
        if (Date.now() - client.behindSince > options.behindLimitMs) {
          cut(client);
          continue;
        }
        for (const feed of FEEDS) {
          client.drop(feed);
          stopTaking(client, feed);
        }
        continue;
      }
      client.behindSince = 0;
      notifyChanges(client);
      /** @type {string[]} */
      const parts = [];
      // Journal entries are small and say what happened to every request: they never wait for the budget.
      if (client.queued.requests) {
        parts.push(`"requests":[${client.queues.requests.map((e) => text(e, (x) => x)).join(',')}]`);
      }
      if (client.queued.metrics) {
        /** @type {Entry[]} */
        const points = [];
        for (const batch of client.queues.metrics) {
          if (budgetLeft()) points.push(...batch);
          else client.skipped.metrics += batch.length;
        }
        if (points.length) parts.push(`"metrics":${JSON.stringify(metricViews(points))}`);
      }
      for (const [feed, view] of ITEM_FEEDS) {
        if (!client.queued[feed]) continue;
        const items = [];
        for (const batch of client.queues[feed]) {
          let i = 0;
          // One request can hold thousands of items: look at the clock every few of them.
          while (i < batch.length && budgetLeft()) {
            const end = Math.min(batch.length, i + BUDGET_CHECK_EVERY);
            for (; i < end; i++) items.push(text(batch[i], view));
          }
          client.skipped[feed] += batch.length - i;
        }
        if (items.length) parts.push(`"${feed}":[${items.join(',')}]`);
      }
      for (const feed of FEEDS) {
        client.queues[feed] = [];
        client.queued[feed] = 0;
      }
      reopen(client);
      if (parts.length) send(client, `{"type":"batch",${parts.join(',')}}`);
      const count = FEEDS.reduce((n, feed) => n + client.skipped[feed], 0);
      if (count > 0) {
        /** @type {Partial<Record<Feed, number>>} */
        const feeds = {};
        for (const feed of FEEDS) if (client.skipped[feed]) feeds[feed] = client.skipped[feed];
        send(client, { type: 'skipped', count, feeds });
        for (const feed of FEEDS) client.skipped[feed] = 0;
      }
    }
    rotation = first + (served === order.length ? 1 : served);
  }

  /**
   * Closes a client that stopped reading. The close frame cannot get past an unread backlog, so the socket goes
   * too; the page reconnects and refetches.
   * @param {Client} client
   */
  function cut(client) {
    client.ws.close(CLOSE_BEHIND, 'too far behind: reconnect');
    client.ws.terminate();
  }

  /**
   * Tells a client's views what changed for their queries; the counts of a notice that cannot go out now
   * are kept for the next, so a view is never left stale.
   * @param {Client} client
   */
  function notifyChanges(client) {
    client.flushesSinceNotice++;
    let any = false;
    for (const watch of client.watches.values()) any ||= hasChanges(watch);
    if (!any || client.flushesSinceNotice < flushesPerNotice) return;
    client.flushesSinceNotice = 0;
    /** @type {Partial<Record<Feed, { added: number, matched: number, evicted: number, metrics?: number }>>} */
    const feeds = {};
    for (const [feed, watch] of client.watches) {
      if (!hasChanges(watch)) continue;
      const now = watch.watched;
      feeds[feed] = {
        added: now.added - watch.added,
        matched: now.matched - watch.matched,
        evicted: now.evicted - watch.evicted,
        ...(feed === 'metrics' && { metrics: now.metrics - watch.metrics }),
      };
      caughtUp(watch);
    }
    send(client, { type: 'changed', feeds });
  }

  const heartbeat = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  /** @param {Client} client @param {unknown} raw */
  function onMessage(client, raw) {
    /** @type {any} */
    let msg;
    try {
      msg = JSON.parse(String(raw));
    } catch {
      send(client, { type: 'error', message: 'messages must be JSON objects such as {"type":"subscribe","feeds":["traces"]}' });
      return;
    }
    if (msg?.type === 'watch') return watch(client, msg.views, msg.stats);
    if (msg?.type !== 'subscribe') {
      send(client, { type: 'error', message: `unknown message type ${JSON.stringify(msg?.type)}: "subscribe" or "watch"` });
      return;
    }
    const wanted = msg.feeds ?? [];
    if (!Array.isArray(wanted) || wanted.some((f) => !FEEDS.includes(f))) {
      send(client, { type: 'error', message: `feeds must be a list of ${FEEDS.join(', ')}` });
      return;
    }
    for (const feed of FEEDS) {
      if (wanted.includes(feed)) {
        if (client.feeds.has(feed)) continue;
        client.feeds.add(feed);
        subscribers[feed].add(client);
      } else {
        client.feeds.delete(feed);
        subscribers[feed].delete(client);
        client.drop(feed);
        client.skipped[feed] = 0;
      }
    }
    send(client, { type: 'subscribed', feeds: FEEDS.filter((f) => client.feeds.has(f)) });
  }

  /** @param {Client} client @param {unknown} views @param {unknown} withStats */
  function watch(client, views, withStats = false) {
    if (typeof views !== 'object' || views === null || Array.isArray(views)) {
      send(client, { type: 'error', message: 'views must be an object such as {"traces":"service=checkout","logs":"severity=17"}' });
      return;
    }
    if (typeof withStats !== 'boolean') {
      send(client, { type: 'error', message: `stats must be true or false; got ${JSON.stringify(withStats)}` });
      return;
    }
    /** @type {Map<Feed, { query: string, listing: import('../query/engine.js').Listing }>} */
    const asked = new Map();
    for (const [name, query] of Object.entries(views)) {
      const feed = /** @type {Feed} */ (name);
      if (!FEEDS.includes(feed) || typeof query !== 'string') {
        send(client, { type: 'error', message: `views maps ${FEEDS.join(', ')} to a query string; got ${JSON.stringify(name)}` });
        return;
      }
      /** @type {import('../query/engine.js').Listing} */
      let queried;
      try {
        queried = listing(feed, queryObject(query), { store, journal });
      } catch (err) {
        send(client, { type: 'error', message: `views.${feed}: ${/** @type {Error} */ (err).message}` });
        return;
      }
      // Queries that match every arrival (and every traces query: its matches are the spans added) count alike.
      const key = queried.perTrace || queried.filters.length === 0 ? '' : query;
      const mine = client.watches.get(feed)?.watched;
      const frees = mine !== undefined && mine.clients === 1 && mine.query !== key;
      if (key !== '' && !watched[feed].has(key) && watched[feed].size - (frees ? 1 : 0) >= MAX_WATCHED_QUERIES) {
        send(client, {
          type: 'error',
          message: `views.${feed}: the feed already watches ${MAX_WATCHED_QUERIES} different queries of ${feed}; watch it without filters ("")`,
        });
        return;
      }
      asked.set(feed, { query: key, listing: queried });
    }
    /** @type {Map<Feed, Watch>} */
    const next = new Map();
    for (const [feed, { query, listing: queried }] of asked) {
      const kept = client.watches.get(feed);
      next.set(feed, kept?.watched.query === query ? kept : join(feed, query, queried));
    }
    for (const [feed, watch] of client.watches) if (next.get(feed) !== watch) leave(feed, watch);
    client.watches = next;
    countMetrics();
    send(client, { type: 'watching', views: [...next.keys()], stats: withStats });
    // A client that starts watching the stats has them at once, and then when they change.
    if (withStats && !client.watchesStats) {
      client.statsSent = '';
      sendStats(client, statsMessage());
    }
    client.watchesStats = withStats;
  }

  /**
   * A client's view of a watched query, which it shares with every client that watches the same: from now on.
   * @param {Feed} feed @param {string} query @param {import('../query/engine.js').Listing} queried
   * @returns {Watch}
   */
  function join(feed, query, queried) {
    let shared = watched[feed].get(query);
    if (!shared) {
      shared = { query, listing: queried, added: 0, evicted: 0, matched: 0, metrics: 0, queue: [], queued: 0, clients: 0 };
      watched[feed].set(query, shared);
    }
    // What arrived before this client watched is matched now, to be counted as told: at most a flush's queue.
    else matchQueued(shared, () => true);
    shared.clients++;
    return caughtUp({ watched: shared, added: 0, evicted: 0, matched: 0, metrics: 0 });
  }

  /** @param {Feed} feed @param {Watch} watch */
  function leave(feed, watch) {
    if (--watch.watched.clients === 0) watched[feed].delete(watch.watched.query);
  }

  /** Counts the stored metrics from the first view of them on, and forgets them when none is open. */
  function countMetrics() {
    if (watched.metrics.size === 0) {
      census?.abandon();
      census = null;
    } else
      census ??= new MetricCensus(store.ring('metrics'), (moved) => {
        // What arrived while the stored points were counted was reported as no change of metric: said now, once.
        if (!moved) return;
        for (const watch of watched.metrics.values()) watch.metrics++;
      });
  }

  /** @param {import('ws').WebSocket} ws */
  function onConnection(ws) {
    const client = new Client(ws);
    clients.add(client);
    Atomics.store(counted, 0, clients.size);
    flushTimer ??= setInterval(flush, options.flushMs);
    ws.on('message', (raw) => onMessage(client, raw));
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      clients.delete(client);
      Atomics.store(counted, 0, clients.size);
      for (const feed of FEEDS) subscribers[feed].delete(client);
      for (const [feed, watch] of client.watches) leave(feed, watch);
      client.watches = new Map();
      countMetrics();
      if (clients.size === 0 && flushTimer) {
        clearInterval(flushTimer);
        flushTimer = null;
      }
    });
    send(client, { type: 'hello', version: PROTOCOL_VERSION, feeds: FEEDS, flushMs: options.flushMs });
  }

  /**
   * @param {import('node:http').IncomingMessage} req @param {import('node:stream').Duplex} socket @param {Buffer} head
   */
  function onUpgrade(req, socket, head) {
    // Node hands an upgrade's socket over without the error listener it keeps on every other one: a client that
    // resets it, at any moment, would otherwise end the process.
    socket.on('error', () => socket.destroy());
    if (closed) {
      const message = 'the server is stopping';
      return refuseAndClose(socket, { status: 503, message, body: { statusCode: 503, error: 'Service Unavailable', message } });
    }
    const refusal = upgradeRefusal(accessOf(app), req, clients.size, options.maxClients);
    if (refusal) {
      const answer = () => refuseAndClose(socket, refusal);
      const pace = paceOf(app, refusal);
      if (!pace) return answer();
      // A refusal that would wait too long, or whose client left meanwhile, is not answered.
      void pace.turn(socket).then((due) => (due ? answer() : socket.destroy()));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws));
  }
  app.server.on('upgrade', onUpgrade);

  async function close() {
    if (closed) return;
    closed = true;
    unsubscribeStore();
    unsubscribeJournal();
    unsubscribeStreams();
    unsubscribeStoreCleared();
    unsubscribeJournalCleared();
    clearInterval(heartbeat);
    if (flushTimer) clearInterval(flushTimer);
    flushTimer = null;
    app.server.off('upgrade', onUpgrade);
    const open = [...clients];
    for (const client of open) client.ws.close(1001, 'server stopping');
    // Browsers answer the close handshake at once; anything still open after the grace period is cut.
    await Promise.race([
      Promise.all(open.map((c) => new Promise((resolve) => (c.ws.readyState === c.ws.CLOSED ? resolve(null) : c.ws.once('close', resolve))))),
      new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref()),
    ]);
    for (const client of clients) client.ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve(null)));
  }

  // preClose runs before the HTTP server waits for its connections, which an open WebSocket would hold.
  app.addHook('preClose', async () => {
    await close();
  });

  return {
    close,
    get clients() {
      return clients.size;
    },
    maxClients: options.maxClients,
  };
}
