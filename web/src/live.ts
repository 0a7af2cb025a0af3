import { useEffect, useSyncExternalStore } from 'react';
import { adminToken, api } from './api';
import type { Stats } from './generated/api';
import type { Feed, LiveMessage } from './types';

/**
 * The live feed (docs/live.md): the browser keeps no copy of the store. Each mounted view tells the
 * server which query it shows (`watch`); the server answers with `changed` notices, and the view
 * refetches its page from the REST API. Notices are coalesced here so a view refetches at most every
 * REFETCH_INTERVAL_MS during a burst, and always once after the last notice; a notice after a quiet
 * interval is acted on at once. The header's stats come the same way, in a `stats` message when they change (at most
 * every 2 s); only a page whose feed is down asks GET /api/stats for them.
 */

const STATS_INTERVAL_MS = 2_000;
/**
 * While telemetry keeps arriving, a view asks for its page once a second: each ask of the Traces view counts the
 * traces of everything stored, and with one tab on it at 20,000 items/s, asking every 500 ms left the server
 * 0.79x of its ingest per CPU-second without a page, every second 1.02x (npm run bench:ui, median of 3).
 */
const REFETCH_INTERVAL_MS = 1_000;
const FIRST_RECONNECT_DELAY_MS = 500;
const MAX_RECONNECT_DELAY_MS = 5_000;

export type Status = 'connecting' | 'live' | 'paused' | 'offline';

/**
 * What a view shows of its feed's matches: the items themselves, or only which metrics there are (a list of
 * metrics, which a new data point of a metric already listed leaves as it is).
 */
export type Shown = 'items' | 'metrics';
type Counter = `${Feed}/${Shown}`;
const counter = (feed: Feed, shown: Shown): Counter => `${feed}/${shown}`;
const SHOWN: Shown[] = ['items', 'metrics'];

interface Watcher {
  feed: Feed;
  query: string;
}

export class LiveClient {
  status: Status = 'connecting';
  paused = false;
  stats: Stats | null = null;
  error: string | null = null;

  private version = 0;
  /** The server's feeds (its `hello`: a feed per signal, and requests); until then, the ones watched. */
  private feeds = new Set<Feed>();
  private changes: Partial<Record<Counter, number>> = {};
  private matched: Partial<Record<Feed, number>> = {};
  private dirty = new Set<Counter>();
  private lastBump = 0;
  private bumpTimer: ReturnType<typeof setTimeout> | null = null;
  private watchers = new Set<Watcher>();
  private watchQueued = false;
  private sentWatch = '';
  /** Set after the server refused a watched query: every watched feed is then watched unfiltered. */
  private watchAll = false;
  private ws: WebSocket | null = null;
  private connectedOnce = false;
  /** Whether the open feed sends the stats. */
  private statsPushed = false;
  private reconnectDelay = FIRST_RECONNECT_DELAY_MS;
  private listeners = new Set<() => void>();

  start(): void {
    this.connect();
    this.pollStats();
    // A tab out of sight shows no figures: it takes them again when it is looked at.
    document.addEventListener('visibilitychange', () => this.sendWatch());
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  changeCount(feed: Feed, shown: Shown = 'items'): number {
    return this.changes[counter(feed, shown)] ?? 0;
  }

  /**
   * How many new items matched the feed's watched query, summed over every notice so far. The difference
   * between two readings is how many rows arrived above a list's loaded rows (for traces: spans, so at
   * least as many as the new traces), so a refetch can load those too and keep the rows in view.
   */
  matchedCount(feed: Feed): number {
    return this.matched[feed] ?? 0;
  }

  private emit(): void {
    this.version++;
    for (const l of this.listeners) l();
  }

  /** Registers a view's query; returns its removal. */
  watch(feed: Feed, query: string): () => void {
    const w = { feed, query };
    this.watchers.add(w);
    this.watchAll = false;
    this.queueWatch();
    return () => {
      this.watchers.delete(w);
      this.queueWatch();
    };
  }

  /** A route change unmounts one view and mounts the next in the same task: one message for both. */
  private queueWatch(): void {
    if (this.watchQueued) return;
    this.watchQueued = true;
    queueMicrotask(() => {
      this.watchQueued = false;
      this.sendWatch();
    });
  }

  private sendWatch(): void {
    const views: Partial<Record<Feed, string>> = {};
    if (!this.paused) {
      for (const w of this.watchers) {
        const query = this.watchAll ? '' : w.query;
        // Two views of one feed with different filters: watch the whole feed so neither misses a change.
        views[w.feed] = w.feed in views && views[w.feed] !== query ? '' : query;
      }
    }
    const stats = !this.paused && document.visibilityState === 'visible';
    const msg = JSON.stringify({ type: 'watch', views, stats });
    if (msg === this.sentWatch || this.ws?.readyState !== WebSocket.OPEN) return;
    this.ws.send(msg);
    this.sentWatch = msg;
  }

  /** Every feed a view may watch: the server's, and any watched before the server named them. */
  private allFeeds(): Feed[] {
    return [...this.feeds, ...[...this.watchers].map((w) => w.feed)];
  }

  /** Bumps the change counters of `feeds` (what every view shows of them), at most once per interval, and always once after the last call. */
  private markChanged(feeds: Iterable<Feed>): void {
    this.markCounters([...feeds].flatMap((f) => SHOWN.map((shown) => counter(f, shown))));
  }

  private markCounters(counters: Iterable<Counter>): void {
    for (const c of counters) this.dirty.add(c);
    if (this.bumpTimer || this.dirty.size === 0) return;
    const wait = Math.max(0, this.lastBump + REFETCH_INTERVAL_MS - Date.now());
    this.bumpTimer = setTimeout(() => {
      this.bumpTimer = null;
      this.lastBump = Date.now();
      for (const f of this.dirty) this.changes[f] = (this.changes[f] ?? 0) + 1;
      this.dirty.clear();
      this.emit();
    }, wait);
  }

  private connect(): void {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    // Browsers set no headers on a WebSocket: the admin token goes as a query parameter.
    const token = adminToken();
    const ws = new WebSocket(`${proto}://${location.host}/api/live${token ? `?token=${encodeURIComponent(token)}` : ''}`);
    this.ws = ws;
    ws.onopen = () => {
      this.reconnectDelay = FIRST_RECONNECT_DELAY_MS;
      this.sentWatch = '';
      this.sendWatch();
      // Whatever arrived while the feed was down is only in the server's answers.
      if (this.connectedOnce && !this.paused) this.markChanged(this.allFeeds());
      this.connectedOnce = true;
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.onMessage(JSON.parse(ev.data) as LiveMessage);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.statsPushed = false;
      this.status = 'offline';
      this.emit();
      setTimeout(() => this.connect(), this.reconnectDelay);
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, MAX_RECONNECT_DELAY_MS);
    };
  }

  private onMessage(msg: LiveMessage): void {
    switch (msg.type) {
      case 'hello':
        for (const f of msg.feeds) this.feeds.add(f);
        break;
      case 'watching':
        // Changes are reported from here on, so the views may call themselves live. What arrived between a
        // view's first fetch and this answer was reported to nobody: each watched feed fetches once more.
        this.status = this.paused ? 'paused' : 'live';
        this.markChanged(msg.views);
        this.emit();
        break;
      case 'stats':
        this.statsPushed = true;
        this.stats = msg.stats;
        this.emit();
        break;
      case 'changed': {
        if (this.paused) return;
        const counters: Counter[] = [];
        for (const [f, c] of Object.entries(msg.feeds)) {
          if (!c) continue;
          this.matched[f] = (this.matched[f] ?? 0) + c.matched;
          const items = c.matched > 0 || c.evicted > 0;
          if (items) counters.push(counter(f, 'items'));
          if (c.metrics === undefined ? items : c.metrics > 0) counters.push(counter(f, 'metrics'));
        }
        this.markCounters(counters);
        break;
      }
      case 'cleared':
        this.markChanged(this.allFeeds());
        void this.fetchStats();
        break;
      case 'error':
        if (!this.watchAll) {
          this.watchAll = true;
          this.sendWatch();
        } else {
          this.error = `Live feed: ${msg.message}`;
          this.emit();
        }
        break;
    }
  }

  pause(): void {
    this.paused = true;
    this.status = 'paused';
    this.sendWatch();
    this.emit();
  }

  resume(): void {
    this.paused = false;
    this.status = this.ws?.readyState === WebSocket.OPEN ? 'connecting' : 'offline';
    this.sendWatch();
    this.markChanged(this.allFeeds());
    this.emit();
  }

  async clear(): Promise<void> {
    try {
      await api.clear();
      this.error = null;
    } catch (err) {
      this.error = `Could not clear: ${(err as Error).message}`;
    }
    this.markChanged(this.allFeeds());
    this.emit();
    void this.fetchStats();
  }

  private async fetchStats(): Promise<void> {
    try {
      this.stats = await api.stats();
      this.emit();
    } catch {
      // The header keeps its last figures; the connection status already tells the user the server is away.
    }
  }

  private pollStats(): void {
    setTimeout(async () => {
      if (!this.paused && !this.statsPushed && document.visibilityState === 'visible') await this.fetchStats();
      this.pollStats();
    }, STATS_INTERVAL_MS);
  }
}

export const live = new LiveClient();

/** Re-renders the caller whenever the header's state (status, pause, stats, errors) changes. */
export function useLive(): number {
  return useSyncExternalStore(live.subscribe, live.getVersion);
}

/** useWatch over several feeds at once (their number may change): the sum of their change counts. */
export function useWatchAll(feeds: Feed[], query: string): number {
  const key = feeds.join(',');
  useEffect(() => {
    const stops = key
      .split(',')
      .filter(Boolean)
      .map((feed) => live.watch(feed, query));
    return () => stops.forEach((stop) => stop());
  }, [key, query]);
  return useSyncExternalStore(live.subscribe, () => feeds.reduce((n, feed) => n + live.changeCount(feed), 0));
}

/**
 * Re-renders the caller and returns a number that changes whenever the server says the watched query of this feed may
 * have new results (a `changed` notice with matched > 0 or evicted > 0, or for `shown` 'metrics' one where a metric
 * appeared or went away; a `cleared`, a reconnect, a Resume); views put it in the deps of the effect that fetches their
 * page. `query` is the view's filter query string (no limit/cursor/order).
 */
export function useWatch(feed: Feed, query: string, shown: Shown = 'items'): number {
  useEffect(() => live.watch(feed, query), [feed, query]);
  return useSyncExternalStore(live.subscribe, () => live.changeCount(feed, shown));
}
