// The stored item model: spans, log records and data points checked at ingest and built when read (LazyItem),
// the readers queries filter by, and decodeProto, which makes them (or canonical items) from a request's bytes.
// Imports run one way: this module → the decoders (decode/traces.js, logs.js, metrics.js, common.js) → the wire
// reader (decode/wire.js). The decoders construct no item: this module hands the metric decoder the factory of
// its points, and wraps the span and log record decoders in the checks that make theirs.
import { LazyMetric, metricOf, pointsOf } from './metric.js';
import { compareNanos } from './model.js';
import { EnvelopeWalk, ItemCount, attributesTextIn, attributeValueIn, requestGroups, wantAttribute, wantAttributes } from './decode/common.js';
import {
  LOG_ITEM,
  bodyIn,
  logRecord,
  rawTimeIn as logRawTimeIn,
  severityIn,
  spanIdIn as logSpanIdIn,
  timeIn as logTimeIn,
  traceIdIn as logTraceIdIn,
  checkedTimeKey,
} from './decode/logs.js';
import { METRIC_TYPES_BY_KEY, POINTS_IN_METRIC, metric, rawTimeIn as pointRawTimeIn, timeIn as pointTimeIn } from './decode/metrics.js';
import {
  DictionaryWalk,
  EMPTY_DICTIONARY,
  SAMPLES_IN_PROFILE,
  SAMPLE_ITEM,
  builtDictionary,
  checkDictionary,
  profile,
  profilesRequest,
  sample,
} from './decode/profiles.js';
import { SPAN_ITEM, checkedStart, outlineIn, span, spanFacts, spanFactsIn, spanIdIn as spanSpanIdIn, treeNodeIn } from './decode/traces.js';
import { check, close, cursor, delimited, fail, finish, halves, open, ownSource, placeOf, readItem, u64String, varint32 } from './decode/wire.js';

/** @typedef {import('./decode/wire.js').Source} Source */
/** @typedef {import('./decode/common.js').ItemKind} ItemKind */
/** @typedef {import('./decode/metrics.js').MetricType} MetricType */
/** @typedef {import('./decode/traces.js').SpanOutline} SpanOutline */

/** The request being decoded lazily, created when its first item is checked. @type {Source|null} */
let source = null;
/** The context of its items until the store gives them theirs. @type {any} */
let unstored = null;

/** Items (and dictionaries) built since the current macrotask began; their memos are dropped when it ends. @type {{ built: any }[]} */
let built = [];

function forgetBuilt() {
  for (const lazy of built) lazy.built = null;
  built = [];
}

/** @param {{ built: any }} lazy just built */
function remember(lazy) {
  if (built.length === 0) setImmediate(forgetBuilt);
  built.push(lazy);
}

/**
 * A span, log record or data point checked at ingest but built only when something reads it: it knows its
 * request's bytes and its place in them. Reading a stored item is rare next to receiving one, and most of a
 * full decode is creating strings, so ingestion costs a fraction of a decode and a stored item little more
 * than its encoding. The check ran the decoder itself over these bytes, so building cannot fail.
 */
export class LazyItem {
  /**
   * @param {{ batch: { source: Source } }} ctx what the item shares with the others of its request: until the
   *   store gives it its entry context (the item is its own store entry), one that holds just the request's bytes
   * @param {number} place where the item's length prefix begins (placeOf): with the request's bytes, all it
   *   takes to find the item, and all the store keeps of log records and data points
   */
  constructor(ctx, place) {
    /** @type {any} */
    this.ctx = ctx;
    this.place = place;
    /** @type {any} the built item, kept until the current macrotask ends so repeated reads build once */
    this.built = null;
    this.seq = 0;
  }

  /** @returns {Source} the request's bytes */
  get source() {
    return this.ctx.batch.source;
  }

  /** @returns {ItemKind} */
  get kind() {
    throw new TypeError('a LazyItem is a span, a log record or a data point');
  }

  /** The store entry's item. @returns {any} */
  get item() {
    return this.build();
  }

  /** @returns {any} the canonical item, equal to what decodeProto builds */
  build() {
    if (this.built !== null) return this.built;
    this.built = this.read(this.kind.decode);
    remember(this);
    return this.built;
  }

  // Queries filter by a field or two: reading just those from the bytes costs a small part of a build.
  // Later occurrences of a field win, as in a full decode.

  /**
   * The value of the first attribute with this key, as the built item's `attributes` would give it.
   * @param {string} key @returns {any} an AnyValue, or undefined
   */
  attribute(key) {
    if (this.built !== null) return attributeIn(this.built.attributes, key);
    wantAttribute(key, this.kind.attributesTag);
    return this.read(attributeValueIn);
  }

  /** Runs a reader over this item's bytes. @template T @param {(end: number) => T} reader @returns {T} */
  read(reader) {
    return readItem(this.ctx.batch.source, this.place, reader);
  }
}

/** A span checked at ingest and built when read; the store keeps it as the span's entry. */
export class LazySpan extends LazyItem {
  /**
   * @param {{ batch: { source: Source } }} ctx @param {number} place @param {string} traceId
   * @param {number} startAt where its start time's eight bytes begin, counted from its place; -1: it has none
   */
  constructor(ctx, place, traceId, startAt) {
    super(ctx, place);
    this.traceId = traceId;
    /** Ranking traces by start reads the start of every span that arrives: found by the check, it is two reads. */
    this.startAt = startAt;
    /** @type {SpanOutline|null} read once, when a query first asks: every query of a list view reads it */
    this.outlined = null;
    /** @type {any} the trace index's list this span is in */
    this.trace = null;
  }

  get kind() {
    return SPAN_ITEM;
  }

  /** @returns {SpanOutline} */
  outline() {
    return (this.outlined ??= this.built !== null ? outlineOf(this.built) : this.read(outlineIn));
  }

  /** @returns {string} */
  spanId() {
    return this.built !== null ? this.built.spanId : this.read(spanSpanIdIn);
  }

  /** What a trace's summary takes from it (`spanFacts`, filled anew by each call), read from its bytes. */
  facts() {
    return this.read(spanFactsIn);
  }

  /** Its start time as 32-bit halves, in wire.js's `halves`: 0 and 0 when it has none. */
  startHalves() {
    if (this.startAt < 0) {
      halves.hi = halves.lo = 0;
      return halves;
    }
    const view = this.ctx.batch.source.view;
    const at = this.place + this.startAt;
    halves.lo = view.getUint32(at, true);
    halves.hi = view.getUint32(at + 4, true);
    return halves;
  }

  /** Its id, its parent's and its start, without building it (`--print summary` draws a tree of a request's spans). */
  treeNode() {
    return this.built !== null ? treeNodeOf(this.built) : this.read(treeNodeIn);
  }
}

/** @param {any} span a canonical span @returns {{ spanId: string, parentSpanId: string, startTimeUnixNano: string }} */
export function treeNodeOf(span) {
  return { spanId: span.spanId, parentSpanId: span.parentSpanId, startTimeUnixNano: span.startTimeUnixNano };
}

/**
 * Readers of an item's time: as text, as two halves (into the wire reader's `halves`), and from the built item.
 * @typedef {{ text: (end: number) => string, raw: (end: number) => void, of: (item: any) => string }} ItemTimes
 */

/** A log record or a data point: items whose time queries filter and sort on. */
class LazyTimedItem extends LazyItem {
  /** @param {{ batch: { source: Source } }} ctx @param {number} place */
  constructor(ctx, place) {
    super(ctx, place);
    /**
     * Where its store keeps the sort key of the item in each slot (PlaceRing.sortKeys), or null: a view sorted by time
     * asks every second, and reading a hundred thousand times from their bytes took 21 ms each time.
     * @type {import('../store/places.js').SortKeys|null}
     */
    this.sortKeys = null;
    this.slot = 0;
    /** Its sort key as read when it was checked at ingest, which its ring keeps from the start; NaN when not read. */
    this.checkedKey = NaN;
  }

  /** @returns {ItemTimes} */
  get times() {
    throw new TypeError('a LazyTimedItem is a log record or a data point');
  }

  /** The item's time (a log record's observed time when it has none). @returns {string} */
  time() {
    return this.built !== null ? this.times.of(this.built) : this.read(this.times.text);
  }

  /** How `time()` compares with a bound, -1, 0 or 1, without making its text. @param {NanosBound} bound */
  timeOrder(bound) {
    if (this.built !== null) return Math.sign(compareNanos(this.time(), bound.text));
    this.read(this.times.raw);
    if (halves.hi !== bound.hi) return halves.hi < bound.hi ? -1 : 1;
    return halves.lo < bound.lo ? -1 : halves.lo > bound.lo ? 1 : 0;
  }

  /** `Number(time())` without making its text: a sort key. */
  timeNumber() {
    const kept = this.sortKeys;
    // The slot's key is this item's only while the slot holds it: an item made before its slot was reused may still be read.
    if (kept !== null && kept.seqs[this.slot] === this.seq) return kept.keys[this.slot];
    let key;
    if (this.built !== null) key = Number(this.time());
    else {
      this.read(this.times.raw);
      key = halves.hi * 4294967296 + halves.lo;
    }
    if (kept !== null) {
      kept.keys[this.slot] = key;
      kept.seqs[this.slot] = this.seq;
    }
    return key;
  }
}

/**
 * A log record checked at ingest and built when read. The store keeps only its context and place, and makes
 * one of these again whenever the record is read (`LazyLogRecord.placed`).
 */
export class LazyLogRecord extends LazyTimedItem {
  /**
   * @param {any} ctx a store entry's context (its `batch` has the request's `source`) @param {number} place @param {number} seq
   * @param {import('../store/places.js').SortKeys|null} [sortKeys] @param {number} [slot] where its ring keeps its sort key
   */
  static placed(ctx, place, seq, sortKeys = null, slot = 0) {
    const record = new LazyLogRecord(ctx, place);
    record.seq = seq;
    record.sortKeys = sortKeys;
    record.slot = slot;
    return record;
  }

  get kind() {
    return LOG_ITEM;
  }

  /** @returns {string} */
  get traceId() {
    return this.built !== null ? this.built.traceId : this.read(logTraceIdIn);
  }

  /** @returns {string} */
  spanId() {
    return this.built !== null ? this.built.spanId : this.read(logSpanIdIn);
  }

  get times() {
    return LOG_TIMES;
  }

  /** @returns {number} */
  severityNumber() {
    return this.built !== null ? this.built.severityNumber : this.read(severityIn);
  }

  /** @returns {any} the body, an AnyValue */
  body() {
    return this.built !== null ? this.built.body : this.read(bodyIn);
  }
}

/**
 * A data point checked at ingest and built when read. The store keeps only its context (whose `metric`
 * says what type of point it is) and place, and makes one of these again whenever the point is read.
 */
export class LazyPoint extends LazyTimedItem {
  /**
   * @param {any} ctx a store entry's context (its `batch` has the request's `source`) @param {number} place @param {number} seq
   * @param {import('../store/places.js').SortKeys|null} [sortKeys] @param {number} [slot] where its ring keeps its sort key
   */
  static placed(ctx, place, seq, sortKeys = null, slot = 0) {
    const point = new LazyPoint(ctx, place, METRIC_TYPES_BY_KEY[ctx.metric.type]);
    point.seq = seq;
    point.sortKeys = sortKeys;
    point.slot = slot;
    return point;
  }

  /** @param {{ batch: { source: Source } }} ctx @param {number} place @param {MetricType} type */
  constructor(ctx, place, type) {
    super(ctx, place);
    this.type = type;
  }

  get kind() {
    return this.type;
  }

  get times() {
    return POINT_TIMES;
  }

  /** The bytes of the point's attributes as text, read whether or not it is built: equal texts, equal attributes. */
  attributesText() {
    wantAttributes(this.type.attributesTag);
    return this.read(attributesTextIn);
  }
}

/**
 * A profile sample checked at ingest and built when read. The store keeps only its context (whose `profile` is
 * its profile without samples, with the request's dictionary) and place, and makes one of these again whenever
 * the sample is read. Its attributes are indices into the dictionary (query/profiles.js reads them).
 */
export class LazySample extends LazyItem {
  /** @param {any} ctx a store entry's context @param {number} place @param {number} seq */
  static placed(ctx, place, seq) {
    const s = new LazySample(ctx, place);
    s.seq = seq;
    return s;
  }

  get kind() {
    return SAMPLE_ITEM;
  }

  /** @param {string} key */
  attribute(key) {
    return sampleAttributeIn(this.build(), this.ctx.profile, key);
  }
}

/**
 * A sample's attribute: its own (indices into the dictionary's attributes), else its profile's.
 * @param {any} sample a canonical Sample @param {any} profile its profile, with the request's dictionary
 * @param {string} key @returns {any} an AnyValue, or undefined
 */
export function sampleAttributeIn(sample, profile, key) {
  const { attributeTable, stringTable } = profile.dictionary;
  for (const indices of [sample.attributeIndices, profile.attributeIndices]) {
    for (const i of indices) {
      const a = attributeTable[i];
      if (a && (stringTable[a.keyStrindex] ?? '') === key) return a.value;
    }
  }
  return undefined;
}

/**
 * A profiles request's dictionary checked at ingest and built when read, as its samples are: a query or an export
 * reads its tables (each getter builds them all, once per macrotask), and the store keeps its place alone.
 */
export class LazyDictionary {
  /** @param {Source} source the request's bytes @param {number} place where the dictionary's length prefix begins */
  constructor(source, place) {
    this.source = source;
    this.place = place;
    /** @type {any} */
    this.built = null;
  }

  /** @returns {any} the canonical ProfilesDictionary, equal to what decodeProto builds */
  build() {
    if (this.built !== null) return this.built;
    this.built = readItem(this.source, this.place, builtDictionary);
    remember(this);
    return this.built;
  }

  get stringTable() {
    return this.build().stringTable;
  }

  get attributeTable() {
    return this.build().attributeTable;
  }

  get functionTable() {
    return this.build().functionTable;
  }

  get locationTable() {
    return this.build().locationTable;
  }

  get mappingTable() {
    return this.build().mappingTable;
  }

  get stackTable() {
    return this.build().stackTable;
  }

  get linkTable() {
    return this.build().linkTable;
  }

  toJSON() {
    return this.build();
  }
}

/** @param {any} dictionary a LazyDictionary or a built one @returns {any} the built one */
const builtDictionaryOf = (dictionary) => (dictionary instanceof LazyDictionary ? dictionary.build() : dictionary);

// ---- readers of built items ----

/** @param {any} span a canonical span @returns {SpanOutline} */
export function outlineOf(span) {
  return {
    name: span.name,
    isRoot: span.parentSpanId === '',
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    statusCode: span.status.code,
  };
}

/** A time's decimal text from its 32-bit halves, as `spanFacts` holds them. @param {number} hi @param {number} lo */
export const nanosText = (hi, lo) => u64String(lo, hi);

/** `spanFacts` filled in from a canonical span. @param {any} span */
export function spanFactsOf(span) {
  const start = BigInt(span.startTimeUnixNano);
  const end = BigInt(span.endTimeUnixNano);
  spanFacts.isRoot = span.parentSpanId === '';
  spanFacts.statusCode = span.status.code;
  spanFacts.startHi = Number(start >> 32n);
  spanFacts.startLo = Number(start & 0xffffffffn);
  spanFacts.endHi = Number(end >> 32n);
  spanFacts.endLo = Number(end & 0xffffffffn);
  return spanFacts;
}

/** A log record's time, or its observed time when it has none. @param {any} record a canonical LogRecord */
export function logTimeOf(record) {
  return record.timeUnixNano !== '0' ? record.timeUnixNano : record.observedTimeUnixNano;
}

/** @type {ItemTimes} */
const LOG_TIMES = { text: logTimeIn, raw: logRawTimeIn, of: logTimeOf };
/** @type {ItemTimes} */
const POINT_TIMES = { text: pointTimeIn, raw: pointRawTimeIn, of: (point) => point.timeUnixNano };

/** @param {any[]} attributes @param {string} key */
export function attributeIn(attributes, key) {
  for (const kv of attributes) if (kv.key === key) return kv.value;
  return undefined;
}

// Times compared with a bound as read, in two 32-bit halves: making their text costs most of a read.

/** A time to compare stored times with (`timeOrder`). @typedef {{ text: string, hi: number, lo: number }} NanosBound */

/** @param {string} text a time in the model's notation: a decimal string of nanoseconds @returns {NanosBound} */
export function nanosBound(text) {
  const n = BigInt(text);
  return { text, hi: Number(n >> 32n), lo: Number(n & 0xffffffffn) };
}

// ---- checking items at ingest ----

/** The bytes of the request being decoded, which its lazy items keep. @returns {Source} */
function requestSource() {
  if (source === null) {
    source = ownSource();
    unstored = { batch: { source } };
  }
  return source;
}

/** @param {number} end @returns {LazySpan} */
function checkedSpan(end) {
  const start = cursor.pos;
  requestSource();
  cursor.keepTraceId = true;
  const { traceId } = check(span, end);
  cursor.keepTraceId = false;
  const place = placeOf(cursor.buf, start);
  return new LazySpan(unstored, place, traceId, checkedStart.at < 0 ? -1 : checkedStart.at - place);
}

/** @param {number} end */
function checkedLogRecord(end) {
  const start = cursor.pos;
  requestSource();
  check(logRecord, end);
  const record = new LazyLogRecord(unstored, placeOf(cursor.buf, start));
  record.checkedKey = checkedTimeKey(cursor.view);
  return record;
}

/** The factory of a lazy decode's data points (metrics.js PointItem). @param {number} end @param {MetricType} type */
function checkedPoint(end, type) {
  const start = cursor.pos;
  requestSource();
  check(type.decode, end);
  return new LazyPoint(unstored, placeOf(cursor.buf, start), type);
}

/** @param {number} end */
function checkedSample(end) {
  const start = cursor.pos;
  requestSource();
  check(sample, end);
  return new LazySample(unstored, placeOf(cursor.buf, start));
}

/** @param {number} end */
function checkedDictionary(end) {
  const start = cursor.pos;
  requestSource();
  checkDictionary(end);
  return new LazyDictionary(/** @type {Source} */ (source), placeOf(cursor.buf, start));
}

/** @param {any} x */
const builtItem = (x) => (x instanceof LazyItem ? x.build() : x);

/** @param {any} p a Profile whose samples may be LazySamples */
const builtProfile = (p) => ({ ...p, samples: p.samples.map(builtItem) });

/** @param {any} m a canonical Metric, or a LazyMetric */
const builtMetric = (m) => (m instanceof LazyMetric ? metricOf(m.metric, m.dataPoints.map(builtItem)) : m);

/**
 * A request with every item built, for a request decoded with `lazy` that is kept whole.
 * @param {import('./signals.js').Signal} signal @param {any} request
 */
export function builtRequest(signal, request) {
  const { rootField, scopeField, itemField } = signal;
  const build = signal.storedItems === 'points' ? builtMetric : signal.storedItems === 'samples' ? builtProfile : builtItem;
  return {
    ...request,
    ...ITEM_DECODERS[signal.item.kind].rest?.(request),
    [rootField]: request[rootField].map((/** @type {any} */ group) => ({
      ...group,
      [scopeField]: group[scopeField].map((/** @type {any} */ sg) => ({ ...sg, [itemField]: sg[itemField].map(build) })),
    })),
  };
}

/**
 * How stored items go back into their request (store/rebuild.js, the inverse of Store.addRequest): `into` puts an
 * entry's item among its scope's items, inside the item it was stored from (a metric's data points, a profile's
 * samples), which `parents` keeps by entry context; `rest` gives the request's fields besides its resource groups.
 * @typedef {{
 *   into: (items: any[], ctx: any, item: any, parents: Map<any, any>) => void,
 *   rest?: (parents: Map<any, any>) => Record<string, any>,
 * }} Regroup
 */

/** @type {Regroup} */
const ITEMS_THEMSELVES = { into: (items, ctx, item) => items.push(item) };

/**
 * The parent an entry's item goes back into, made the first time one of its context's items does.
 * @param {any[]} items @param {any} ctx @param {Map<any, any>} parents @param {(ctx: any) => any} make
 */
function parentOf(items, ctx, parents, make) {
  let parent = parents.get(ctx);
  if (!parent) {
    parent = make(ctx);
    parents.set(ctx, parent);
    items.push(parent);
  }
  return parent;
}

/** @type {Regroup} */
const POINTS_IN_METRICS = {
  into: (items, ctx, item, parents) => parentOf(items, ctx, parents, (c) => metricOf(c.metric, []))[ctx.metric.type].dataPoints.push(item),
};

/** @type {Regroup} */
const SAMPLES_IN_PROFILES = {
  into(items, ctx, item, parents) {
    const first = parents.keys().next().value;
    if (first && first.profile.dictionary !== ctx.profile.dictionary)
      throw new TypeError('rebuildRequest takes the samples of one request: their indices are into its dictionary');
    parentOf(items, ctx, parents, (c) => {
      const { dictionary, ...profile } = c.profile;
      return { ...profile, samples: [] };
    }).samples.push(item);
  },
  rest(parents) {
    const first = parents.keys().next().value;
    return { dictionary: first ? builtDictionaryOf(first.profile.dictionary) : { stringTable: [] } };
  },
};

/**
 * How a sliced decode (SlicedDecode) reads a kind of item. `noting(decode)` reads an item of a scope group in the
 * envelope, each stored item in it noted by `decode.noted` (where it is) rather than checked; `lists(items, add)`
 * hands `add` each list of stored items among a scope group's items, with the type its items are checked as;
 * `check(end, type)` checks one into a LazyItem; `prelude(end)`, for a request with more than resource groups,
 * walks the rest first, and `rest(prelude, source)` gives the request's fields besides its resource groups.
 * @typedef {{
 *   noting: (decode: SlicedDecode) => (end: number) => any,
 *   lists: (items: any[], add: (list: any[], type: any) => void) => void,
 *   check: (end: number, type: any) => any,
 *   prelude?: (end: number) => DictionaryWalk,
 *   rest?: (prelude: DictionaryWalk, source: Source) => Record<string, any>,
 * }} SlicedReader
 */

/** @param {(end: number) => any} check @returns {SlicedReader} */
const itemsThemselves = (check) => ({ noting: (decode) => decode.noted, lists: (items, add) => add(items, null), check });

/** @type {SlicedReader} */
const POINTS_SLICED = {
  noting: (decode) => (end) => {
    const start = cursor.pos;
    const before = decode.notes;
    const m = metric(end, decode.noted);
    if (decode.notes - before === pointsOf(m).length) return m;
    // Its data came more than once, the last kept: every point is checked now, as the whole decode checks them.
    cursor.pos = start;
    return metric(end, checkedPoint);
  },
  lists(items, add) {
    for (const m of items) if (m instanceof LazyMetric && m.dataPoints.length) add(m.dataPoints, METRIC_TYPES_BY_KEY[m.metric.type]);
  },
  check: checkedPoint,
};

/** @type {SlicedReader} */
const SAMPLES_SLICED = {
  noting: (decode) => (end) => profile(end, decode.noted),
  lists(items, add) {
    for (const p of items) if (p.samples.length) add(p.samples, null);
  },
  check: checkedSample,
  prelude: (end) => new DictionaryWalk(end),
  rest: (walk, own) => ({ dictionary: walk.at < 0 ? EMPTY_DICTIONARY : new LazyDictionary(own, walk.at) }),
};

/**
 * The decoders of each kind of item (the signal row's `item.kind`): `full` decodes one into the canonical model;
 * `checked` checks one into a LazyItem (a metric into a LazyMetric, its points checked). `request`, for a request
 * with more than resource groups (profiles' dictionary), decodes the whole request with the item decoder it is
 * given, and `rest` builds those other fields of a request decoded lazily; `sliced`: how a sliced decode reads
 * them; `regroup`: how stored items go back into their request; `storedIn`: where the stored items are in an item,
 * for counting them before a decode.
 * @type {Record<import('./signals.js').ItemKindName, {
 *   full: (end: number) => any, checked: (end: number) => any, request?: (end: number, lazy: boolean) => any,
 *   rest?: (request: any) => Record<string, any>, sliced: SlicedReader, regroup: Regroup,
 *   storedIn: readonly import('./decode/common.js').CountLevel[],
 * }>}
 */
const ITEM_DECODERS = {
  span: { full: span, checked: checkedSpan, sliced: itemsThemselves(checkedSpan), regroup: ITEMS_THEMSELVES, storedIn: [] },
  'data point': {
    full: (end) => metric(end, null),
    checked: (end) => metric(end, checkedPoint),
    sliced: POINTS_SLICED,
    regroup: POINTS_IN_METRICS,
    storedIn: POINTS_IN_METRIC,
  },
  'log record': { full: logRecord, checked: checkedLogRecord, sliced: itemsThemselves(checkedLogRecord), regroup: ITEMS_THEMSELVES, storedIn: [] },
  sample: {
    full: sample,
    checked: checkedSample,
    request: (end, lazy) => (lazy ? profilesRequest(end, checkedSample, checkedDictionary) : profilesRequest(end, null, null)),
    rest: (request) => ({ dictionary: builtDictionaryOf(request.dictionary) }),
    sliced: SAMPLES_SLICED,
    regroup: SAMPLES_IN_PROFILES,
    storedIn: SAMPLES_IN_PROFILE,
  },
};

/**
 * A count, walked in steps without a decode, of the items a request's protobuf would store (common.js ItemCount),
 * stopped past `most`. @param {import('./signals.js').Signal} signal @param {Uint8Array} bytes @param {number} [most]
 */
export const itemCountOf = (signal, bytes, most = Infinity) => new ItemCount(bytes, ITEM_DECODERS[signal.item.kind].storedIn, most);

/** How a signal's stored items go back into their request. @param {import('./signals.js').Signal} signal */
export const regroupOf = (signal) => ITEM_DECODERS[signal.item.kind].regroup;

/**
 * @param {import('./signals.js').Signal} signal
 * @param {Uint8Array} bytes
 * @param {{ lazy?: boolean }} [options] lazy: spans, log records and data points come back as LazyItems,
 *   checked but not built, and metrics with data as LazyMetrics (`builtRequest` makes it canonical)
 * @returns {any} the canonical Export*ServiceRequest
 */
export function decodeProto(signal, bytes, { lazy = false } = {}) {
  const decoders = ITEM_DECODERS[signal.item.kind];
  const item = lazy ? decoders.checked : decoders.full;
  return decoding(
    bytes,
    () => {
      if (decoders.request) return decoders.request(cursor.buf.length, lazy);
      return { [signal.rootField]: requestGroups(cursor.buf.length, signal.scopeField, signal.itemField, item) };
    },
    signal.name,
  );
}

/**
 * Runs `decode` with the cursor on `bytes`, and lets go of them and of the request's source after; a reader's
 * RangeError (a read past the end of the bytes) is a malformed request too.
 * @template T @param {Uint8Array} bytes @param {() => T} decode @param {string} [kind] the request's signal
 * @returns {T}
 */
function decoding(bytes, decode, kind) {
  open(bytes, kind);
  try {
    return decode();
  } catch (err) {
    throw err instanceof RangeError ? fail(err.message) : err;
  } finally {
    close();
    source = null;
    unstored = null;
  }
}

/**
 * A sliced decode of a request's protobuf. @param {import('./signals.js').Signal} signal @param {Uint8Array} bytes
 * @returns {SlicedDecode} @throws {import('./errors.js').DecodeError}
 */
export const slicedDecodeOf = (signal, bytes) => new SlicedDecode(signal, bytes);

/**
 * A lazy decode (`decodeProto` with `lazy`) a few fields at a time, so that a large request does not hold the event
 * loop (100,000 spans decoded at once: 30-120 ms; a profile of 100,000 samples: 60-120 ms). `step` reads what comes
 * before the resource groups, if the request has more (profiles' dictionary, checked); then the envelope (resource
 * and scope groups, and the items that hold stored items: metrics, profiles), noting where each stored item is in
 * its place in its list; then checks the stored items, list after list. `request`, once a step says it is done, is
 * what the lazy decode returns; a malformed field is found by the step that reaches it.
 */
export class SlicedDecode {
  /** @param {import('./signals.js').Signal} signal @param {Uint8Array} bytes */
  constructor(signal, bytes) {
    this.signal = signal;
    this.reader = ITEM_DECODERS[signal.item.kind].sliced;
    /** how many stored items the envelope noted so far */
    this.notes = 0;
    /**
     * Where a stored item is, in the bytes, kept in its list until it is checked: the last byte of its tag, which
     * reads as a whole tag even when the tag is written longer than its one byte. A number in place of each item
     * costs the envelope's walk nothing more, where a place beside it cost three times the walk.
     * @param {number} end
     */
    this.noted = (end) => {
      this.notes++;
      const at = placeOf(cursor.buf, cursor.pos) - 1;
      cursor.pos = end;
      return at;
    };
    const { reader } = this;
    const { own, prelude, envelope } = decoding(
      bytes,
      () => {
        const end = cursor.buf.length;
        return {
          own: ownSource(),
          prelude: reader.prelude?.(end) ?? null,
          envelope: new EnvelopeWalk(end, signal.scopeField, signal.itemField, reader.noting(this)),
        };
      },
      signal.name,
    );
    this.source = own;
    this.unstored = { batch: { source: own } };
    /** @type {DictionaryWalk|null} what comes before the resource groups, read first; kept for their strings */
    this.prelude = prelude;
    this.preludeRead = prelude === null;
    /** @type {EnvelopeWalk|null} the envelope's walk, until it is read whole */
    this.envelope = envelope;
    /** @type {any} */
    this.request = { [signal.rootField]: envelope.groups };
    /** @type {any[][]} each list of stored items, in the order of the request, once the envelope is read */
    this.lists = [];
    /** @type {any[]} the type each list's items are checked as */
    this.types = [];
    // Where the next step begins: the list, and the place in it.
    this.list = 0;
    this.index = 0;
  }

  /**
   * Reads what comes before the resource groups, or the envelope, or checks stored items, until `bytes` of them
   * are read or none is left. @param {number} bytes @returns {boolean} whether the decode is done
   * @throws {import('./errors.js').DecodeError}
   */
  step(bytes) {
    const { envelope, prelude } = this;
    if (!this.preludeRead) {
      this.preludeRead = this.decoding(() => /** @type {DictionaryWalk} */ (prelude).step(bytes));
      return false;
    }
    if (envelope) {
      const read = this.decoding(() => (prelude ? prelude.within(() => envelope.step(bytes)) : envelope.step(bytes)));
      if (read) this.envelopeRead();
      return false;
    }
    return this.decoding(() => this.checkItems(bytes));
  }

  /** Runs `read` on the request's bytes, its lazy items keeping them. @template T @param {() => T} read @returns {T} */
  decoding(read) {
    return decoding(this.source.bytes, () => {
      source = this.source;
      unstored = this.unstored;
      return read();
    });
  }

  /** Checks stored items until `bytes` of them are read or none is left. @param {number} bytes */
  checkItems(bytes) {
    const { lists, types } = this;
    const { check } = this.reader;
    const length = cursor.buf.length;
    let left = bytes;
    while (left > 0 && this.list < lists.length) {
      const items = lists[this.list];
      if (this.index === items.length) {
        this.list++;
        this.index = 0;
        continue;
      }
      const at = items[this.index];
      // An item checked in the envelope (a metric's points, when its data came twice) is not checked again.
      if (typeof at === 'number') {
        cursor.pos = at;
        varint32();
        const end = delimited(length);
        left -= end - at;
        items[this.index] = check(end, types[this.list]);
        finish(end);
      }
      this.index++;
    }
    return this.list === lists.length;
  }

  /** Once the envelope is read whole, where its items are to be checked is known. */
  envelopeRead() {
    const { rootField, scopeField, itemField } = this.signal;
    const { prelude, reader } = this;
    this.envelope = null;
    /** @param {any[]} list @param {any} type */
    const add = (list, type) => {
      this.lists.push(list);
      this.types.push(type);
    };
    for (const group of this.request[rootField]) for (const sg of group[scopeField]) if (sg[itemField].length) reader.lists(sg[itemField], add);
    if (prelude && reader.rest) Object.assign(this.request, reader.rest(prelude, this.source));
  }
}
