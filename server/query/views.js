// The API's flat shapes of stored items (what /api/spans, /api/logs, /api/metrics and the live feed return).
import { createHash } from 'node:crypto';
import { jsonDouble } from '../transfer/otlp-json.js';
import { compareNanos, durationNanos } from '../otlp/model.js';
import { LazyPoint, nanosBound } from '../otlp/items.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../client/api.generated.js').Span} Span the API's shapes (server/api/schemas.js), generated
 * @typedef {import('../client/api.generated.js').LogRecord} LogRecord
 * @typedef {import('../otlp/model.js').PointEntry} PointEntry
 */

/** @param {any} v canonical AnyValue @returns {any} */
export function plainValue(v) {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : v.intValue;
  }
  if (v.doubleValue !== undefined) return jsonDouble(v.doubleValue);
  if (v.arrayValue !== undefined) return v.arrayValue.values.map(plainValue);
  if (v.kvlistValue !== undefined) return attributesObject(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return v.bytesValue;
  return null;
}

/** @param {any[]} kvs canonical KeyValue list @returns {Record<string, any>} */
export function attributesObject(kvs) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const kv of kvs) out[kv.key] = plainValue(kv.value);
  return out;
}

/**
 * What `make` gives for an object, made once and kept on the object under a symbol that no enumeration or comparison
 * sees. Not in a WeakMap: stored items come and go as fast as requests arrive, and a WeakMap whose keys die that fast
 * is rehashed on the event loop (store/journal.js says what that cost; with a metrics list open, this module's
 * WeakMaps took the most of the loop's time). A frozen object (model.js's shared defaults) keeps nothing: its
 * value is made each time.
 * @template {object} O @template V
 * @param {O} object @param {symbol} key @param {(object: O) => V} make @returns {V}
 */
function kept(object, key, make) {
  const own = /** @type {any} */ (object)[key];
  if (own !== undefined) return own;
  const value = make(object);
  if (Object.isExtensible(object)) Object.defineProperty(object, key, { value });
  return value;
}

const RESOURCE_VIEW = Symbol('resource view');
const SCOPE_VIEW = Symbol('scope view');
const ATTRIBUTES_KEY = Symbol('attributes key');
const METRIC_IDENTITY = Symbol('metric identity');

/** Resources are shared by many items: convert each once. @param {any} resource */
export function resourceView(resource) {
  return kept(resource, RESOURCE_VIEW, (r) => attributesObject(r.attributes));
}

/** Scopes are shared by every item of a ScopeSpans/ScopeLogs/ScopeMetrics: convert each once. @param {any} scope */
function scopeView(scope) {
  return kept(scope, SCOPE_VIEW, (sc) => {
    /** @type {any} */
    const view = { name: sc.name, version: sc.version, attributes: attributesObject(sc.attributes ?? []) };
    if (sc.droppedAttributesCount) view.droppedAttributesCount = sc.droppedAttributesCount;
    return view;
  });
}

/**
 * The resource's and the scope's schema URLs, only when sent: most senders leave them empty.
 * @param {import('../store/store.js').EntryContext} ctx
 */
function schemaUrls(ctx) {
  /** @type {{ resourceSchemaUrl?: string, scopeSchemaUrl?: string }} */
  const out = {};
  if (ctx.resourceSchemaUrl) out.resourceSchemaUrl = ctx.resourceSchemaUrl;
  if (ctx.scopeSchemaUrl) out.scopeSchemaUrl = ctx.scopeSchemaUrl;
  return out;
}

/** @param {Entry} entry @returns {Span} */
export function spanView({ item: s, ctx }) {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    traceState: s.traceState,
    flags: s.flags,
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: s.startTimeUnixNano,
    endTimeUnixNano: s.endTimeUnixNano,
    durationNanos: durationNanos(s.startTimeUnixNano, s.endTimeUnixNano),
    attributes: attributesObject(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount,
    status: { code: s.status.code, message: s.status.message },
    events: s.events.map((/** @type {any} */ e) => ({
      timeUnixNano: e.timeUnixNano,
      name: e.name,
      attributes: attributesObject(e.attributes),
      droppedAttributesCount: e.droppedAttributesCount,
    })),
    droppedEventsCount: s.droppedEventsCount,
    links: s.links.map((/** @type {any} */ l) => ({
      traceId: l.traceId,
      spanId: l.spanId,
      traceState: l.traceState,
      flags: l.flags,
      attributes: attributesObject(l.attributes),
      droppedAttributesCount: l.droppedAttributesCount,
    })),
    droppedLinksCount: s.droppedLinksCount,
    resource: resourceView(ctx.resource),
    scope: scopeView(ctx.scope),
    ...schemaUrls(ctx),
    service: ctx.service,
    requestId: ctx.requestId,
  };
}

/** @param {Entry} entry @returns {LogRecord} */
export function logView({ item: l, ctx }) {
  return {
    timeUnixNano: l.timeUnixNano,
    observedTimeUnixNano: l.observedTimeUnixNano,
    severityNumber: l.severityNumber,
    severityText: l.severityText,
    body: plainValue(l.body),
    attributes: attributesObject(l.attributes),
    droppedAttributesCount: l.droppedAttributesCount,
    traceId: l.traceId,
    spanId: l.spanId,
    flags: l.flags,
    eventName: l.eventName,
    resource: resourceView(ctx.resource),
    scope: scopeView(ctx.scope),
    ...schemaUrls(ctx),
    service: ctx.service,
    requestId: ctx.requestId,
  };
}

const DOUBLE_FIELDS = ['asDouble', 'sum', 'min', 'max', 'zeroThreshold'];

/** @param {any} point */
function pointView(point) {
  /** @type {any} */
  const out = { ...point, attributes: attributesObject(point.attributes) };
  for (const field of DOUBLE_FIELDS) if (typeof out[field] === 'number') out[field] = jsonDouble(out[field]);
  if (point.explicitBounds) out.explicitBounds = point.explicitBounds.map(jsonDouble);
  if (point.quantileValues) out.quantileValues = point.quantileValues.map((/** @type {any} */ q) => ({ quantile: jsonDouble(q.quantile), value: jsonDouble(q.value) }));
  if (point.exemplars && point.exemplars.length) {
    out.exemplars = point.exemplars.map((/** @type {any} */ e) => ({
      ...e,
      ...(typeof e.asDouble === 'number' ? { asDouble: jsonDouble(e.asDouble) } : {}),
      filteredAttributes: attributesObject(e.filteredAttributes),
    }));
  }
  return out;
}

/**
 * Canonical text of an attribute list, independent of order. Stored points are read again on every
 * refresh of a view, so each list's text is made once and kept while the list is stored. A resource's is its
 * attributes': one list per request, so it is made once per request, not per data point.
 * @param {import('../otlp/model.js').Attributes} kvs
 */
function attributesKey(kvs) {
  if (kvs.length === 0) return '';
  return kept(kvs, ATTRIBUTES_KEY, (list) => {
    const parts = list.map((kv) => JSON.stringify([kv.key, plainValue(kv.value)]));
    if (parts.length > 1) parts.sort();
    return parts.join(',');
  });
}

/**
 * A metric's identity: the full resource (every attribute, so two instances of a service are two metrics),
 * the scope's name and version, the metric's name, type and unit. Made once per context, which the data points of
 * one metric in one request share.
 * @param {{ ctx: any }} entry a stored data point, or just its context
 * @returns {string}
 */
export function metricKey({ ctx }) {
  return kept(ctx, METRIC_IDENTITY, (c) => {
    const m = c.metric;
    return JSON.stringify([attributesKey(c.resource.attributes), c.scope.name, c.scope.version, m.name, m.type, m.unit]);
  });
}

/** The short, stable form of a metric's identity that URLs and the UI use. @param {string} identity */
export function shortKey(identity) {
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/** @param {any} metric the stored metric (`ctx.metric`) */
function isCumulative(metric) {
  return metric.type === 'summary' || (metric.type !== 'gauge' && metric.aggregationTemporality === 2);
}

/**
 * What falls when a cumulative series restarts: a monotonic sum's value, a histogram's or summary's count.
 * A non-monotonic sum may fall at any time, so only its start time tells a restart.
 * @param {any} metric @returns {((point: any) => number) | null}
 */
function fallingValue(metric) {
  if (metric.type === 'sum') return metric.isMonotonic ? (p) => Number(p.asDouble ?? p.asInt) : null;
  return (p) => Number(p.count);
}

/**
 * @typedef {{ startTimeUnixNano: string, points: number[] }} Segment
 *   `points`: indexes into the metric's `dataPoints`, oldest first
 * @typedef {{ attributes: Record<string, any>, segments: Segment[] }} Series
 */

/**
 * Splits a metric's data points into series (one per attribute set, in order of first arrival) and each
 * series into segments. A cumulative series begins a new segment when its start time changes or, for a
 * monotonic sum, a histogram or a summary, its value (count) falls: the process restarted and counts anew,
 * so a rate is only meaningful within one segment.
 * @param {any} metric the stored metric (`ctx.metric`): type, aggregationTemporality, isMonotonic
 * @param {any[]} points canonical data points, in arrival order
 * @returns {Series[]}
 */
export function metricSeries(metric, points) {
  /** @type {Map<string, number[]>} */
  const byAttributes = new Map();
  for (let i = 0; i < points.length; i++) {
    const key = attributesKey(points[i].attributes);
    const list = byAttributes.get(key);
    if (list) list.push(i);
    else byAttributes.set(key, [i]);
  }
  const cumulative = isCumulative(metric);
  const valueOf = cumulative ? fallingValue(metric) : null;
  /** @type {Series[]} */
  const out = [];
  for (const indexes of byAttributes.values()) {
    indexes.sort((a, b) => compareNanos(points[a].timeUnixNano, points[b].timeUnixNano) || a - b);
    /** @type {Segment[]} */
    const segments = [];
    /** @type {Segment|null} */
    let current = null;
    let previous = NaN;
    for (const i of indexes) {
      const p = points[i];
      const value = valueOf ? valueOf(p) : NaN;
      if (!current || (cumulative && (p.startTimeUnixNano !== current.startTimeUnixNano || value < previous))) {
        current = { startTimeUnixNano: p.startTimeUnixNano, points: [] };
        segments.push(current);
      }
      current.points.push(i);
      previous = value;
    }
    out.push({ attributes: attributesObject(points[indexes[0]].attributes), segments });
  }
  return out;
}

/**
 * The attribute sets of data points, as `attributesKey` gives them, for one answer: a point stored unbuilt
 * is built only when no point before it had the same encoding of its attributes.
 * @returns {(entry: PointEntry) => string}
 */
function seriesKeys() {
  /** @type {Map<string, string>} */
  const byText = new Map();
  return (entry) => {
    if (!(entry instanceof LazyPoint)) return attributesKey(entry.item.attributes);
    const text = entry.attributesText();
    let key = byText.get(text);
    if (key === undefined) {
      key = attributesKey(entry.item.attributes);
      byText.set(text, key);
    }
    return key;
  };
}

/**
 * The latest of the points offered, the first offered of those at the latest time: points stored unbuilt are
 * compared without building them (`timeNumber`, and `timeOrder` where two times are too close for a number).
 */
class Latest {
  constructor() {
    /** @type {PointEntry|null} */
    this.entry = null;
    this.number = 0;
    /** @type {import('../otlp/items.js').NanosBound|null} made when a tie of numbers needs it */
    this.bound = null;
  }

  /** @param {PointEntry} p @param {number} n its `timeNumber()` */
  offer(p, n) {
    if (this.entry !== null) {
      if (n < this.number) return;
      if (n === this.number && p.timeOrder((this.bound ??= nanosBound(this.entry.time()))) <= 0) return;
    }
    this.entry = p;
    this.number = n;
    this.bound = null;
  }
}

const RUN_FACTS = Symbol('run facts');

/**
 * @typedef {{ firstSeq: number, length: number, keys: string[], signature: string, latest: PointEntry, latestNumber: number }} RunFacts
 *   what a metrics list takes from a run of points (`runFacts`): their series and the latest of them
 */

/**
 * The facts of the run of points from `group[from]` on that share its context (one metric's points of one request,
 * stored together). Kept on the context: a metrics list is asked for again and again, and a stored run's points
 * never change, so each is read once, not at every ask (a list over 100,000 points took 100 ms of CPU when each
 * ask read every point). A run the store has begun to evict has another first point (by sequence number: the store
 * makes a point's entry anew when asked) or length, and is read again.
 * @param {PointEntry[]} group one metric's points in arrival order @param {number} from
 * @param {(entry: PointEntry) => string} seriesKey @returns {RunFacts}
 */
function runFacts(group, from, seriesKey) {
  const first = group[from];
  const ctx = /** @type {any} */ (first.ctx);
  let end = from + 1;
  while (end < group.length && group[end].ctx === ctx) end++;
  const length = end - from;
  /** @type {RunFacts|undefined} */
  const known = ctx[RUN_FACTS];
  if (known !== undefined && known.firstSeq === first.seq && known.length === length) return known;
  /** @type {Set<string>} */
  const keys = new Set();
  const latest = new Latest();
  for (let i = from; i < end; i++) {
    const p = group[i];
    keys.add(seriesKey(p));
    latest.offer(p, p.timeNumber());
  }
  const facts = {
    firstSeq: first.seq,
    length,
    keys: [...keys],
    // Attribute keys are JSON texts, which hold no raw line feed.
    signature: [...keys].join('\n'),
    latest: /** @type {PointEntry} */ (latest.entry),
    latestNumber: latest.number,
  };
  if (Object.isExtensible(ctx)) Object.defineProperty(ctx, RUN_FACTS, { value: facts, writable: true });
  return facts;
}

/** @param {{ name: string, service: string }} a @param {{ name: string, service: string }} b */
function byNameThenService(a, b) {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return 0;
}

/**
 * Groups stored data points into metrics, one per metric of one resource instance (`metricKey`), sorted by
 * name, then service, then first arrival. Each metric has `key`, a short stable hex form of its identity.
 * `points: 'all'`: each metric with its `dataPoints` in arrival order and their `series` (`metricSeries`).
 * `points: 'none'`: for lists, without points: `pointCount`, `seriesCount` (distinct attribute sets) and
 * `lastTimeUnixNano` (the latest point's time) instead.
 * @param {Iterable<Entry>} entries stored data points
 * @param {{ points?: 'all'|'none' }} [options]
 */
export function metricViews(entries, { points = 'all' } = {}) {
  /** @type {Map<string, { ctx: import('../store/store.js').EntryContext, group: PointEntry[] }>} */
  const byIdentity = new Map();
  let lastCtx = null;
  /** @type {PointEntry[]} */
  let group = [];
  for (const entry of /** @type {Iterable<PointEntry>} */ (entries)) {
    // Points of one metric in one request are stored together and share their context.
    if (entry.ctx !== lastCtx) {
      lastCtx = entry.ctx;
      const identity = metricKey(entry);
      let known = byIdentity.get(identity);
      if (!known) {
        known = { ctx: entry.ctx, group: [] };
        byIdentity.set(identity, known);
      }
      group = known.group;
    }
    group.push(entry);
  }
  const seriesKey = seriesKeys();
  const views = [];
  for (const [identity, { ctx, group }] of byIdentity) {
    const m = /** @type {any} */ (ctx.metric);
    /** @type {{ name: string, service: string, [field: string]: any }} */
    const view = {
      key: shortKey(identity),
      name: m.name,
      description: m.description,
      unit: m.unit,
      type: m.type,
      aggregationTemporality: m.aggregationTemporality,
      isMonotonic: m.isMonotonic,
      resource: resourceView(ctx.resource),
      scope: scopeView(ctx.scope),
      service: ctx.service,
    };
    if (points === 'none') {
      const attributeSets = new Set();
      /** @type {Set<string>} the runs' series seen: most of a metric's runs hold the same series */
      const seen = new Set();
      const latest = new Latest();
      for (let from = 0; from < group.length;) {
        const run = runFacts(group, from, seriesKey);
        from += run.length;
        if (!seen.has(run.signature)) {
          seen.add(run.signature);
          for (const key of run.keys) attributeSets.add(key);
        }
        latest.offer(run.latest, run.latestNumber);
      }
      view.pointCount = group.length;
      view.seriesCount = attributeSets.size;
      view.lastTimeUnixNano = /** @type {PointEntry} */ (latest.entry).time();
    } else {
      const items = group.map((e) => e.item);
      view.dataPoints = items.map(pointView);
      view.series = metricSeries(m, items);
    }
    views.push(view);
  }
  return views.sort(byNameThenService);
}
