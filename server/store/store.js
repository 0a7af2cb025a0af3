import { Ring } from './ring.js';
import { METRIC_DATA_FIELDS } from '../otlp/signals.js';

/**
 * @typedef {{ resource: any, resourceSchemaUrl: string, scope: any, scopeSchemaUrl: string, service: string,
 *   requestId: number, metric?: any }} EntryContext
 * @typedef {{ item: any, ctx: EntryContext, seq: number }} Entry
 * @typedef {{ signal: import('../otlp/signals.js').SignalName, requestId: number, entries: Entry[] }} StoredBatch
 */

/** @param {any} resource */
export function serviceOf(resource) {
  for (const kv of resource.attributes) {
    if (kv.key === 'service.name') return kv.value.stringValue ?? '';
  }
  return '';
}

/**
 * Bounded per-signal rings of what was received, oldest evicted first, with a trace-id index and a feed
 * for observers. Observers are called synchronously and must only enqueue: ingestion never waits for them.
 */
export class Store {
  /** @param {{ maxSpans?: number, maxLogs?: number, maxPoints?: number }} [limits] */
  constructor({ maxSpans = 100_000, maxLogs = 100_000, maxPoints = 100_000 } = {}) {
    /** @type {Record<string, Ring<Entry>>} */
    this.rings = { traces: new Ring(maxSpans), logs: new Ring(maxLogs), metrics: new Ring(maxPoints) };
    /** @type {Record<string, { received: number, evicted: number }>} */
    this.counts = { traces: zero(), logs: zero(), metrics: zero() };
    /** @type {Map<string, Entry[]>} */
    this.traces = new Map();
    /** @type {Set<(batch: StoredBatch) => void>} */
    this.listeners = new Set();
    this.seq = 0;
  }

  /**
   * @param {import('../otlp/signals.js').SignalName} signal
   * @param {any} request canonical Export*ServiceRequest
   * @param {number} requestId
   * @returns {number} items stored
   */
  addRequest(signal, request, requestId) {
    /** @type {Entry[]} */
    const entries = [];
    if (signal === 'traces') this.collect(request.resourceSpans, 'scopeSpans', 'spans', requestId, entries);
    else if (signal === 'logs') this.collect(request.resourceLogs, 'scopeLogs', 'logRecords', requestId, entries);
    else this.collectMetrics(request.resourceMetrics, requestId, entries);
    const ring = this.rings[signal];
    const counts = this.counts[signal];
    for (const entry of entries) {
      const evicted = ring.push(entry);
      if (evicted) {
        counts.evicted++;
        if (signal === 'traces') this.unindex(evicted);
      }
      if (signal === 'traces') this.index(entry);
    }
    counts.received += entries.length;
    if (entries.length && this.listeners.size) {
      const batch = { signal, requestId, entries };
      for (const listener of this.listeners) listener(batch);
    }
    return entries.length;
  }

  /** @param {any[]} groups @param {string} scopeField @param {string} itemField @param {number} requestId @param {Entry[]} out */
  collect(groups, scopeField, itemField, requestId, out) {
    for (const group of groups) {
      const service = serviceOf(group.resource);
      for (const sg of group[scopeField]) {
        const ctx = {
          resource: group.resource,
          resourceSchemaUrl: group.schemaUrl,
          scope: sg.scope,
          scopeSchemaUrl: sg.schemaUrl,
          service,
          requestId,
        };
        for (const item of sg[itemField]) out.push({ item, ctx, seq: ++this.seq });
      }
    }
  }

  /** @param {any[]} groups @param {number} requestId @param {Entry[]} out */
  collectMetrics(groups, requestId, out) {
    for (const group of groups) {
      const service = serviceOf(group.resource);
      for (const sg of group.scopeMetrics) {
        for (const m of sg.metrics) {
          const type = METRIC_DATA_FIELDS.find((key) => m[key]);
          if (!type) continue;
          const data = m[type];
          const metric = {
            name: m.name,
            description: m.description,
            unit: m.unit,
            metadata: m.metadata,
            type,
            aggregationTemporality: data.aggregationTemporality ?? 0,
            isMonotonic: data.isMonotonic ?? false,
          };
          const ctx = {
            resource: group.resource,
            resourceSchemaUrl: group.schemaUrl,
            scope: sg.scope,
            scopeSchemaUrl: sg.schemaUrl,
            service,
            requestId,
            metric,
          };
          for (const item of data.dataPoints) out.push({ item, ctx, seq: ++this.seq });
        }
      }
    }
  }

  /** @param {Entry} entry */
  index(entry) {
    const id = entry.item.traceId;
    const list = this.traces.get(id);
    if (list) list.push(entry);
    else this.traces.set(id, [entry]);
  }

  /** @param {Entry} entry */
  unindex(entry) {
    const id = entry.item.traceId;
    const list = this.traces.get(id);
    if (!list) return;
    // Eviction is oldest first, so the entry is almost always the first of its trace.
    if (list[0] === entry) list.shift();
    else {
      const at = list.indexOf(entry);
      if (at >= 0) list.splice(at, 1);
    }
    if (list.length === 0) this.traces.delete(id);
  }

  /** @param {string} traceId @returns {Entry[]} */
  spansOfTrace(traceId) {
    return this.traces.get(traceId) ?? [];
  }

  /** @param {import('../otlp/signals.js').SignalName} signal @returns {Ring<Entry>} */
  ring(signal) {
    return this.rings[signal];
  }

  /** @param {(batch: StoredBatch) => void} listener @returns {() => void} unsubscribe */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear() {
    for (const ring of Object.values(this.rings)) ring.clear();
    for (const key of Object.keys(this.counts)) this.counts[key] = zero();
    this.traces.clear();
  }

  stats() {
    /** @type {Record<string, { stored: number, received: number, evicted: number, capacity: number }>} */
    const out = {};
    for (const [signal, ring] of Object.entries(this.rings)) {
      out[signal] = { stored: ring.size, ...this.counts[signal], capacity: ring.capacity };
    }
    return out;
  }
}

function zero() {
  return { received: 0, evicted: 0 };
}
