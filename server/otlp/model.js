/**
 * The canonical model (docs/internals.md): what every decoder gives and every reader takes, typed here once.
 * Field names are OTLP/JSON's; 64-bit integers are exact decimal strings ("0" when unset), ids lowercase hex
 * ("" when unset), enums numbers, bytes base64.
 * @typedef {{ stringValue?: string, boolValue?: boolean, intValue?: string, doubleValue?: number, bytesValue?: string,
 *   arrayValue?: { values: AnyValue[] }, kvlistValue?: { values: KeyValue[] } }} AnyValue an empty object when unset
 * @typedef {{ key: string, value: AnyValue }} KeyValue
 * @typedef {readonly KeyValue[]} Attributes
 * @typedef {{ attributes: Attributes, droppedAttributesCount: number, entityRefs: readonly any[] }} Resource
 * @typedef {{ name: string, version: string, attributes: Attributes, droppedAttributesCount: number }} Scope
 * @typedef {{ message: string, code: number }} Status
 * @typedef {{ timeUnixNano: string, name: string, attributes: Attributes, droppedAttributesCount: number }} SpanEvent
 * @typedef {{ traceId: string, spanId: string, traceState: string, attributes: Attributes,
 *   droppedAttributesCount: number, flags: number }} SpanLink
 * @typedef {{ traceId: string, spanId: string, traceState: string, parentSpanId: string, flags: number, name: string,
 *   kind: number, startTimeUnixNano: string, endTimeUnixNano: string, attributes: Attributes,
 *   droppedAttributesCount: number, events: readonly SpanEvent[], droppedEventsCount: number,
 *   links: readonly SpanLink[], droppedLinksCount: number, status: Status }} Span
 * @typedef {{ timeUnixNano: string, observedTimeUnixNano: string, severityNumber: number, severityText: string,
 *   body: AnyValue, attributes: Attributes, droppedAttributesCount: number, flags: number, traceId: string,
 *   spanId: string, eventName: string }} LogRecord
 * @typedef {{ attributes: Attributes, startTimeUnixNano: string, timeUnixNano: string, flags: number } & Record<string, any>} DataPoint
 *   one point of any metric type: its value fields are the type's (asDouble or asInt, count and buckets, quantiles)
 *
 * A stored item (store/store.js): a decoded item with its context, or for items received in protobuf a
 * LazyItem, built when read. The methods are what queries filter on, answered by a LazyItem from its bytes.
 * @typedef {import('../store/store.js').EntryContext} EntryContext
 * @typedef {import('../store/store.js').TraceSpans} TraceSpans
 * @typedef {{ readonly item: any, ctx: EntryContext, seq: number, trace?: TraceSpans|null, readonly traceId?: string,
 *   attribute(key: string): AnyValue|undefined }} Entry any stored item
 * @typedef {Entry & { readonly item: Span, readonly traceId: string, trace: TraceSpans|null, spanId(): string,
 *   outline(): import('./decode/traces.js').SpanOutline, facts(): typeof import('./decode/traces.js').spanFacts,
 *   startHalves(): { hi: number, lo: number },
 *   treeNode(): { spanId: string, parentSpanId: string, startTimeUnixNano: string } }} SpanEntry
 * @typedef {Entry & { time(): string, timeOrder(bound: import('./items.js').NanosBound): number, timeNumber(): number }} TimedEntry
 *   a log record or data point: `time` is a log record's observed time when it has none; `timeOrder` compares it
 *   with a bound, `timeNumber` is it as a sort key
 * @typedef {TimedEntry & { readonly item: LogRecord, readonly traceId: string, spanId(): string, severityNumber(): number,
 *   body(): AnyValue }} LogEntry
 * @typedef {TimedEntry & { readonly item: DataPoint }} PointEntry
 *
 * @typedef {import('./signals.js').Signal} Signal the signal table's row
 * @typedef {import('./signals.js').SignalName} SignalName
 */

/*
 * Shared, frozen defaults of the canonical model. Decoders hand out these same objects for every unset
 * field, so an empty field costs no memory; nothing may mutate a decoded request.
 */
export const EMPTY_ARRAY = /** @type {any[]} */ (/** @type {unknown} */ (Object.freeze([])));
export const EMPTY_ANY = Object.freeze({});
/** @type {{ message: string, code: number }} */
export const DEFAULT_STATUS = Object.freeze({ message: '', code: 0 });
/** @type {{ offset: number, bucketCounts: string[] }} */
export const DEFAULT_BUCKETS = Object.freeze({ offset: 0, bucketCounts: EMPTY_ARRAY });
export const DEFAULT_RESOURCE = Object.freeze({ attributes: EMPTY_ARRAY, droppedAttributesCount: 0, entityRefs: EMPTY_ARRAY });
export const DEFAULT_SCOPE = Object.freeze({ name: '', version: '', attributes: EMPTY_ARRAY, droppedAttributesCount: 0 });

// The model keeps 64-bit integers as exact decimal strings without leading zeros ("0" when unset).

/** Compares two such strings as the numbers they are: by length first. @param {string} a @param {string} b */
export function compareNanos(a, b) {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** `end - start` as a decimal string, "0" when either is unset. @param {string} start @param {string} end */
export function durationNanos(start, end) {
  if (start === '0' || end === '0') return '0';
  return (BigInt(end) - BigInt(start)).toString();
}
