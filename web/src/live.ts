import { useSyncExternalStore } from 'react';
import { api, SNAPSHOT_LIMITS } from './api';
import { attrsKey, nsToMs, spanDurationMs } from './format';
import type { Feed, JournalEntry, LiveMessage, LogRecord, Metric, Span, Stats, StoredTrace } from './types';

/**
 * The browser's copy of the telemetry: a REST snapshot plus the live feed (docs/live.md), bounded so a
 * long session or a flood cannot exhaust the tab. Views read it through `useLive()` and re-render at most
 * a few times per second however fast batches arrive.
 */

const FEEDS: Feed[] = ['traces', 'logs', 'metrics', 'requests'];
const MAX_SPANS = 50_000;
const MAX_LOGS = 20_000;
const MAX_POINTS_PER_METRIC = 2_000;
const MAX_REQUESTS = 5_000;
const RENDER_INTERVAL_MS = 250;
const STATS_INTERVAL_MS = 2_000;
const ACK_TIMEOUT_MS = 2_000;

export interface TraceSummary {
  traceId: string;
  spans: Span[];
  spanIds: Set<string>;
  root: Span | undefined;
  services: Set<string>;
  errorCount: number;
  startMs: number;
  endMs: number;
}

export interface MetricSeries extends Metric {
  key: string;
  pointKeys: Set<string>;
}

export type Status = 'connecting' | 'live' | 'paused' | 'offline';

function metricKey(m: Pick<Metric, 'service' | 'name' | 'type' | 'unit' | 'scope'>): string {
  return [m.service, m.scope.name, m.name, m.type, m.unit].join('\u0000');
}

/** The span a trace is named after: the one without a parent, else the earliest one received. */
export function traceRoot(t: TraceSummary): Span | undefined {
  return t.root ?? t.spans[0];
}

export class TelemetryData {
  traces = new Map<string, TraceSummary>();
  /**
   * The server's summary of every stored trace at the last snapshot: the list shows these too, so it
   * covers traces whose spans are older than the spans loaded into the page.
   */
  storedTraces: StoredTrace[] = [];
  spanCount = 0;
  logs: LogRecord[] = [];
  metrics = new Map<string, MetricSeries>();
  requests: JournalEntry[] = [];
  private requestIds = new Set<number>();

  reset(): void {
    this.traces = new Map();
    this.storedTraces = [];
    this.spanCount = 0;
    this.logs = [];
    this.metrics = new Map();
    this.requests = [];
    this.requestIds = new Set();
  }

  addSpans(spans: Span[], skip?: Set<number>): void {
    for (const s of spans) {
      if (skip?.has(s.requestId)) continue;
      let t = this.traces.get(s.traceId);
      if (!t) {
        t = {
          traceId: s.traceId,
          spans: [],
          spanIds: new Set(),
          root: undefined,
          services: new Set(),
          errorCount: 0,
          startMs: Infinity,
          endMs: -Infinity,
        };
        this.traces.set(s.traceId, t);
      }
      if (t.spanIds.has(s.spanId)) continue;
      t.spanIds.add(s.spanId);
      t.spans.push(s);
      this.spanCount++;
      if (!s.parentSpanId) t.root = s;
      t.services.add(s.service);
      if (s.status.code === 2) t.errorCount++;
      const start = nsToMs(s.startTimeUnixNano);
      if (start < t.startMs) t.startMs = start;
      const end = start + spanDurationMs(s);
      if (end > t.endMs) t.endMs = end;
    }
    if (this.spanCount > MAX_SPANS) {
      // Map iteration order is insertion order, so the traces first seen go first.
      for (const [id, t] of this.traces) {
        if (this.spanCount <= MAX_SPANS * 0.9) break;
        this.traces.delete(id);
        this.spanCount -= t.spans.length;
      }
    }
  }

  addLogs(logs: LogRecord[], skip?: Set<number>): void {
    for (const l of logs) if (!skip?.has(l.requestId)) this.logs.push(l);
    if (this.logs.length > MAX_LOGS * 1.1) this.logs = this.logs.slice(this.logs.length - MAX_LOGS);
  }

  addMetrics(metrics: Metric[]): void {
    for (const m of metrics) {
      const key = metricKey(m);
      let series = this.metrics.get(key);
      if (!series) {
        series = { ...m, key, dataPoints: [], pointKeys: new Set() };
        this.metrics.set(key, series);
      }
      series.description ||= m.description;
      for (const p of m.dataPoints) {
        const pk = `${p.startTimeUnixNano}|${p.timeUnixNano}|${attrsKey(p.attributes)}`;
        if (series.pointKeys.has(pk)) continue;
        series.pointKeys.add(pk);
        series.dataPoints.push(p);
      }
      if (series.dataPoints.length > MAX_POINTS_PER_METRIC) {
        const drop = series.dataPoints.length - MAX_POINTS_PER_METRIC;
        series.dataPoints = series.dataPoints.slice(drop);
        series.pointKeys = new Set(
          series.dataPoints.map((p) => `${p.startTimeUnixNano}|${p.timeUnixNano}|${attrsKey(p.attributes)}`),
        );
      }
    }
  }

  addRequests(entries: JournalEntry[]): void {
    for (const e of entries) {
      if (this.requestIds.has(e.id)) continue;
      this.requestIds.add(e.id);
      this.requests.push(e);
    }
    if (this.requests.length > MAX_REQUESTS * 1.1) {
      const dropped = this.requests.splice(0, this.requests.length - MAX_REQUESTS);
      for (const e of dropped) this.requestIds.delete(e.id);
    }
  }
}

type Batch = Extract<LiveMessage, { type: 'batch' }>;

export class LiveClient {
  readonly data = new TelemetryData();
  status: Status = 'connecting';
  paused = false;
  loading = true;
  skipped = 0;
  stats: Stats | null = null;
  error: string | null = null;
  version = 0;

  private ws: WebSocket | null = null;
  private listeners = new Set<() => void>();
  private renderTimer: ReturnType<typeof setTimeout> | null = null;
  private reconnectDelay = 500;
  private syncGen = 0;
  private pending: Batch[] | null = null;
  private ackWaiters: (() => void)[] = [];
  private loadedOnce = false;

  start(): void {
    this.connect();
    this.pollStats();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  /** Immediate re-render, for state the user is waiting on (status, pause, a finished refresh). */
  private emit(): void {
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = null;
    }
    this.version++;
    for (const l of this.listeners) l();
  }

  /** Coalesced re-render for live data: many batches, one render per interval. */
  private scheduleRender(): void {
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = null;
      this.emit();
    }, RENDER_INTERVAL_MS);
  }

  private connect(): void {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${proto}://${location.host}/api/live`);
    this.ws = ws;
    ws.onopen = () => {
      this.reconnectDelay = 500;
      if (this.paused) this.send({ type: 'subscribe', feeds: [] });
      else void this.refresh();
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.onMessage(JSON.parse(ev.data) as LiveMessage);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.status = 'offline';
      this.releaseAckWaiters();
      this.emit();
      // Without the live feed the REST snapshot still shows what the server holds.
      if (!this.loadedOnce) void this.refresh();
      setTimeout(() => this.connect(), this.reconnectDelay);
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, 5000);
    };
  }

  private send(msg: unknown): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  private releaseAckWaiters(): void {
    const waiters = this.ackWaiters;
    this.ackWaiters = [];
    for (const w of waiters) w();
  }

  private onMessage(msg: LiveMessage): void {
    switch (msg.type) {
      case 'subscribed':
        this.releaseAckWaiters();
        break;
      case 'batch':
        if (this.paused) return;
        if (this.pending) this.pending.push(msg);
        else {
          this.apply(msg);
          this.scheduleRender();
        }
        break;
      case 'skipped':
        if (this.paused) return;
        this.skipped += msg.count;
        this.scheduleRender();
        break;
      case 'cleared':
        this.data.reset();
        this.skipped = 0;
        this.emit();
        void this.fetchStats();
        break;
      case 'error':
        this.error = msg.message;
        this.emit();
        break;
    }
  }

  private apply(batch: Batch, skip?: Set<number>): void {
    if (batch.traces) this.data.addSpans(batch.traces, skip);
    if (batch.logs) this.data.addLogs(batch.logs, skip);
    if (batch.metrics) this.data.addMetrics(batch.metrics);
    if (batch.requests) this.data.addRequests(batch.requests);
  }

  /** Subscribes (and waits for the server to confirm), then loads the snapshot, so nothing falls in between. */
  async refresh(): Promise<void> {
    const gen = ++this.syncGen;
    this.pending = [];
    this.loading = true;
    this.emit();
    if (this.ws?.readyState === WebSocket.OPEN) {
      const acked = new Promise<void>((resolve) => {
        this.ackWaiters.push(resolve);
        setTimeout(resolve, ACK_TIMEOUT_MS);
      });
      this.send({ type: 'subscribe', feeds: FEEDS });
      await acked;
    }
    try {
      const [spans, traces, logs, metrics, requests] = await Promise.all([
        api.spans(`limit=${SNAPSHOT_LIMITS.spans}`),
        api.traces(`limit=${SNAPSHOT_LIMITS.traces}`),
        api.logs(`limit=${SNAPSHOT_LIMITS.logs}`),
        api.metrics(),
        api.requests(`limit=${SNAPSHOT_LIMITS.requests}`),
      ]);
      if (gen !== this.syncGen) return;
      const data = this.data;
      data.reset();
      const seen = new Set<number>();
      for (const s of spans.spans) seen.add(s.requestId);
      for (const l of logs.logs) seen.add(l.requestId);
      data.addSpans(spans.spans);
      data.storedTraces = traces.traces;
      data.addLogs([...logs.logs].sort((a, b) => logTime(a) - logTime(b)));
      data.addMetrics(metrics.metrics);
      data.addRequests([...requests.requests].reverse());
      for (const b of this.pending ?? []) this.apply(b, seen);
      this.error = null;
      this.loadedOnce = true;
    } catch (err) {
      if (gen !== this.syncGen) return;
      this.error = `Could not load data: ${(err as Error).message}`;
    }
    this.pending = null;
    this.loading = false;
    this.skipped = 0;
    this.status = this.paused ? 'paused' : this.ws?.readyState === WebSocket.OPEN ? 'live' : 'offline';
    this.emit();
    void this.fetchStats();
  }

  pause(): void {
    this.paused = true;
    this.status = 'paused';
    this.send({ type: 'subscribe', feeds: [] });
    this.emit();
  }

  resume(): void {
    this.paused = false;
    void this.refresh();
  }

  async clear(): Promise<void> {
    await api.clear();
    this.data.reset();
    this.skipped = 0;
    this.emit();
    void this.fetchStats();
  }

  private async fetchStats(): Promise<void> {
    try {
      this.stats = await api.stats();
      this.scheduleRender();
    } catch {
      // The header keeps its last figures; the connection status already tells the user the server is away.
    }
  }

  private pollStats(): void {
    setTimeout(async () => {
      if (!this.paused && document.visibilityState === 'visible') await this.fetchStats();
      this.pollStats();
    }, STATS_INTERVAL_MS);
  }
}

export function logTime(l: LogRecord): number {
  return nsToMs(l.timeUnixNano !== '0' && l.timeUnixNano ? l.timeUnixNano : l.observedTimeUnixNano);
}

export const live = new LiveClient();

/** Subscribes a component to the live data; returns a version number that changes on every update. */
export function useLive(): number {
  return useSyncExternalStore(live.subscribe, live.getVersion);
}
