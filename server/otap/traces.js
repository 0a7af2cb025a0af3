// SPANS and its related tables → ExportTraceServiceRequest. Spans name their attributes, events and links by
// `id` (a difference from the previous span's id); events and links name their span by `parent_id`, given as a
// difference from the previous row's when the event's name (the link's trace id) is the same.
import { attributesByParent, DeltaIds } from './attributes.js';
import { column, nanos, stepEndsAt, struct } from './columns.js';
import { writeEnvelopes } from './envelope.js';

/** @typedef {import('./otlp-writer.js').OtlpWriter} OtlpWriter */

/**
 * Rows of SPAN_EVENTS or SPAN_LINKS by the span they belong to, each a function that writes it.
 * @param {any} batch @param {Map<number, any>} attrs @param {'name'|'trace_id'} runKey
 * @param {(w: OtlpWriter, row: number, attributes: any) => void} write
 * @returns {import('./columns.js').Steps<Map<number, ((w: OtlpWriter) => void)[]>>}
 */
function* related(batch, attrs, runKey, write) {
  /** @type {Map<number, ((w: OtlpWriter) => void)[]>} */
  const byParent = new Map();
  if (!batch) return byParent;
  const parent = column(batch, 'parent_id');
  const key = column(batch, runKey);
  const id = column(batch, 'id');
  const ids = new DeltaIds();
  let prevKey = null;
  let prevParent = 0;
  for (let row = 0; row < batch.numRows; row++) {
    let k = key(row) ?? '';
    if (k instanceof Uint8Array) k = Buffer.from(k).toString('hex');
    const raw = Number(parent(row) ?? 0);
    const p = k === prevKey ? prevParent + raw : raw;
    prevKey = k;
    prevParent = p;
    const own = ids.next(id(row));
    const attributes = own === null ? undefined : attrs.get(own);
    let list = byParent.get(p);
    if (!list) byParent.set(p, (list = []));
    list.push((w) => write(w, row, attributes));
    if (stepEndsAt(row)) yield;
  }
  return byParent;
}

/**
 * @param {OtlpWriter} w
 * @param {Map<string, any>} tables record batches by payload type name
 * @param {import('./envelope.js').EnvelopeAttributes} envelope
 * @returns {import('./columns.js').Steps<void>}
 */
export function* writeTraces(w, tables, envelope) {
  const spans = tables.get('SPANS');
  if (!spans) return;
  const spanAttrs = yield* attributesByParent(tables.get('SPAN_ATTRS'));
  const events = tables.get('SPAN_EVENTS');
  const eventTime = column(events, 'time_unix_nano');
  const eventName = column(events, 'name');
  const eventDropped = column(events, 'dropped_attributes_count');
  const eventsOf = yield* related(events, yield* attributesByParent(tables.get('SPAN_EVENT_ATTRS')), 'name', (w, row, attributes) => {
    w.fixed64(1, nanos(eventTime(row)));
    w.string(2, eventName(row) ?? '');
    w.attributes(3, attributes);
    w.uint(4, eventDropped(row) ?? 0);
  });
  const links = tables.get('SPAN_LINKS');
  const linkTrace = column(links, 'trace_id');
  const linkSpan = column(links, 'span_id');
  const linkState = column(links, 'trace_state');
  const linkDropped = column(links, 'dropped_attributes_count');
  const linkFlags = column(links, 'flags');
  const linksOf = yield* related(links, yield* attributesByParent(tables.get('SPAN_LINK_ATTRS')), 'trace_id', (w, row, attributes) => {
    w.id(1, linkTrace(row));
    w.id(2, linkSpan(row));
    w.string(3, linkState(row) ?? '');
    w.attributes(4, attributes);
    w.uint(5, linkDropped(row) ?? 0);
    w.fixed32(6, linkFlags(row) ?? 0);
  });

  const id = column(spans, 'id');
  const start = column(spans, 'start_time_unix_nano');
  const duration = column(spans, 'duration_time_unix_nano');
  const traceId = column(spans, 'trace_id');
  const spanId = column(spans, 'span_id');
  const traceState = column(spans, 'trace_state');
  const parentSpanId = column(spans, 'parent_span_id');
  const flags = column(spans, 'flags');
  const name = column(spans, 'name');
  const kind = column(spans, 'kind');
  const dropped = column(spans, 'dropped_attributes_count');
  const droppedEvents = column(spans, 'dropped_events_count');
  const droppedLinks = column(spans, 'dropped_links_count');
  const status = struct(spans, 'status');
  const statusCode = column(status, 'code');
  const statusMessage = column(status, 'status_message');
  const ids = new DeltaIds();

  yield* writeEnvelopes(w, spans, envelope, 2, (row) => {
    const own = ids.next(id(row));
    const startNanos = nanos(start(row));
    w.id(1, traceId(row));
    w.id(2, spanId(row));
    w.string(3, traceState(row) ?? '');
    w.id(4, parentSpanId(row));
    w.string(5, name(row) ?? '');
    w.uint(6, kind(row) ?? 0);
    w.fixed64(7, startNanos);
    w.fixed64(8, BigInt.asUintN(64, startNanos + BigInt(duration(row) ?? 0)));
    if (own !== null) w.attributes(9, spanAttrs.get(own));
    w.uint(10, dropped(row) ?? 0);
    if (own !== null) for (const event of eventsOf.get(own) ?? []) (w.begin(11), event(w), w.end());
    w.uint(12, droppedEvents(row) ?? 0);
    if (own !== null) for (const link of linksOf.get(own) ?? []) (w.begin(13), link(w), w.end());
    w.uint(14, droppedLinks(row) ?? 0);
    if (status && status.isValid(row)) {
      w.begin(15);
      w.string(2, statusMessage(row) ?? '');
      w.uint(3, statusCode(row) ?? 0);
      w.end();
    }
    w.fixed32(16, flags(row) ?? 0);
  });
}

/** @type {import('./services.js').OtapService} */
export const ARROW_TRACES = Object.freeze({
  signal: 'traces',
  method: 'ArrowTracesService/ArrowTraces',
  // RESOURCE_ATTRS, SCOPE_ATTRS, SPANS, SPAN_ATTRS, SPAN_EVENTS, SPAN_LINKS, SPAN_EVENT_ATTRS, SPAN_LINK_ATTRS
  types: Object.freeze([1, 2, 40, 41, 42, 43, 44, 45]),
  itemRows: 'SPANS',
  write: writeTraces,
});
