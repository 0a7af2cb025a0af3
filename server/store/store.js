import { Ring } from './ring.js';
import { Evicted, PlaceRing } from './places.js';
import { pointsOf, storedFormOf } from '../otlp/metric.js';
import { attributeIn, LazyItem, LazyLogRecord, LazyPoint, LazySample, logTimeOf, outlineOf, sampleAttributeIn, spanFactsOf, treeNodeOf } from '../otlp/items.js';
import { ENTRY_BYTES } from './budget.js';
import { compareNanos } from '../otlp/model.js';
import { perSignal, SIGNALS } from '../otlp/signals.js';

/**
 * @typedef {{ requestId: number, source: any, seq0: number, share: number }} Batch what every item of a request
 *   shares: `source`, the request's bytes when its items are stored unbuilt; `share`, each item's part of the
 *   bytes the request keeps; `seq0`, a PlaceRing's note (places.js)
 * @typedef {{ signal: import('../otlp/signals.js').SignalName, requestId: number, entries: Entry[], evicted: EvictedItems, bytes: number, more: boolean }} StoredBatch
 *   `evicted`: the oldest items this request pushed out of the store, for items or for bytes (log records and data
 *   points are made only when iterated: most listeners want only how many);
 *   `bytes`: what the entries keep, for observers that hold on to them;
 *   `more`: whether more of the request is still to be stored, when it is stored in parts (an ItemRange)
 * @typedef {import('../otlp/model.js').Entry} Entry a stored item (its kinds: model.js)
 * @typedef {Iterable<Entry> & { readonly length: number }} EvictedItems
 * @typedef {import('../otlp/model.js').SpanEntry} SpanEntry
 */

/**
 * What the items of one scope of one request share, and for data points of one metric in it (`metric`, the
 * metric without its points), for samples of one profile (`profile`, the profile without its samples, with
 * the request's dictionary). There is one for every few stored items: what can be, is kept once per request
 * (`batch`).
 */
export class EntryContext {
  /**
   * @param {any} group a Resource{Spans,Logs,Metrics,Profiles} @param {any} sg its Scope{...} @param {string} service
   * @param {Batch} batch @param {any} metric @param {any} [profile]
   */
  constructor(group, sg, service, batch, metric, profile = null) {
    this.resource = group.resource;
    /** @type {string} */
    this.resourceSchemaUrl = group.schemaUrl;
    this.scope = sg.scope;
    /** @type {string} */
    this.scopeSchemaUrl = sg.schemaUrl;
    this.service = service;
    this.batch = batch;
    this.metric = metric;
    this.profile = profile;
  }

  get requestId() {
    return this.batch.requestId;
  }
}

/** An item stored as decoded. */
class DecodedEntry {
  /** @param {any} item @param {EntryContext} ctx @param {number} seq */
  constructor(item, ctx, seq) {
    this.item = item;
    this.ctx = ctx;
    this.seq = seq;
    /** @type {TraceSpans|null} the trace index's list this span is in */
    this.trace = null;
  }

  get traceId() {
    return this.item.traceId;
  }

  /** @param {string} key */
  attribute(key) {
    return this.ctx.profile ? sampleAttributeIn(this.item, this.ctx.profile, key) : attributeIn(this.item.attributes, key);
  }

  spanId() {
    return this.item.spanId;
  }

  outline() {
    return outlineOf(this.item);
  }

  facts() {
    return spanFactsOf(this.item);
  }

  startHalves() {
    const facts = spanFactsOf(this.item);
    return { hi: facts.startHi, lo: facts.startLo };
  }

  treeNode() {
    return treeNodeOf(this.item);
  }

  time() {
    return this.ctx.metric ? this.item.timeUnixNano : logTimeOf(this.item);
  }

  /** @param {import('../otlp/items.js').NanosBound} bound */
  timeOrder(bound) {
    return Math.sign(compareNanos(this.time(), bound.text));
  }

  timeNumber() {
    return Number(this.time());
  }

  severityNumber() {
    return this.item.severityNumber;
  }

  body() {
    return this.item.body;
  }
}

/** What a stored item counts against its signal's byte budget, from its context. @param {EntryContext} ctx */
const ctxShareOf = (ctx) => ctx.batch.share;

/**
 * The stored item of a place in its request's bytes (places.js), by item kind.
 * @type {Record<string, (ctx: any, place: number, seq: number) => Entry>}
 */
const PLACED = { 'log record': LazyLogRecord.placed, 'data point': LazyPoint.placed, sample: LazySample.placed };

/**
 * Spans are kept as entries (the trace index holds them too), other items as places in their requests'
 * bytes (places.js).
 * @param {import('../otlp/signals.js').Signal} signal @param {number} capacity @returns {Ring<Entry>|PlaceRing<Entry>}
 */
function ringOf(signal, capacity) {
  // A span's share is kept beside its slot: read from the evicted span's context instead, three objects long out of
  // the cache, it was an eighth of the time storing a gRPC traces request took (CPU profile).
  if (signal.traceIndex) return new Ring(capacity);
  return new PlaceRing(capacity, PLACED[signal.item.kind], ctxShareOf);
}

/** @param {any} item @param {EntryContext} ctx @param {number} seq @returns {Entry} */
function entryOf(item, ctx, seq) {
  if (!(item instanceof LazyItem)) return new DecodedEntry(item, ctx, seq);
  ctx.batch.source = item.source;
  item.ctx = ctx;
  item.seq = seq;
  return /** @type {Entry} */ (item);
}

/** The service.name of each resource of a decoded request, once each: what the journal lists the request under. @param {{ rootField: string }} signal @param {any} request @returns {string[]} */
export function servicesOf(signal, request) {
  return [...new Set((request[signal.rootField] ?? []).map((/** @type {any} */ g) => (g.resource ? serviceOf(g.resource) : '')))];
}

/** @param {any} resource */
export function serviceOf(resource) {
  for (const kv of resource.attributes) {
    if (kv.key === 'service.name') return kv.value.stringValue ?? '';
  }
  return '';
}

/** The stored spans of one trace, oldest first: eviction is oldest first, so it takes them from the front. */
export class TraceSpans {
  /** @param {string} traceId @param {number} firstSeq */
  constructor(traceId, firstSeq) {
    this.traceId = traceId;
    /** the sequence number of the first span indexed: orders traces by arrival */
    this.firstSeq = firstSeq;
    /** @type {(SpanEntry|undefined)[]} */
    this.entries = [];
    this.head = 0;
    /** spans taken out other than from the front, which a summary of the list cannot tell from its length */
    this.removals = 0;
    /** places the list has moved down by, all told: the spans before `head` are cut off now and then */
    this.compacted = 0;
    /** @type {any} what the query engine has worked out of these spans, kept until they change */
    this.summary = null;
    /** the last stored request that TraceChanges noted it changed in (-1: none) */
    this.changedIn = -1;
    /**
     * The earliest start of the spans read so far, as 32-bit halves (`earliestHi` -1: none has one), for a trace
     * with no summary: `earliestRead` is the place read up to (-1: none), from `earliestHead` while the list had
     * `earliestCompacted` and `earliestRemovals`.
     */
    this.earliestRead = -1;
    this.earliestHead = 0;
    this.earliestCompacted = 0;
    this.earliestRemovals = 0;
    this.earliestHi = -1;
    this.earliestLo = 0;
  }

  /** @returns {SpanEntry[]} */
  stored() {
    return /** @type {SpanEntry[]} */ (this.entries.slice(this.head));
  }
}

/**
 * The traces that gained or lost spans, in order, the last 32,768: a reader that keeps a list of traces between asks
 * (query/kept-traces.js) ranks again only those, and when more changed than are remembered, every trace. A trace is
 * noted once per stored request however many of its spans came or went (a request's spans of many traces are often
 * interleaved): a reader reads between requests, never in the middle of one.
 */
export class TraceChanges {
  static CAPACITY = 32768;

  constructor() {
    /** @type {(TraceSpans|undefined)[]} */
    this.slots = new Array(TraceChanges.CAPACITY);
    /** how many were ever noted: the next one's number */
    this.count = 0;
    /** the stored request being noted: each trace keeps the number of the last one it was noted in */
    this.request = 0;
  }

  /** The changes that follow are another request's. */
  nextRequest() {
    this.request++;
  }

  /** @param {TraceSpans} trace */
  add(trace) {
    if (trace.changedIn === this.request) return;
    trace.changedIn = this.request;
    this.slots[this.count++ % TraceChanges.CAPACITY] = trace;
  }

  /** Whether the ones from the `from`-th on are all remembered. @param {number} from */
  holds(from) {
    return this.count - from <= TraceChanges.CAPACITY;
  }

  /** @param {number} from @param {number} to @param {(trace: TraceSpans) => void} visit */
  readFrom(from, to, visit) {
    for (let i = from; i < to; i++) visit(/** @type {TraceSpans} */ (this.slots[i % TraceChanges.CAPACITY]));
  }

  clear() {
    this.slots.fill(undefined);
    this.request++;
  }
}

/**
 * The items of a request that one `addRequest` stores: from the `from`-th to before the `to`-th, counted in the
 * order of the request. `at` counts the items passed so far, and ends as the request's count of items.
 */
export class ItemRange {
  /** @param {number} from @param {number} to */
  constructor(from, to) {
    this.from = from;
    this.to = to;
    this.at = 0;
    /** what the last `take` found in the range */
    this.lo = 0;
    this.hi = 0;
  }

  /**
   * Passes the next `n` items: whether any of them is in the range, and if so, which (`lo` to before `hi`, as
   * indices among them). A request of 100,000 scope groups is passed once for each of its parts, so nothing is
   * allocated here. @param {number} n
   */
  take(n) {
    const first = this.at;
    this.at += n;
    this.lo = Math.min(n, Math.max(0, this.from - first));
    this.hi = Math.max(0, Math.min(n, this.to - first));
    return this.lo < this.hi;
  }
}

/**
 * Bounded per-signal rings of what was received, oldest evicted first, with a trace-id index and a feed
 * for observers: every stored batch with what it evicted (`subscribe`), and every clearing (`onCleared`).
 * Observers are called synchronously and must only enqueue: ingestion never waits for them.
 * Each signal is bounded twice: by items, and by the bytes its items keep (budget.js).
 */
export class Store {
  /**
   * @param {Partial<Record<import('../otlp/signals.js').CountOption|import('../otlp/signals.js').BytesOption, number>>} [limits]
   *   each signal's item cap (maxSpans, ...: the table's default when absent) and byte budget (maxSpanBytes, ...:
   *   none when absent)
   */
  constructor(limits = {}) {
    /** @type {Record<string, Ring<Entry>|PlaceRing<Entry>>} */
    this.rings = perSignal((s) => ringOf(s, limits[s.budget.countOption] ?? s.budget.countDefault));
    /** @type {Record<string, number>} */
    this.budgets = perSignal((s) => limits[s.budget.bytesOption] ?? Infinity);
    /** @type {Record<string, { received: number, evicted: number, evictedForBytes: number }>} */
    this.counts = perSignal(zero);
    /** @type {Map<string, TraceSpans>} */
    this.traces = new Map();
    /** Spans of one trace arrive together: the last list indexed is the likeliest next. @type {TraceSpans|null} */
    this.lastTrace = null;
    this.lastTraceId = '';
    /** @type {Set<(batch: StoredBatch) => void>} */
    this.listeners = new Set();
    /** @type {Set<() => void>} */
    this.clearListeners = new Set();
    this.seq = 0;
    /** how many times the store was emptied */
    this.clears = 0;
    this.traceChanges = new TraceChanges();
  }

  /**
   * @param {import('../otlp/signals.js').SignalName} signal
   * @param {any} request canonical Export*ServiceRequest
   * @param {number} requestId
   * @param {number} [bytes] what the request keeps (budget.js keptBytes), split evenly over its items: a
   *   request's buffer is held until its last span goes, and eviction is oldest first, so at most one
   *   request's share is counted as freed early
   * @param {ItemRange} [range] the request's items to store now, when it is stored a few at a time: each part is
   *   a batch of its own to the store and its observers
   * @returns {number} items stored
   */
  addRequest(signal, request, requestId, bytes, range = new ItemRange(0, Infinity)) {
    this.traceChanges.nextRequest();
    /** @type {Entry[]} */
    const entries = [];
    /** @type {Batch} */
    const batch = { requestId, source: null, seq0: 0, share: 0 };
    const row = SIGNALS[signal];
    range.at = 0;
    if (row.storedItems === 'points') this.collectPoints(request[row.rootField], row.scopeField, row.itemField, batch, entries, range);
    else if (row.storedItems === 'samples') this.collectSamples(request, row, batch, entries, range);
    else this.collect(request[row.rootField], row.scopeField, row.itemField, batch, entries, range);
    const ring = this.rings[signal];
    const counts = this.counts[signal];
    const share = bytes === undefined ? ENTRY_BYTES * 8 : Math.ceil(bytes / Math.max(1, range.at));
    batch.share = share;
    const budget = this.budgets[signal];
    /** @type {EvictedItems} */
    let evictions;
    if (ring instanceof PlaceRing) {
      const evicted = new Evicted(ring.placedItem);
      for (const entry of entries) ring.push(entry, share, evicted);
      const before = evicted.length;
      while (ring.bytes > budget && ring.size > 0) ring.evictInto(evicted);
      counts.evictedForBytes += evicted.length - before;
      evictions = evicted;
    } else {
      // A signal kept in a Ring has a trace index: it stores spans.
      /** @type {Entry[]} */
      const evicted = [];
      for (const entry of /** @type {SpanEntry[]} */ (entries)) {
        const out = ring.push(entry, share);
        if (out) {
          evicted.push(out);
          this.unindex(/** @type {SpanEntry} */ (out));
        }
        this.index(entry);
      }
      const before = evicted.length;
      while (ring.bytes > budget && ring.size > 0) {
        const out = /** @type {SpanEntry} */ (ring.shift());
        evicted.push(out);
        this.unindex(out);
      }
      counts.evictedForBytes += evicted.length - before;
      evictions = evicted;
    }
    counts.evicted += evictions.length;
    counts.received += entries.length;
    if (entries.length && this.listeners.size) {
      const batch = { signal, requestId, entries, evicted: evictions, bytes: share * entries.length, more: range.to < range.at };
      for (const listener of this.listeners) listener(batch);
    }
    return entries.length;
  }

  /**
   * Stores a request `part` items at a time (`addRequest` with an ItemRange), a part a step, for a caller that lets
   * other work run between steps. Returns how many items were stored.
   * @param {import('../otlp/signals.js').SignalName} signal @param {any} request @param {number} requestId
   * @param {number} bytes @param {number} part
   * @returns {Generator<void, number, void>}
   */
  *addRequestInParts(signal, request, requestId, bytes, part) {
    let stored = 0;
    for (let from = 0, range; !range || from < range.at; from += part) {
      if (range) yield;
      range = new ItemRange(from, from + part);
      stored += this.addRequest(signal, request, requestId, bytes, range);
    }
    return stored;
  }

  /** How many items of a signal the store keeps. @param {import('../otlp/signals.js').SignalName} signal */
  capacityOf(signal) {
    return this.rings[signal].capacity;
  }

  /** Whether a request keeping this many bytes can be stored at all. @param {import('../otlp/signals.js').SignalName} signal @param {number} bytes */
  fits(signal, bytes) {
    return bytes <= this.budgets[signal];
  }

  /**
   * @param {any[]} groups @param {string} scopeField @param {string} itemField @param {Batch} batch @param {Entry[]} out
   * @param {ItemRange} range
   */
  collect(groups, scopeField, itemField, batch, out, range) {
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g];
      const scopes = group[scopeField];
      let service = null;
      for (let s = 0; s < scopes.length; s++) {
        const sg = scopes[s];
        const items = sg[itemField];
        if (!range.take(items.length)) continue;
        service ??= serviceOf(group.resource);
        const ctx = new EntryContext(group, sg, service, batch, null);
        for (let i = range.lo; i < range.hi; i++) out.push(entryOf(items[i], ctx, ++this.seq));
      }
    }
  }

  /**
   * Keeps each data point of the items (metrics) as one stored item.
   * @param {any[]} groups @param {string} scopeField @param {string} itemField @param {Batch} batch @param {Entry[]} out
   * @param {ItemRange} range
   */
  collectPoints(groups, scopeField, itemField, batch, out, range) {
    for (const group of groups) {
      const service = serviceOf(group.resource);
      for (const sg of group[scopeField]) {
        /**
         * Metrics of one scope that are the same metric (one name, type, unit and so on; a sender may
         * write one per point) share one context. @type {Map<any, EntryContext>}
         */
        const contexts = new Map();
        for (const m of sg[itemField]) {
          const points = pointsOf(m);
          if (!range.take(points.length)) continue;
          const metric = storedFormOf(m);
          let ctx = contexts.get(metric);
          if (!ctx) {
            ctx = new EntryContext(group, sg, service, batch, metric);
            contexts.set(metric, ctx);
          }
          for (let i = range.lo; i < range.hi; i++) out.push(entryOf(points[i], ctx, ++this.seq));
        }
      }
    }
  }

  /**
   * Keeps each sample of the items (profiles) as one stored item; the samples of a profile share its context,
   * which holds the profile without its samples and the request's dictionary.
   * @param {any} request @param {import('../otlp/signals.js').Signal} row @param {Batch} batch @param {Entry[]} out
   * @param {ItemRange} range
   */
  collectSamples(request, row, batch, out, range) {
    const { dictionary } = request;
    for (const group of request[row.rootField]) {
      const service = serviceOf(group.resource);
      for (const sg of group[row.scopeField]) {
        for (const p of sg[row.itemField]) {
          if (!range.take(p.samples.length)) continue;
          const { samples, ...profile } = p;
          const ctx = new EntryContext(group, sg, service, batch, null, Object.freeze({ ...profile, dictionary }));
          for (let i = range.lo; i < range.hi; i++) out.push(entryOf(samples[i], ctx, ++this.seq));
        }
      }
    }
  }

  /** @param {SpanEntry} entry */
  index(entry) {
    const id = entry.traceId;
    let trace = id === this.lastTraceId ? this.lastTrace : this.traces.get(id);
    if (!trace) {
      trace = new TraceSpans(id, entry.seq);
      this.traces.set(id, trace);
    }
    trace.entries.push(entry);
    entry.trace = trace;
    this.traceChanges.add(trace);
    this.lastTrace = trace;
    this.lastTraceId = id;
  }

  /** @param {SpanEntry} entry */
  unindex(entry) {
    const trace = entry.trace;
    if (!trace) return;
    entry.trace = null;
    const list = trace.entries;
    this.traceChanges.add(trace);
    if (list[trace.head] === entry) list[trace.head++] = undefined;
    else {
      const at = list.indexOf(entry, trace.head);
      if (at >= 0) list.splice(at, 1);
      trace.removals++;
    }
    if (trace.head === list.length) {
      this.traces.delete(entry.traceId);
      if (this.lastTrace === trace) this.lastTrace = null;
    } else if (trace.head > 64 && trace.head * 2 > list.length) {
      list.splice(0, trace.head);
      trace.compacted += trace.head;
      trace.head = 0;
    }
  }

  /** @param {string} traceId @returns {Entry[]} */
  spansOfTrace(traceId) {
    const trace = this.traces.get(traceId);
    return trace ? trace.stored() : [];
  }

  /** Every stored trace, in the order its first span arrived. @returns {IterableIterator<TraceSpans>} */
  eachTrace() {
    return this.traces.values();
  }

  /** @param {import('../otlp/signals.js').SignalName} signal @returns {Ring<Entry>|PlaceRing<Entry>} */
  ring(signal) {
    return this.rings[signal];
  }

  /** @param {(batch: StoredBatch) => void} listener @returns {() => void} unsubscribe */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Clearing is a change too: observers that hold items or counts drop them, and open pages start over.
   * @param {() => void} listener called once the store is empty @returns {() => void} unsubscribe
   */
  onCleared(listener) {
    this.clearListeners.add(listener);
    return () => this.clearListeners.delete(listener);
  }

  clear() {
    for (const ring of Object.values(this.rings)) ring.clear();
    for (const key of Object.keys(this.counts)) this.counts[key] = zero();
    this.traces.clear();
    this.lastTrace = null;
    this.clears++;
    this.traceChanges.clear();
    for (const listener of this.clearListeners) listener();
  }

  stats() {
    /** @type {Record<string, { stored: number, received: number, evicted: number, evictedForBytes: number, capacity: number, bytes: number, byteBudget: number|null }>} */
    const out = {};
    for (const [signal, ring] of Object.entries(this.rings)) {
      const budget = this.budgets[signal];
      out[signal] = { stored: ring.size, ...this.counts[signal], capacity: ring.capacity, bytes: ring.bytes, byteBudget: Number.isFinite(budget) ? budget : null };
    }
    return out;
  }
}

function zero() {
  return { received: 0, evicted: 0, evictedForBytes: 0 };
}
