/** Shapes of the REST API and the live feed (docs/live.md); every string in them is untrusted text. */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attrs = Record<string, AttrValue>;
export type Signal = 'traces' | 'logs' | 'metrics';
export type Feed = Signal | 'requests';

export interface Scope {
  name: string;
  version: string;
}

export interface SpanEvent {
  timeUnixNano: string;
  name: string;
  attributes: Attrs;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attrs;
}

export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  flags: number;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  durationNanos?: string;
  attributes: Attrs;
  droppedAttributesCount: number;
  status: { code: number; message: string };
  events: SpanEvent[];
  links: SpanLink[];
  resource: Attrs;
  scope: Scope;
  service: string;
  requestId: number;
}

export interface LogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: AttrValue;
  attributes: Attrs;
  traceId: string;
  spanId: string;
  flags: number;
  eventName: string;
  resource: Attrs;
  scope: Scope;
  service: string;
  requestId: number;
}

export interface Exemplar {
  timeUnixNano: string;
  asDouble?: number | string;
  asInt?: string;
  traceId?: string;
  spanId?: string;
  filteredAttributes?: unknown;
}

export interface DataPoint {
  attributes: Attrs;
  startTimeUnixNano: string;
  timeUnixNano: string;
  asDouble?: number | string;
  asInt?: string;
  count?: string;
  sum?: number | string;
  min?: number | string;
  max?: number | string;
  bucketCounts?: string[];
  explicitBounds?: (number | string)[];
  scale?: number;
  zeroCount?: string;
  positive?: { offset: number; bucketCounts: string[] };
  negative?: { offset: number; bucketCounts: string[] };
  quantileValues?: { quantile: number; value: number | string }[];
  exemplars?: Exemplar[];
  flags?: number;
}

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary';

export interface Metric {
  name: string;
  description: string;
  unit: string;
  type: MetricType;
  aggregationTemporality?: number;
  isMonotonic?: boolean;
  resource: Attrs;
  scope: Scope;
  service: string;
  dataPoints: DataPoint[];
}

export interface JournalEntry {
  id: number;
  time: string;
  transport: 'http' | 'grpc';
  signal: string;
  path: string;
  contentType: string;
  contentEncoding: string;
  bytes: number;
  items: number;
  userAgent: string;
  headers: Record<string, string | string[]>;
  fault: null | { id: string; action: string };
  response: { status: number; message: string; partialSuccess?: unknown };
  durationMs?: number;
  outcome: 'accepted' | 'partial' | 'rejected' | 'faulted';
}

export interface JournalDetail extends JournalEntry {
  body?: unknown;
}

export interface FaultRule {
  id: string;
  action: string;
  [key: string]: unknown;
}

export interface SignalStats {
  stored?: number;
  evicted?: number;
  [key: string]: unknown;
}

/** A row of GET /api/traces: one stored trace, summarised by the server. */
export interface StoredTrace {
  traceId: string;
  rootName: string;
  rootService: string;
  hasRoot: boolean;
  services: string[];
  spanCount: number;
  errorCount: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  durationNanos: string;
}

export interface Stats {
  signals?: Partial<Record<Signal, SignalStats>>;
  requests?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Messages of the live feed, server to browser. */
export type LiveMessage =
  | { type: 'hello'; version: number; feeds: Feed[]; flushMs: number }
  | { type: 'subscribed'; feeds: Feed[] }
  | { type: 'batch'; traces?: Span[]; logs?: LogRecord[]; metrics?: Metric[]; requests?: JournalEntry[] }
  | { type: 'skipped'; count: number; feeds: Partial<Record<Feed, number>> }
  | { type: 'cleared' }
  | { type: 'error'; message: string };
