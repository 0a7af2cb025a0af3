/** Shapes of the REST API and the live feed (docs/live.md); every string in them is untrusted text. */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attrs = Record<string, AttrValue>;
/** A signal's name, as GET /api/signals lists them. */
export type Signal = string;
export type Feed = Signal | 'requests';

/** GET /api/signals: what the server's signal table says of one signal, for the UI. */
export interface SignalInfo {
  name: Signal;
  /** its name as a title: the tab */
  label: string;
  /** where the UI shows it among the signals (tabs, counts), lowest first */
  order: number;
  /** the list of its items: GET /api/<listKind> */
  listKind: string;
  item: { one: string; many: string };
  /** its items in one short word: the header's counts, the per-service counts' field */
  short: string;
}

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
  zeroThreshold?: number | string;
  positive?: { offset: number; bucketCounts: string[] };
  negative?: { offset: number; bucketCounts: string[] };
  quantileValues?: { quantile: number; value: number | string }[];
  exemplars?: Exemplar[];
  flags?: number;
}

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary';

/** What every answer of GET /api/metrics says of one metric: one metric of one resource instance. */
export interface MetricInfo {
  /** A short, stable form of the identity: the full resource, scope, name, type and unit. */
  key: string;
  name: string;
  description: string;
  unit: string;
  type: MetricType;
  aggregationTemporality?: number;
  isMonotonic?: boolean;
  resource: Attrs;
  scope: Scope;
  service: string;
}

/** A run of a series' points with one start: a cumulative series begins a new segment when it restarts. */
export interface MetricSegment {
  startTimeUnixNano: string;
  /** Indexes into the metric's `dataPoints`, oldest first. */
  points: number[];
}

/** The points of one attribute set. */
export interface MetricSeriesPoints {
  attributes: Attrs;
  segments: MetricSegment[];
}

/** GET /api/metrics (points=all). */
export interface Metric extends MetricInfo {
  dataPoints: DataPoint[];
  series: MetricSeriesPoints[];
}

/** GET /api/metrics?points=none: a metric for lists. */
export interface MetricListItem extends MetricInfo {
  pointCount: number;
  seriesCount: number;
  lastTimeUnixNano: string;
}

export interface JournalEntry {
  id: number;
  time: string;
  transport: 'http' | 'grpc' | 'otap' | 'import';
  signal: string;
  path: string;
  contentType: string;
  contentEncoding: string;
  bytes: number;
  items: number;
  userAgent: string;
  headers: Record<string, string | string[]>;
  fault: null | { id: string; action: string; side?: 'upstream' };
  /** What was sent back; absent when nothing was (outcome reset or hang). */
  response?: { status: number; message: string; partialSuccess?: unknown };
  durationMs?: number;
  outcome: 'accepted' | 'partial' | 'rejected' | 'faulted' | 'reset' | 'hang' | 'abandoned';
  /** With forwarding: whether the items were kept, the call to the primary target, and those to the tees. */
  stored?: boolean;
  upstream?: UpstreamLeg;
  tees?: UpstreamLeg[];
}

/** One call to a forward target, as the journal shows it (docs/forward.md). */
export interface UpstreamLeg {
  target: string;
  url: string;
  transport: 'grpc' | 'http';
  encoding: 'protobuf' | 'json';
  bytes: number;
  /** HTTP status or gRPC code the upstream answered (or a fault rule answered for it); null: no answer. */
  status: number | null;
  message: string;
  outcome: 'pending' | 'accepted' | 'partial' | 'refused' | 'failed' | 'timeout' | 'shed' | 'faulted';
  durationMs: number;
  fault?: { id: string; action: string };
  partialSuccess?: { rejected: number; errorMessage: string };
}

/** A forward target as GET /api/forward lists it. */
export interface ForwardTarget {
  id: string;
  url: string;
  transport: 'grpc' | 'http';
  encoding: 'received' | 'protobuf' | 'json';
  compression: 'none' | 'gzip';
  headers: Record<string, string>;
  role: 'primary' | 'tee';
  inflight: number;
  inflightBytes: number;
  accepted: number;
  partial: number;
  refused: number;
  failed: number;
  timeout: number;
  shed: number;
  shedBytes: number;
  faulted: number;
}

export interface ForwardList {
  targets: ForwardTarget[];
  timeoutMs: number;
  maxInflight: number;
  maxInflightBytes: number;
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
export interface TraceSummary {
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

/** GET /api/traces/:traceId: every stored span of one trace, oldest first. */
export interface TraceDetail {
  traceId: string;
  spans: Span[];
  summary: TraceSummary;
}

/** A row of GET /api/services: what the store holds of one service, for the service filters. */
export interface ServiceInfo {
  name: string;
  spans: number;
  logs: number;
  points: number;
  /** the service's colour: an index into the palette, given in order of first arrival and kept while the server runs */
  color: number;
}

/** A row of GET /api/resources: one service instance, by its full resource. */
export interface ResourceInfo {
  /** A short, stable form of the resource's identity (every attribute). */
  key: string;
  service: string;
  attributes: Attrs;
  sdk: { name: string; language: string; version: string } | null;
  userAgents: string[];
  /** ISO times of the first and last request that carried it, while the journal holds them ('' when it does not). */
  firstSeen: string;
  lastSeen: string;
  spans: number;
  logs: number;
  points: number;
}

export interface Stats {
  signals?: Partial<Record<Signal, SignalStats>>;
  requests?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What a `changed` notice says of one feed since the last notice. */
export interface FeedChange {
  added: number;
  matched: number;
  evicted: number;
}

/** Messages of the live feed that the UI uses, server to browser (docs/live.md). */
export type LiveMessage =
  | { type: 'hello'; version: number; feeds: Feed[]; flushMs: number }
  | { type: 'watching'; views: Feed[] }
  | { type: 'changed'; feeds: Partial<Record<Feed, FeedChange>> }
  | { type: 'cleared' }
  | { type: 'error'; message: string };
