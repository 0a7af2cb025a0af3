// The API's flat shapes of stored items (what /api/spans, /api/logs, /api/metrics and the live feed return).
import { jsonDouble } from '../transfer/otlp-json.js';
import { durationNanos } from '../otlp/model.js';

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

/** Resources are shared by many items: convert each once. */
const resourceViews = new WeakMap();
/** @param {any} resource */
export function resourceView(resource) {
  let view = resourceViews.get(resource);
  if (!view) {
    view = attributesObject(resource.attributes);
    resourceViews.set(resource, view);
  }
  return view;
}

/** @param {any} scope */
function scopeView(scope) {
  return { name: scope.name, version: scope.version };
}

/** @param {import('../store/store.js').Entry} entry */
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
    service: ctx.service,
    requestId: ctx.requestId,
  };
}

/** @param {import('../store/store.js').Entry} entry */
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
  if (point.quantileValues)
    out.quantileValues = point.quantileValues.map((/** @type {any} */ q) => ({ quantile: jsonDouble(q.quantile), value: jsonDouble(q.value) }));
  if (point.exemplars && point.exemplars.length) {
    out.exemplars = point.exemplars.map((/** @type {any} */ e) => ({
      ...e,
      ...(typeof e.asDouble === 'number' ? { asDouble: jsonDouble(e.asDouble) } : {}),
      filteredAttributes: attributesObject(e.filteredAttributes),
    }));
  }
  return out;
}

/** @param {import('../store/store.js').Entry} entry */
export function metricKey({ ctx }) {
  const m = ctx.metric;
  return `${ctx.service}\u0000${ctx.scope.name}\u0000${m.name}\u0000${m.type}\u0000${m.unit}`;
}

/**
 * Groups stored data points into metrics: one per service, scope, name, type and unit, points in arrival order.
 * @param {Iterable<import('../store/store.js').Entry>} entries
 */
export function metricViews(entries) {
  /** @type {Map<string, any>} */
  const byKey = new Map();
  for (const entry of entries) {
    const key = metricKey(entry);
    let view = byKey.get(key);
    if (!view) {
      const { ctx } = entry;
      const m = /** @type {any} */ (ctx.metric);
      view = {
        name: m.name,
        description: m.description,
        unit: m.unit,
        type: m.type,
        aggregationTemporality: m.aggregationTemporality,
        isMonotonic: m.isMonotonic,
        resource: resourceView(ctx.resource),
        scope: scopeView(ctx.scope),
        service: ctx.service,
        dataPoints: [],
      };
      byKey.set(key, view);
    }
    view.dataPoints.push(pointView(entry.item));
  }
  return [...byKey.values()];
}
