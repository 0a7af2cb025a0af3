// The shapes the admin API answers with, written once: each is a shared schema (Fastify's addSchema), which
// routes name with `ref()` in their response schemas, the OpenAPI document lists under components.schemas,
// and the web's and the client's types are generated from (npm run api-types).
// Most replies are written by fast-json-stringify from their route's schema, which drops what the schema does
// not name and coerces what it types: every shape here is exact, and a map of arbitrary keys (attributes, a
// decoded body) stays open.
import { ACTION_NAMES } from '../faults/actions.js';
import { FAULT_COUNTS, FAULT_SIDES, FAULT_SIGNALS, FAULT_TRANSPORTS } from '../faults/rules.js';
import { COMPRESSIONS, ENCODINGS } from '../forward/target.js';
import { OUTCOMES, TRANSPORTS } from '../store/journal.js';
import { STREAM_END_CAUSES } from '../store/otap-streams.js';
import { ITEM_KINDS } from '../verify/select.js';
import { SIGNAL_NAMES, SIGNALS_SHOWN, perSignal } from '../otlp/signals.js';
import fastJsonStringify from 'fast-json-stringify';

/** A shared schema by its id. @param {string} id */
export const ref = (id) => ({ $ref: `${id}#` });

const str = { type: 'string' };
const int = { type: 'integer' };
const num = { type: 'number' };
const bool = { type: 'boolean' };
const nanos = { type: 'string', description: 'nanoseconds since the epoch, a decimal string' };
/** A double as OTLP/JSON writes it: a number, or "NaN", "Infinity", "-Infinity". */
const double = { type: ['number', 'string'] };
const uint64 = { type: 'string', description: 'a 64-bit count, a decimal string' };
const strings = { type: 'array', items: str };
const stringMap = { type: 'object', additionalProperties: str };
/** @param {string} description @param {Record<string, any>} properties @param {string[]} [optional] */
const closed = (description, properties, optional = []) => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  additionalProperties: false,
});
/** Counts of a row, one per signal shown, in the field named by its short word (spans, logs, points). */
const countsPerSignal = () => Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.short, { ...int, description: `${s.item.many} stored` }]));

const MATCH_DOC = 'Match only requests with these resource attributes (on any one resource) and headers; all must match.';
const matchFields = {
  resource: { ...stringMap, description: 'resource attribute → value, e.g. {"service.name": "checkout"}' },
  headers: { ...stringMap, description: 'request header or gRPC metadata name (case-insensitive) → value' },
};

const errorFields = {
  statusCode: int,
  code: { ...str, description: "the framework's error code, for errors it raised itself" },
  error: { ...str, description: "the status's reason phrase" },
  message: { ...str, description: 'what was wrong, naming the parameter or field' },
  path: { ...str, description: 'POST /api/verify: where in the body' },
};

/** @type {Record<string, Record<string, any>>} */
const SCHEMAS = {
  StatusError: closed('an error: its status, reason phrase and message', errorFields, ['code', 'path']),
  InputError: closed(
    'a refused input: what was wrong in error',
    {
      error: str,
      field: { ...str, description: 'the option that is wrong' },
      line: { ...int, description: 'POST /api/import: the line that is wrong' },
    },
    ['field', 'line'],
  ),
  AnyValue: {
    description: 'an attribute value: integers beyond 2^53 come as decimal strings, bytes as base64; arrays and maps hold the same kinds',
    type: ['string', 'number', 'boolean', 'null', 'array', 'object'],
    items: ref('AnyValue'),
    additionalProperties: ref('AnyValue'),
  },
  Attributes: { type: 'object', description: 'attribute key → value', additionalProperties: ref('AnyValue') },
  Scope: closed('the instrumentation scope', { name: str, version: str, attributes: ref('Attributes'), droppedAttributesCount: int }, ['droppedAttributesCount']),
  Span: closed(
    'a stored span, flat',
    {
      traceId: { ...str, description: '32 hex digits' },
      spanId: { ...str, description: '16 hex digits' },
      parentSpanId: { ...str, description: '"" for a root span' },
      traceState: str,
      flags: int,
      name: str,
      kind: { ...int, description: '0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer' },
      startTimeUnixNano: nanos,
      endTimeUnixNano: nanos,
      durationNanos: nanos,
      attributes: ref('Attributes'),
      droppedAttributesCount: int,
      status: closed('', { code: { ...int, description: '0 unset, 1 ok, 2 error' }, message: str }),
      events: {
        type: 'array',
        items: closed('', { timeUnixNano: nanos, name: str, attributes: ref('Attributes'), droppedAttributesCount: int }),
      },
      droppedEventsCount: int,
      links: {
        type: 'array',
        items: closed('', { traceId: str, spanId: str, traceState: str, flags: int, attributes: ref('Attributes'), droppedAttributesCount: int }),
      },
      droppedLinksCount: int,
      resource: ref('Attributes'),
      scope: ref('Scope'),
      resourceSchemaUrl: { ...str, description: 'only when sent' },
      scopeSchemaUrl: { ...str, description: 'only when sent' },
      service: { ...str, description: "the resource's service.name" },
      requestId: { ...int, description: 'the journal entry of the request it came in' },
    },
    ['resourceSchemaUrl', 'scopeSchemaUrl'],
  ),
  LogRecord: closed(
    'a stored log record, flat',
    {
      timeUnixNano: nanos,
      observedTimeUnixNano: nanos,
      severityNumber: { ...int, description: '1-24 (9 info, 13 warn, 17 error)' },
      severityText: str,
      body: ref('AnyValue'),
      attributes: ref('Attributes'),
      droppedAttributesCount: int,
      traceId: str,
      spanId: str,
      flags: int,
      eventName: str,
      resource: ref('Attributes'),
      scope: ref('Scope'),
      resourceSchemaUrl: { ...str, description: 'only when sent' },
      scopeSchemaUrl: { ...str, description: 'only when sent' },
      service: str,
      requestId: int,
    },
    ['resourceSchemaUrl', 'scopeSchemaUrl'],
  ),
  Exemplar: closed('', { timeUnixNano: nanos, asDouble: double, asInt: uint64, spanId: str, traceId: str, filteredAttributes: ref('Attributes') }, ['asDouble', 'asInt']),
  Buckets: closed('', { offset: int, bucketCounts: { type: 'array', items: uint64 } }),
  DataPoint: closed(
    'a data point in OTLP/JSON form: asDouble or asInt (gauge, sum); count, sum, bucketCounts... (histograms); quantileValues (summary)',
    {
      attributes: ref('Attributes'),
      startTimeUnixNano: nanos,
      timeUnixNano: nanos,
      flags: int,
      asDouble: double,
      asInt: uint64,
      count: uint64,
      sum: double,
      min: double,
      max: double,
      bucketCounts: { type: 'array', items: uint64 },
      explicitBounds: { type: 'array', items: double },
      scale: int,
      zeroCount: uint64,
      zeroThreshold: double,
      positive: ref('Buckets'),
      negative: ref('Buckets'),
      quantileValues: { type: 'array', items: closed('', { quantile: double, value: double }) },
      exemplars: { type: 'array', items: ref('Exemplar') },
    },
    [
      'asDouble',
      'asInt',
      'count',
      'sum',
      'min',
      'max',
      'bucketCounts',
      'explicitBounds',
      'scale',
      'zeroCount',
      'zeroThreshold',
      'positive',
      'negative',
      'quantileValues',
      'exemplars',
    ],
  ),
  MetricSegment: closed("a run of a series' points with one start: a cumulative series begins a new segment when it restarts", {
    startTimeUnixNano: nanos,
    points: { type: 'array', items: int, description: "indexes into the metric's dataPoints, oldest first" },
  }),
  MetricSeries: closed('the points of one attribute set', { attributes: ref('Attributes'), segments: { type: 'array', items: ref('MetricSegment') } }),
  Metric: closed(
    'GET /api/metrics (points=all): one metric of one resource instance, with its data points',
    {
      ...metricInfo(),
      dataPoints: { type: 'array', items: ref('DataPoint'), description: 'in arrival order' },
      series: { type: 'array', items: ref('MetricSeries') },
    },
    ['aggregationTemporality', 'isMonotonic'],
  ),
  MetricListItem: closed(
    'GET /api/metrics?points=none: a metric for lists',
    {
      ...metricInfo(),
      pointCount: int,
      seriesCount: { ...int, description: 'distinct attribute sets' },
      lastTimeUnixNano: { ...nanos, description: "the latest point's time" },
    },
    ['aggregationTemporality', 'isMonotonic'],
  ),
  TraceSummary: closed('a row of GET /api/traces: one stored trace', {
    traceId: str,
    rootName: { ...str, description: "the root span's name, or the first stored span's when the root is missing" },
    rootService: str,
    hasRoot: { ...bool, description: 'whether a span without a parent is stored' },
    services: { ...strings, description: 'every service with a span in the trace, in order of arrival' },
    spanCount: int,
    errorCount: { ...int, description: 'spans with status code 2' },
    startTimeUnixNano: { ...nanos, description: 'the earliest start, "0" when no span has one' },
    endTimeUnixNano: { ...nanos, description: 'the latest end' },
    durationNanos: nanos,
  }),
  TraceDetail: closed('GET /api/traces/{traceId}: every stored span of one trace, oldest first, and its row', {
    traceId: str,
    spans: { type: 'array', items: ref('Span') },
    summary: ref('TraceSummary'),
  }),
  ProfileFrame: closed("one frame of a sample's stack: a function, or a location without lines named by its address", {
    name: { ...str, description: "the function's name; its address (and mapping file) when the location has no lines" },
    systemName: str,
    file: str,
    line: int,
    address: { ...str, description: "the location's address, 0x hex" },
  }),
  ProfileSample: closed('one stored sample, its dictionary applied', {
    stack: { type: 'array', items: ref('ProfileFrame'), description: 'leaf (the running function) first' },
    values: { type: 'array', items: num, description: 'one per value of the sample type' },
    value: { ...num, description: 'the sum of values: what it weighs in a flame graph' },
    timestampsUnixNano: { type: 'array', items: nanos },
    attributes: ref('Attributes'),
    link: {
      type: ['object', 'null'],
      description: 'the span it was taken in; null when not linked',
      properties: { traceId: str, spanId: str },
      required: ['traceId', 'spanId'],
      additionalProperties: false,
    },
  }),
  Profile: closed(
    'a row of GET /api/profiles: one stored profile and its matching samples',
    { ...profileFields(), samples: { type: 'array', items: ref('ProfileSample'), description: 'samples=all: the matching samples, oldest first' } },
    ['originalPayloadFormat', 'samples'],
  ),
  ProfileDetail: closed(
    'GET /api/profiles/{profileId}: one profile with every sample',
    { ...profileFields(), samples: { type: 'array', items: ref('ProfileSample') }, stored: { ...int, description: 'how many stored profiles have the id' } },
    ['originalPayloadFormat'],
  ),
  StackNode: closed('a node of the merged stack tree: a function in the stacks that pass through its parent', {
    name: str,
    self: { ...num, description: 'the value of the samples whose stacks stop in it' },
    total: { ...num, description: 'the value of the samples whose stacks pass through it' },
    children: { type: 'array', items: ref('StackNode'), description: 'heaviest first' },
  }),
  ProfileFunction: closed('a row of the top-functions table', {
    name: str,
    file: str,
    self: { ...num, description: 'the value of the samples it is the leaf of' },
    total: { ...num, description: 'the value of the samples with it in their stacks, once per sample however often it recurs' },
    samples: int,
  }),
  ProfileAggregate: closed('GET /api/profiles/aggregate: the matching samples of one sample type merged', {
    type: str,
    unit: str,
    profiles: { ...int, description: 'profiles with a matching sample' },
    samples: { ...int, description: 'matching samples' },
    total: num,
    tree: { ...ref('StackNode'), description: 'from the roots: the node "all" holds every stack' },
    functions: { type: 'array', items: ref('ProfileFunction'), description: 'heaviest self value first, at most top' },
  }),
  UpstreamLeg: closed(
    'one call to one forward target, as the journal shows it',
    {
      target: str,
      url: str,
      transport: { ...str, enum: ['grpc', 'http'] },
      encoding: { ...str, enum: ['protobuf', 'json'] },
      bytes: int,
      status: { type: ['integer', 'null'], description: 'the HTTP status or gRPC code the upstream (or a fault rule for it) answered; null: no answer' },
      message: str,
      outcome: { ...str, enum: ['pending', 'accepted', 'partial', 'refused', 'failed', 'timeout', 'shed', 'faulted'] },
      durationMs: num,
      fault: closed('', { id: str, action: str }),
      partialSuccess: ref('PartialSuccess'),
    },
    ['fault', 'partialSuccess'],
  ),
  PartialSuccess: closed('', { rejected: int, errorMessage: str }),
  JournalEntry: closed('one received request', journalFields(), ['response', 'stored', 'upstream', 'tees', 'services', 'otap']),
  JournalDetail: closed(
    'GET /api/requests/{id}: a journal entry with its decoded body',
    { ...journalFields(), body: { description: 'the request as OTLP/JSON, rebuilt from what is still stored; null when nothing is' } },
    ['response', 'stored', 'upstream', 'tees', 'services', 'otap'],
  ),
  OtapStream: closed(
    'one OTAP stream as a whole: while the journal holds one of its batches, or, once closed with none held, until everything recorded before its end has gone',
    {
      id: { ...int, description: 'as its batches name it in otap.stream' },
      signal: { ...str, enum: SIGNAL_NAMES },
      method: { ...str, description: 'service and method, e.g. ArrowTracesService/ArrowTraces' },
      path: str,
      peer: { ...str, description: "the client's address, host:port" },
      userAgent: str,
      openedAt: { ...str, description: 'ISO 8601' },
      closedAt: { type: ['string', 'null'], description: 'ISO 8601; null while open' },
      state: { ...str, enum: ['open', 'closed'] },
      end: {
        type: ['object', 'null'],
        description: 'how it ended; null while open',
        properties: {
          cause: {
            ...str,
            enum: STREAM_END_CAUSES,
            description:
              'half-close: the client ended its side and was answered OK; cancel: the client reset or cancelled it, or its connection went; reset: a reset fault rule; idle: a message stalled past the idle timeout; error: the server ended it with a status of its own; shutdown: the server stopped',
          },
          status: { type: ['integer', 'null'], description: "the gRPC status of the stream's trailers; null when none was sent" },
          message: str,
        },
        required: ['cause', 'status', 'message'],
        additionalProperties: false,
      },
      durationMs: { ...num, description: 'from open to close, or to now while open' },
      batches: { ...int, description: 'batches recorded, held or evicted' },
      kept: { ...int, description: 'of them, held by the journal: GET /api/requests?stream=<id> lists them' },
      items: { ...int, description: 'items of every batch recorded' },
      bytes: { ...int, description: 'Arrow bytes of every batch recorded' },
      statuses: { type: 'object', description: 'BatchStatus code → batches answered with it', additionalProperties: int },
      unanswered: { ...int, description: 'batches answered with no status (reset, hang, abandoned)' },
      services: { ...strings, description: 'the service.name of the resources its batches carried (at most 16)' },
    },
  ),
  OtapStreamRow: closed('GET /api/requests?group=streams: an OTAP stream in place of its batches', {
    stream: ref('OtapStream'),
    matched: { ...int, description: 'its batches held by the journal that match the filters' },
  }),
  ServiceInfo: closed('what the store holds of one service', {
    name: str,
    ...countsPerSignal(),
    color: { ...int, description: "the service's colour: an index into the palette, given in order of first arrival and kept while the server runs" },
  }),
  ResourceInfo: closed('one service instance, by its full resource', {
    key: { ...str, description: "a short, stable form of the resource's identity (every attribute)" },
    service: str,
    attributes: ref('Attributes'),
    sdk: { type: ['object', 'null'], properties: { name: str, language: str, version: str }, required: ['name', 'language', 'version'], additionalProperties: false },
    userAgents: strings,
    firstSeen: { ...str, description: 'ISO time of the first request that carried it, while the journal holds it; "" when it does not' },
    lastSeen: str,
    ...countsPerSignal(),
  }),
  SignalInfo: closed('what the signal table says of one signal, for the UI', {
    name: { ...str, enum: SIGNAL_NAMES, description: 'the signal: its journal entries, stats and fault rules name it so' },
    label: { ...str, description: 'its name as a title, e.g. Traces' },
    order: { ...int, description: 'where the UI shows it among the signals (tabs, counts), lowest first' },
    listKind: { ...str, description: 'the list of its items: GET /api/<listKind>' },
    item: closed('', { one: { ...str, description: 'one item, e.g. span' }, many: { ...str, description: 'several, e.g. spans' } }),
    short: { ...str, description: 'its items in one short word, e.g. points: the field of per-service counts' },
  }),
  SignalStats: closed('', {
    stored: int,
    received: int,
    evicted: int,
    evictedForBytes: int,
    capacity: int,
    bytes: int,
    byteBudget: { type: ['integer', 'null'], description: 'null: no byte budget' },
  }),
  Stats: closed(
    'GET /api/stats',
    {
      signals: closed(
        '',
        perSignal(() => ref('SignalStats')),
      ),
      requests: closed('', {
        total: int,
        stored: { ...int, description: 'journal entries kept' },
        byTransport: { type: 'object', description: 'transport → outcome → requests', additionalProperties: { type: 'object', additionalProperties: int } },
        otapStreams: closed('OTAP streams as wholes', {
          opened: { ...int, description: 'since the server started' },
          open: { ...int, description: 'open now' },
          stored: { ...int, description: 'records held' },
          evicted: { ...int, description: 'records evicted with their batches' },
        }),
        bodies: closed('bodies of requests not stored, kept for the journal', {
          stored: int,
          bytes: int,
          byteBudget: { type: ['integer', 'null'] },
        }),
      }),
      waiters: { ...int, description: 'queries waiting (minCount)' },
      print: closed('console output (--print)', { mode: str, queued: int, dropped: int }),
      forward: closed('', {
        targets: { type: 'array', items: closed('', { id: str, url: str, inflight: int, inflightBytes: int, ...forwardCounts(), shedBytes: int }) },
        limits: closed('', { timeoutMs: int, maxInflight: int, maxInflightBytes: int }),
      }),
    },
    ['forward'],
  ),
  FaultMatch: { type: 'object', description: MATCH_DOC, properties: matchFields },
  FaultRule: {
    type: 'object',
    description: 'a fault rule with every default filled in, and its counters',
    required: ['id', 'action', 'side', 'signals', 'transports', 'match', 'times', 'after', 'probability', 'matched', 'applied', 'remaining', 'spent'],
    additionalProperties: false,
    properties: {
      id: str,
      action: { ...str, enum: ACTION_NAMES },
      side: { ...str, enum: FAULT_SIDES },
      signals: { type: 'array', items: { ...str, enum: FAULT_SIGNALS } },
      transports: { type: 'array', items: { ...str, enum: FAULT_TRANSPORTS } },
      match: closed(MATCH_DOC, matchFields),
      times: { type: ['integer', 'null'], description: 'null: unlimited' },
      after: int,
      probability: num,
      per: { ...str, enum: FAULT_COUNTS, description: 'side upstream only: what times, after and probability count' },
      retryAfterMs: { type: ['integer', 'null'], description: 'null: no Retry-After / RetryInfo' },
      delayMs: int,
      httpStatus: int,
      grpcCode: int,
      rejectItems: int,
      message: str,
      matched: { ...int, description: 'requests that passed the filters while the rule was live' },
      applied: { ...int, description: 'faults injected' },
      remaining: { type: ['integer', 'null'], description: 'faults left before the rule is spent; null: unlimited' },
      spent: { ...bool, description: 'times is used up: the rule no longer matches' },
    },
  },
  Attempt: closed('one attempt of a batch', {
    id: { ...int, description: 'the journal entry' },
    time: { ...str, description: 'when it arrived (ISO 8601)' },
    status: { type: ['integer', 'null'], description: 'HTTP status or gRPC code; null when nothing was sent' },
    outcome: { ...str, enum: OUTCOMES },
    fault: { type: ['string', 'null'], description: 'the rule that faulted it' },
    durationMs: num,
    gapMs: { type: ['number', 'null'], description: "from the previous attempt's answer to this attempt's arrival" },
  }),
  RetryChain: closed('one batch: the attempt the rule caught and the retries that followed', {
    attempts: { type: 'array', items: ref('Attempt') },
    retryable: { ...bool, description: 'whether the first answer is retryable by the OTLP specification' },
    waitMs: { type: ['number', 'null'], description: 'what Retry-After / RetryInfo asked for' },
    gapsMs: { type: 'array', items: num },
    outcome: { ...str, enum: ['delivered', 'gave up', 'not retried', 'waiting'] },
    verdict: ref('Verdict'),
    ok: { ...bool, description: 'whether the exporter did as the specification says (a batch still waiting broke nothing yet)' },
    finalAt: { type: ['string', 'null'], description: "when a waiting batch's verdict and outcome become final (ISO 8601); null once final" },
    explanation: str,
  }),
  Verdict: {
    type: 'string',
    enum: [
      'honoured Retry-After',
      'honoured RetryInfo',
      'retried too soon',
      'retried',
      'did not retry',
      'retried a non-retryable error',
      'did not retry a non-retryable error',
      'not an error',
      'waiting',
    ],
  },
  RetryReport: closed("a fault rule's retry report", {
    rule: ref('FaultRule'),
    chains: { type: 'array', items: ref('RetryChain') },
    verdict: { type: 'string', description: 'the worst chain\'s verdict (one that breaks the rules), else waiting; "not triggered" when the rule faulted nothing' },
    ok: { ...bool, description: 'no batch broke the rules (so far, while one is waiting)' },
    final: { ...bool, description: 'no batch is waiting: the verdict will not change unless the rule faults again' },
    finalAt: { type: ['string', 'null'] },
    counts: { type: 'object', description: 'batches by verdict', additionalProperties: int },
    message: str,
  }),
  ForwardTarget: closed('a forward target, with its calls under way and their outcomes', {
    id: str,
    url: str,
    transport: { ...str, enum: ['grpc', 'http'] },
    encoding: { ...str, enum: ENCODINGS },
    compression: { ...str, enum: COMPRESSIONS },
    headers: { ...stringMap, description: 'values of secret-looking headers are shown as (redacted)' },
    role: { ...str, enum: ['primary', 'tee'] },
    inflight: { ...int, description: 'requests under way now' },
    inflightBytes: { ...int, description: 'their bytes' },
    ...forwardCounts(),
    shedBytes: int,
    lastFailure: {
      ...closed('the last call that did not succeed (refused, failed, timeout, shed or faulted)', {
        outcome: { ...str, enum: ['refused', 'failed', 'timeout', 'shed', 'faulted'] },
        status: { type: ['integer', 'null'], description: 'HTTP status or gRPC code the target answered; null: no answer' },
        message: str,
        time: { ...str, description: 'ISO time' },
      }),
      type: ['object', 'null'],
      description: 'the last call that did not succeed (refused, failed, timeout, shed or faulted); null when none has',
    },
  }),
  ForwardList: closed('', {
    targets: { type: 'array', items: ref('ForwardTarget') },
    timeoutMs: { ...int, description: '--forward-timeout-ms' },
    maxInflight: { ...int, description: '--forward-max-inflight, per target' },
    maxInflightBytes: { ...int, description: '--forward-max-inflight-bytes, per target' },
  }),
  VerifyResult: closed('POST /api/verify: whether the expectations hold, and why not', {
    ok: bool,
    message: { ...str, description: 'why not, as a test failure would say it' },
    elapsedMs: num,
    expectations: {
      type: 'array',
      items: closed('', {
        index: int,
        name: { type: ['string', 'null'] },
        signal: { ...str, enum: ITEM_KINDS },
        description: { ...str, description: 'e.g. spans with service=checkout, name=POST /pay' },
        count: { ...str, description: 'e.g. exactly 1' },
        found: int,
        met: bool,
        matches: { ...strings, description: 'a few of the matching items, described' },
        candidates: {
          type: 'array',
          description: 'unmet: the nearest misses',
          items: closed('', { item: str, differs: { type: 'array', items: closed('', { wanted: str, got: str }) } }),
        },
      }),
    },
    unexpected: {
      type: 'array',
      description: 'items of a nothingElse service no expectation matched',
      items: closed('', { service: str, signal: { ...str, enum: ITEM_KINDS }, item: str }),
    },
    others: {
      type: 'object',
      description: 'what no expectation matched, per item kind',
      additionalProperties: closed('', { total: int, byService: { type: 'object', additionalProperties: int } }),
    },
  }),
};

function metricInfo() {
  return {
    key: { ...str, description: 'a short, stable form of the identity: the full resource, scope, name, type and unit' },
    name: str,
    description: str,
    unit: str,
    type: { ...str, enum: ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] },
    aggregationTemporality: { ...int, description: '1 delta, 2 cumulative' },
    isMonotonic: bool,
    resource: ref('Attributes'),
    scope: ref('Scope'),
    service: str,
  };
}

function journalFields() {
  return {
    id: int,
    time: { ...str, description: 'ISO 8601' },
    transport: { ...str, enum: [...TRANSPORTS] },
    signal: { type: ['string', 'null'], enum: [...SIGNAL_NAMES, null] },
    path: str,
    contentType: str,
    contentEncoding: str,
    bytes: int,
    items: int,
    services: { ...strings, description: 'the service.name of each resource carried; absent when the body was not decoded' },
    userAgent: str,
    headers: { ...stringMap, description: 'request headers or gRPC metadata: secret-looking values shown as (redacted); Content-Length left out (it is bytes)' },
    fault: {
      type: ['object', 'null'],
      description: 'the fault rule applied',
      properties: { id: str, action: str, side: { ...str, enum: ['upstream'] } },
      required: ['id', 'action'],
      additionalProperties: false,
    },
    response: closed(
      'what was sent back: HTTP status or gRPC code; absent when nothing was (outcome reset, hang or abandoned)',
      { status: int, message: str, partialSuccess: ref('PartialSuccess') },
      ['partialSuccess'],
    ),
    outcome: { ...str, enum: OUTCOMES },
    durationMs: num,
    stored: { ...bool, description: 'with forwarding: whether the items were kept' },
    upstream: ref('UpstreamLeg'),
    tees: { type: 'array', items: ref('UpstreamLeg') },
    otap: closed("an OTAP batch's place: its stream and its batch_id", {
      stream: { ...int, description: 'the OTAP stream, numbered in the order streams opened within the server process (from 1)' },
      batch: { ...str, description: 'the batch_id the producer gave, as a decimal string (an int64)' },
    }),
  };
}

/** A profile's row, without its samples: the list's and one profile's. */
function profileFields() {
  return {
    profileId: { ...str, description: '32 hex digits, "" when unset' },
    service: str,
    type: { ...str, description: 'the sample type (cpu)' },
    unit: { ...str, description: "the sample type's unit (nanoseconds)" },
    periodType: { ...str, description: 'type:unit of period, "" when unset' },
    period: num,
    timeUnixNano: nanos,
    durationNano: { ...uint64, description: 'nanoseconds' },
    sampleCount: { ...int, description: 'matching samples' },
    total: { ...num, description: 'the sum of their values' },
    attributes: ref('Attributes'),
    resource: ref('Attributes'),
    scope: closed('', { name: str, version: str }),
    requestId: { ...int, description: 'the journal entry of the request it came in' },
    originalPayloadFormat: { ...str, description: 'only when sent' },
  };
}

function forwardCounts() {
  return {
    accepted: int,
    partial: int,
    refused: { ...int, description: 'the target answered an error' },
    failed: { ...int, description: 'no answer: connection refused or dropped' },
    timeout: { ...int, description: 'no answer within the timeout' },
    shed: { ...int, description: 'not sent: too much was under way to the target' },
    faulted: { ...int, description: 'an upstream-side fault rule answered instead' },
  };
}

/**
 * Shapes the serializer takes as any value and writes with one JSON.stringify, which writes each kind of value
 * exactly: fast-json-stringify cannot build a serializer for AnyValue, a union of kinds that holds itself, and
 * writes a map of them key by key, twice as slowly as JSON.stringify writes it whole.
 */
const WRITTEN_WHOLE = new Set(['AnyValue', 'Attributes']);

/**
 * Adds every shared schema to the app, before the routes that name them; a second call adds nothing, so a
 * module of routes may be registered on an app of its own.
 * @param {import('fastify').FastifyInstance} app
 */
export function addSchemas(app) {
  if (app.getSchema('Span')) return;
  for (const [id, schema] of Object.entries(SCHEMAS)) app.addSchema({ $id: id, ...(WRITTEN_WHOLE.has(id) ? { description: schema.description } : schema) });
}

/**
 * Fastify's serializer factory (schemaController.compilersFactory.buildSerializer): each route's writer is built
 * with only the shared schemas its response schema reaches, once per process for the same schemas. fast-json-stringify
 * checks every shared schema it is given against the JSON Schema meta-schema on each build, so given all of them
 * for every route, building the API took about 460 ms of CPU, after the OTLP ports had opened; a second API in the
 * same process (tests start hundreds) builds nothing again.
 * @param {unknown} shared the shared schemas by id @param {any} [options] fast-json-stringify's
 * @returns {(route: { schema?: any }) => (data: unknown) => string}
 */
export const serializerFactory =
  (shared, options = {}) =>
  ({ schema }) => {
    const reached = reachedFrom(schema, /** @type {Record<string, any>} */ (shared));
    const key = JSON.stringify([schema, reached, options]);
    const known = writers.get(key);
    if (known) return known;
    // typed as the build's debug and standalone modes may return too; Fastify's options set neither
    /** @type {(data: unknown) => string} */
    const write = /** @type {any} */ (fastJsonStringify(schema, { ...options, schema: reached }));
    writers.set(key, write);
    return write;
  };

/** Reply writers built, by what they were built from. @type {Map<string, (data: unknown) => string>} */
const writers = new Map();

/**
 * The shared schemas that a schema names, and those they name in turn, by id.
 * @param {any} schema @param {Record<string, any>} shared @returns {Record<string, any>}
 */
function reachedFrom(schema, shared) {
  /** @type {Record<string, any>} */
  const reached = {};
  /** @param {any} node */
  const visit = (node) => {
    if (!node || typeof node !== 'object') return;
    const id = typeof node.$ref === 'string' ? node.$ref.split('#')[0] : '';
    if (id && id in shared && !(id in reached)) {
      reached[id] = shared[id];
      visit(shared[id]);
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(schema);
  return reached;
}

/** The shared schemas as OpenAPI components, their references made document references. */
export function components() {
  return Object.fromEntries(Object.entries(SCHEMAS).map(([id, schema]) => [id, openApiSchema(schema)]));
}

/** A route's or a shared schema with `{ $ref: 'Id#' }` made `#/components/schemas/Id`. @param {any} schema @returns {any} */
export const openApiSchema = (schema) => mapRefs(schema, (id) => ({ $ref: `#/components/schemas/${id}` }));

/**
 * A route's or a shared schema with each reference replaced by the schema it names: whole, for a reader that
 * has no document to look references up in (an MCP tool's input schema).
 * @param {any} schema @returns {any}
 */
export const inlineSchema = (schema) => mapRefs(schema, (id) => inlineSchema(SCHEMAS[id]));

/** @param {any} schema @param {(id: string) => any} replace what a `{ $ref: 'Id#' }` becomes @returns {any} */
function mapRefs(schema, replace) {
  if (Array.isArray(schema)) return schema.map((s) => mapRefs(s, replace));
  if (!schema || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema;
  /** @type {Record<string, any>} */
  const out = typeof $ref === 'string' && $ref.endsWith('#') ? { ...replace($ref.slice(0, -1)) } : $ref === undefined ? {} : { $ref };
  for (const [k, v] of Object.entries(rest)) out[k] = mapRefs(v, replace);
  return out;
}
