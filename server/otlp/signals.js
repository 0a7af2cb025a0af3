// The signal table: the one place an OTLP signal is described. The transports are built from it, the
// store sizes its rings and budgets by it, the console and the UI take their words from it (the UI through
// GET /api/signals); no other module spells out the signals one by one.
import { pointsOf } from './metric.js';
import { resolveJsonStrings } from './decode/profiles.js';

/**
 * @typedef {'traces'|'metrics'|'logs'|'profiles'} SignalName
 * @typedef {'spans'|'metrics'|'logs'|'profiles'} ListKind
 * @typedef {'span'|'data point'|'log record'|'sample'} ItemKindName
 * @typedef {'maxSpans'|'maxPoints'|'maxLogs'|'maxSamples'} CountOption
 * @typedef {'maxSpanBytes'|'maxPointBytes'|'maxLogBytes'|'maxSampleBytes'} BytesOption
 * @typedef {{
 *   countOption: CountOption, countFlag: string, countDefault: number, countHelp: string,
 *   bytesOption: BytesOption, bytesFlag: string, bytesDefault: number, bytesHelp: string,
 * }} Budget
 *   the options that bound what the store keeps of a signal: an item cap and a byte budget (store/budget.js)
 * @typedef {{
 *   name: SignalName,
 *   listKind: ListKind,
 *   item: { kind: ItemKindName, one: string, many: string },
 *   short: 'spans'|'points'|'logs'|'samples',
 *   label: string,
 *   order: number,
 *   httpPath: string,
 *   grpcService: string,
 *   grpcMethod: string,
 *   requestType: string,
 *   responseType: string,
 *   protoFile: string,
 *   rootField: 'resourceSpans'|'resourceMetrics'|'resourceLogs'|'resourceProfiles',
 *   scopeField: 'scopeSpans'|'scopeMetrics'|'scopeLogs'|'scopeProfiles',
 *   itemField: 'spans'|'metrics'|'logRecords'|'profiles',
 *   jsonRoots: string[],
 *   rejectedField: 'rejectedSpans'|'rejectedDataPoints'|'rejectedLogRecords'|'rejectedProfiles',
 *   storedItems: 'items'|'points'|'samples',
 *   hexIds: Record<string, number>,
 *   resolveJsonStrings?: (request: any, fieldError: (path: string, problem: string) => Error) => void,
 *   versionHeader?: { name: string, supported: string },
 *   traceIndex: boolean,
 *   budget: Budget,
 *   lazyItemBytes: number,
 *   builtItemBytes: number,
 *   countItems: (request: any) => number,
 * }} Signal
 *   `listKind`: the REST list (GET /api/<listKind>) and query kind of its items; `item`: what one item is
 *   called, in the console and the UI; `short`: the word for its items where space is short (the UI's header
 *   counts, per-service counts); `label`: its name as a title (the UI's tab); `order`: where people see it
 *   among the signals (the UI's tabs and counts, --help's options);
 *   `protoFile`: the proto/ file of its Export service; `jsonRoots`: the root field in both spellings
 *   OTLP/JSON allows; `storedItems`: `points` when the store keeps each data point of an item (metric) as
 *   one item, `samples` when it keeps each sample of an item (profile) as one item, `items` when it keeps the
 *   items themselves; `hexIds`: its bytes fields that OTLP/JSON writes in hex, and their sizes;
 *   `resolveJsonStrings`: its requests carry a table of strings that attributes may name by index (key_strindex,
 *   string_value_strindex; the other signals ignore those), and this puts them in place in a request decoded from
 *   OTLP/JSON (the protobuf decoder resolves them as it reads); `versionHeader`: the request header
 *   (HTTP) or metadata (gRPC) that names the version of its schema the sender wrote: absent means the
 *   supported one, any other value is refused as invalid; `traceIndex`: whether its items are indexed by
 *   trace id (spans, which make up traces); `lazyItemBytes` and `builtItemBytes`: what one item keeps
 *   besides its bytes (store/budget.js)
 */

const MiB = 1024 * 1024;

/** @param {string} camel @returns {string} */
const snakeCase = (camel) => camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

/** @param {string} rootField @param {string} scopeField @param {string} itemField */
const countNested = (rootField, scopeField, itemField) => (/** @type {any} */ request) => {
  let n = 0;
  for (const r of request[rootField]) for (const s of r[scopeField]) n += s[itemField].length;
  return n;
};

/** @param {any} request */
function countDataPoints(request) {
  let n = 0;
  for (const r of request.resourceMetrics) for (const s of r.scopeMetrics) for (const m of s.metrics) n += pointsOf(m).length;
  return n;
}

// Byte estimates, measured with `node --expose-gc` (store/budget.js says how). Items received in protobuf
// are kept as their request's bytes and, per item (`lazyItemBytes`): a span its LazySpan and trace index
// places (~140 bytes), a log record or data point its ring slot and a share of its context (~3 to 13 and
// ~25 bytes, places.js). Built items (`builtItemBytes`) weigh their bytes again and objects: ~300 bytes
// more per span, ~430 per log record, ~470 per data point (with its metric's objects).

/** @param {any} request */
function countSamples(request) {
  let n = 0;
  for (const r of request.resourceProfiles) for (const s of r.scopeProfiles) for (const p of s.profiles) n += p.samples.length;
  return n;
}

/** @type {Record<SignalName, Signal>} */
const TABLE = {
  traces: {
    name: 'traces',
    listKind: 'spans',
    item: { kind: 'span', one: 'span', many: 'spans' },
    short: 'spans',
    label: 'Traces',
    order: 0,
    httpPath: '/v1/traces',
    grpcService: 'opentelemetry.proto.collector.trace.v1.TraceService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
    responseType: 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
    protoFile: 'opentelemetry/proto/collector/trace/v1/trace_service.proto',
    rootField: 'resourceSpans',
    scopeField: 'scopeSpans',
    itemField: 'spans',
    jsonRoots: ['resourceSpans', snakeCase('resourceSpans')],
    rejectedField: 'rejectedSpans',
    hexIds: { traceId: 16, spanId: 8, parentSpanId: 8 },
    storedItems: 'items',
    traceIndex: true,
    budget: {
      countOption: 'maxSpans',
      countFlag: 'max-spans',
      countDefault: 100_000,
      countHelp: 'spans kept before the oldest are evicted (default 100000)',
      bytesOption: 'maxSpanBytes',
      bytesFlag: 'max-span-bytes',
      bytesDefault: 128 * MiB,
      bytesHelp: 'bytes stored spans may keep before the oldest are evicted (default 134217728 = 128 MiB)',
    },
    lazyItemBytes: 160,
    builtItemBytes: 320,
    countItems: countNested('resourceSpans', 'scopeSpans', 'spans'),
  },
  metrics: {
    name: 'metrics',
    listKind: 'metrics',
    item: { kind: 'data point', one: 'data point', many: 'data points' },
    short: 'points',
    label: 'Metrics',
    order: 2,
    httpPath: '/v1/metrics',
    grpcService: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
    responseType: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse',
    protoFile: 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
    rootField: 'resourceMetrics',
    scopeField: 'scopeMetrics',
    itemField: 'metrics',
    jsonRoots: ['resourceMetrics', snakeCase('resourceMetrics')],
    rejectedField: 'rejectedDataPoints',
    hexIds: { traceId: 16, spanId: 8 },
    storedItems: 'points',
    traceIndex: false,
    budget: {
      countOption: 'maxPoints',
      countFlag: 'max-points',
      countDefault: 100_000,
      countHelp: 'metric data points kept (default 100000)',
      bytesOption: 'maxPointBytes',
      bytesFlag: 'max-point-bytes',
      bytesDefault: 96 * MiB,
      bytesHelp: 'bytes stored data points may keep (default 100663296 = 96 MiB)',
    },
    lazyItemBytes: 32,
    builtItemBytes: 480,
    countItems: countDataPoints,
  },
  logs: {
    name: 'logs',
    listKind: 'logs',
    item: { kind: 'log record', one: 'log record', many: 'log records' },
    short: 'logs',
    label: 'Logs',
    order: 1,
    httpPath: '/v1/logs',
    grpcService: 'opentelemetry.proto.collector.logs.v1.LogsService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
    responseType: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
    protoFile: 'opentelemetry/proto/collector/logs/v1/logs_service.proto',
    rootField: 'resourceLogs',
    scopeField: 'scopeLogs',
    itemField: 'logRecords',
    jsonRoots: ['resourceLogs', snakeCase('resourceLogs')],
    rejectedField: 'rejectedLogRecords',
    hexIds: { traceId: 16, spanId: 8 },
    storedItems: 'items',
    traceIndex: false,
    budget: {
      countOption: 'maxLogs',
      countFlag: 'max-logs',
      countDefault: 100_000,
      countHelp: 'log records kept (default 100000)',
      bytesOption: 'maxLogBytes',
      bytesFlag: 'max-log-bytes',
      bytesDefault: 96 * MiB,
      bytesHelp: 'bytes stored log records may keep (default 100663296 = 96 MiB)',
    },
    lazyItemBytes: 16,
    builtItemBytes: 440,
    countItems: countNested('resourceLogs', 'scopeLogs', 'logRecords'),
  },
  // Development in the specification (v1development): one dictionary per request holds the strings,
  // functions, locations, stacks, mappings, attributes and links its profiles point into. The store keeps each
  // sample as one item; its profile and the dictionary are kept once (docs/profiles.md).
  profiles: {
    name: 'profiles',
    listKind: 'profiles',
    item: { kind: 'sample', one: 'sample', many: 'samples' },
    short: 'samples',
    label: 'Profiles',
    order: 3,
    httpPath: '/v1development/profiles',
    grpcService: 'opentelemetry.proto.collector.profiles.v1development.ProfilesService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest',
    responseType: 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceResponse',
    protoFile: 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto',
    rootField: 'resourceProfiles',
    scopeField: 'scopeProfiles',
    itemField: 'profiles',
    jsonRoots: ['resourceProfiles', snakeCase('resourceProfiles')],
    rejectedField: 'rejectedProfiles',
    hexIds: { profileId: 16, traceId: 16, spanId: 8 },
    storedItems: 'samples',
    resolveJsonStrings,
    versionHeader: { name: 'otlp-profiles-development-version', supported: '1' },
    traceIndex: false,
    budget: {
      countOption: 'maxSamples',
      countFlag: 'max-samples',
      countDefault: 100_000,
      countHelp: 'profile samples kept (default 100000)',
      bytesOption: 'maxSampleBytes',
      bytesFlag: 'max-sample-bytes',
      bytesDefault: 32 * MiB,
      bytesHelp: 'bytes stored profile samples may keep (default 33554432 = 32 MiB)',
    },
    lazyItemBytes: 24,
    builtItemBytes: 360,
    countItems: countSamples,
  },
};

export const SIGNALS = Object.freeze(TABLE);

/** Every signal, in the specification's order (traces, metrics, logs): the order messages list them in. */
export const SIGNAL_LIST = Object.freeze(Object.values(SIGNALS));

/** The bytes fields OTLP/JSON writes in hex, and their sizes: every row's `hexIds`. @type {ReadonlyMap<string, number>} */
export const ID_FIELDS = new Map(SIGNAL_LIST.flatMap((s) => Object.entries(s.hexIds)));

/** @type {readonly SignalName[]} */
export const SIGNAL_NAMES = Object.freeze(SIGNAL_LIST.map((s) => s.name));

/** @param {string} name @returns {Signal|undefined} */
export function signalByName(name) {
  return Object.hasOwn(SIGNALS, name) ? SIGNALS[/** @type {SignalName} */ (name)] : undefined;
}

/**
 * The signals' names (or another word of each) joined for a message: "traces, metrics, logs", or with `last`
 * "traces, metrics or logs".
 * @param {string} [last] @param {(signal: Readonly<Signal>) => string} [word]
 */
export function signalWords(last, word = (s) => s.name) {
  const words = SIGNAL_LIST.map(word);
  if (!last) return words.join(', ');
  return `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`;
}

/** The signal whose items a list kind lists (spans → traces). @param {string} kind @returns {Signal|undefined} */
export function signalByListKind(kind) {
  return SIGNAL_LIST.find((s) => s.listKind === kind);
}

/** Every signal in the order people see them (traces, logs, metrics): the UI's tabs and counts, --help's options. */
export const SIGNALS_SHOWN = Object.freeze([...SIGNAL_LIST].sort((a, b) => a.order - b.order));

/**
 * A value for every signal, keyed in the order people see them: the shape of every per-signal record
 * (counts, rings, budgets, totals).
 * @template T @param {(signal: Readonly<Signal>) => T} value @returns {Record<SignalName, T>}
 */
export function perSignal(value) {
  return /** @type {Record<SignalName, T>} */ (Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.name, value(s)])));
}

/**
 * What the UI reads of the table (GET /api/signals), in the table's order.
 * @returns {{ name: SignalName, label: string, order: number, listKind: ListKind, item: { one: string, many: string }, short: string }[]}
 */
export function signalsForUi() {
  return SIGNAL_LIST.map((s) => ({ name: s.name, label: s.label, order: s.order, listKind: s.listKind, item: { one: s.item.one, many: s.item.many }, short: s.short }));
}
