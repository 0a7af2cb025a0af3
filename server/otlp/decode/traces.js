// Spans (trace.proto): the decoder of a Span, which checks one without building it while the cursor is not
// building, and readers of the fields of a checked span that queries look at.
import { DEFAULT_STATUS, EMPTY_ARRAY } from '../model.js';
import { push, keyValue } from './common.js';
import {
  cursor,
  I32,
  I64,
  LEN,
  VARINT,
  delimited,
  fieldTag,
  fieldsOf,
  finish,
  fixed32,
  fixed64Halves,
  fixed64String,
  halves,
  lastOf,
  pass,
  recurring,
  skip,
  spanIdOf,
  string,
  traceIdOf,
  varint32,
} from './wire.js';

// Each message's fields by tag (fieldTag: field number and wire type).

const SPAN = Object.freeze({
  TRACE_ID: fieldTag(1, LEN),
  SPAN_ID: fieldTag(2, LEN),
  TRACE_STATE: fieldTag(3, LEN),
  PARENT_SPAN_ID: fieldTag(4, LEN),
  NAME: fieldTag(5, LEN),
  KIND: fieldTag(6, VARINT),
  START_TIME_UNIX_NANO: fieldTag(7, I64),
  END_TIME_UNIX_NANO: fieldTag(8, I64),
  ATTRIBUTES: fieldTag(9, LEN),
  DROPPED_ATTRIBUTES_COUNT: fieldTag(10, VARINT),
  EVENTS: fieldTag(11, LEN),
  DROPPED_EVENTS_COUNT: fieldTag(12, VARINT),
  LINKS: fieldTag(13, LEN),
  DROPPED_LINKS_COUNT: fieldTag(14, VARINT),
  STATUS: fieldTag(15, LEN),
  FLAGS: fieldTag(16, I32),
});
/** Span.Event. */
const EVENT = Object.freeze({
  TIME_UNIX_NANO: fieldTag(1, I64),
  NAME: fieldTag(2, LEN),
  ATTRIBUTES: fieldTag(3, LEN),
  DROPPED_ATTRIBUTES_COUNT: fieldTag(4, VARINT),
});
/** Span.Link. */
const LINK = Object.freeze({
  TRACE_ID: fieldTag(1, LEN),
  SPAN_ID: fieldTag(2, LEN),
  TRACE_STATE: fieldTag(3, LEN),
  ATTRIBUTES: fieldTag(4, LEN),
  DROPPED_ATTRIBUTES_COUNT: fieldTag(5, VARINT),
  FLAGS: fieldTag(6, I32),
});
/** Status (field 1 is reserved: the deprecated code). */
const STATUS = Object.freeze({ MESSAGE: fieldTag(2, LEN), CODE: fieldTag(3, VARINT) });

const SPAN_FIELDS = fieldsOf(SPAN);
const EVENT_FIELDS = fieldsOf(EVENT);
const LINK_FIELDS = fieldsOf(LINK);
const STATUS_FIELDS = fieldsOf(STATUS);

// Objects made by constructors rather than literals: see the note above StringValue in common.js.

/** @constructor @param {string} message @param {number} code */
function Status(message, code) {
  this.message = message;
  this.code = code;
}
Status.prototype = Object.prototype;

/** @param {number} end */
function spanEvent(end) {
  let timeUnixNano = '0';
  let name = '';
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case EVENT.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case EVENT.NAME:
        name = string(end);
        break;
      case EVENT.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case EVENT.DROPPED_ATTRIBUTES_COUNT:
        droppedAttributesCount = varint32();
        break;
      default:
        skip(tag, end, EVENT_FIELDS);
    }
  }
  finish(end);
  return { timeUnixNano, name, attributes, droppedAttributesCount };
}

/** @param {number} end */
function spanLink(end) {
  let traceId = '';
  let spanId = '';
  let traceState = '';
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  let flags = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case LINK.TRACE_ID:
        traceId = traceIdOf(end);
        break;
      case LINK.SPAN_ID:
        spanId = spanIdOf(end);
        break;
      case LINK.TRACE_STATE:
        traceState = string(end);
        break;
      case LINK.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case LINK.DROPPED_ATTRIBUTES_COUNT:
        droppedAttributesCount = varint32();
        break;
      case LINK.FLAGS:
        flags = fixed32(end);
        break;
      default:
        skip(tag, end, LINK_FIELDS);
    }
  }
  finish(end);
  return { traceId, spanId, traceState, attributes, droppedAttributesCount, flags };
}

/** @param {number} end */
function spanStatus(end) {
  let message = '';
  let code = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === STATUS.MESSAGE) message = string(end);
    else if (tag === STATUS.CODE) code = varint32() | 0;
    else skip(tag, end, STATUS_FIELDS);
  }
  finish(end);
  return cursor.building ? new Status(message, code) : DEFAULT_STATUS;
}

/** @constructor A span with every field at its default; the decoder fills it in. */
function Span() {
  this.traceId = '';
  this.spanId = '';
  this.traceState = '';
  this.parentSpanId = '';
  this.flags = 0;
  this.name = '';
  this.kind = 0;
  this.startTimeUnixNano = '0';
  this.endTimeUnixNano = '0';
  /** @type {any[]} */
  this.attributes = EMPTY_ARRAY;
  this.droppedAttributesCount = 0;
  /** @type {any[]} */
  this.events = EMPTY_ARRAY;
  this.droppedEventsCount = 0;
  /** @type {any[]} */
  this.links = EMPTY_ARRAY;
  this.droppedLinksCount = 0;
  /** @type {{ message: string, code: number }} */
  this.status = DEFAULT_STATUS;
}
Span.prototype = Object.prototype;

/** Where checking a span writes its fields: only the trace id is read back. */
const checkedFields = new Span();

/** Where the checked span's start time begins in the bytes checked (the last of the field given twice), or -1. */
export const checkedStart = { at: -1 };

/**
 * A span's attributes are gathered here and copied out once at their final size: a list grown one push at
 * a time is reallocated on the way and keeps unused capacity for as long as it is stored.
 * @type {any[]}
 */
const spanAttributes = [];

/**
 * A canonical Span; or, while the cursor is not building (a check), the one object the check writes to, whose
 * `traceId` is the span's when the cursor keeps trace ids.
 * @param {number} end
 */
export function span(end) {
  let s = checkedFields;
  if (cursor.building) s = new Span();
  else {
    s.traceId = '';
    checkedStart.at = -1;
  }
  let attributeCount = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case SPAN.TRACE_ID:
        s.traceId = traceIdOf(end);
        break;
      case SPAN.SPAN_ID:
        s.spanId = spanIdOf(end);
        break;
      case SPAN.TRACE_STATE:
        s.traceState = string(end);
        break;
      case SPAN.PARENT_SPAN_ID:
        s.parentSpanId = spanIdOf(end);
        break;
      case SPAN.NAME:
        s.name = recurring(end);
        break;
      case SPAN.KIND:
        s.kind = varint32() | 0;
        break;
      case SPAN.START_TIME_UNIX_NANO:
        if (!cursor.building) checkedStart.at = cursor.pos;
        s.startTimeUnixNano = fixed64String(end, false);
        break;
      case SPAN.END_TIME_UNIX_NANO:
        s.endTimeUnixNano = fixed64String(end, false);
        break;
      case SPAN.ATTRIBUTES: {
        const kv = keyValue(delimited(end), 0);
        if (cursor.building) spanAttributes[attributeCount++] = kv;
        break;
      }
      case SPAN.DROPPED_ATTRIBUTES_COUNT:
        s.droppedAttributesCount = varint32();
        break;
      case SPAN.EVENTS:
        s.events = push(s.events, spanEvent(delimited(end)));
        break;
      case SPAN.DROPPED_EVENTS_COUNT:
        s.droppedEventsCount = varint32();
        break;
      case SPAN.LINKS:
        s.links = push(s.links, spanLink(delimited(end)));
        break;
      case SPAN.DROPPED_LINKS_COUNT:
        s.droppedLinksCount = varint32();
        break;
      case SPAN.STATUS:
        s.status = spanStatus(delimited(end));
        break;
      case SPAN.FLAGS:
        s.flags = fixed32(end);
        break;
      default:
        skip(tag, end, SPAN_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return s;
  if (attributeCount > 0) s.attributes = spanAttributes.slice(0, attributeCount);
  if (spanAttributes.length > 256) spanAttributes.length = 0;
  return s;
}

/** @type {import('./common.js').ItemKind} */
export const SPAN_ITEM = { decode: span, attributesTag: SPAN.ATTRIBUTES };

// ---- readers of a checked span ----

/**
 * The fields of a span that queries and trace summaries look at.
 * @typedef {{ name: string, isRoot: boolean, startTimeUnixNano: string, endTimeUnixNano: string, statusCode: number }} SpanOutline
 */

/** @param {number} end @returns {SpanOutline} */
export function outlineIn(end) {
  let name = '';
  let isRoot = true;
  let startTimeUnixNano = '0';
  let endTimeUnixNano = '0';
  let statusCode = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case SPAN.PARENT_SPAN_ID: {
        const e = delimited(end);
        isRoot = e === cursor.pos;
        cursor.pos = e;
        break;
      }
      case SPAN.NAME:
        name = recurring(end);
        break;
      case SPAN.START_TIME_UNIX_NANO:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case SPAN.END_TIME_UNIX_NANO:
        endTimeUnixNano = fixed64String(end, false);
        break;
      case SPAN.STATUS:
        statusCode = spanStatus(delimited(end)).code;
        break;
      default:
        pass(tag & 7, end);
    }
  }
  return { name, isRoot, startTimeUnixNano, endTimeUnixNano, statusCode };
}

/**
 * What a trace's summary takes from each of its spans: whether it is a root, its status code, and its start and end
 * as 32-bit halves. Kept here and filled in by each read: a summary reads every span of the store once, and the
 * outline's strings (two timestamps in decimal, the status's message) made that read cost most of what receiving
 * the span had.
 */
export const spanFacts = { isRoot: true, statusCode: 0, startHi: 0, startLo: 0, endHi: 0, endLo: 0 };

/** Fills `spanFacts` from a checked span, the last of a field given twice winning as in a full decode. @param {number} end */
export function spanFactsIn(end) {
  const facts = spanFacts;
  facts.isRoot = true;
  facts.statusCode = 0;
  facts.startHi = facts.startLo = facts.endHi = facts.endLo = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case SPAN.PARENT_SPAN_ID: {
        const e = delimited(end);
        facts.isRoot = e === cursor.pos;
        cursor.pos = e;
        break;
      }
      case SPAN.START_TIME_UNIX_NANO:
        fixed64Halves();
        facts.startHi = halves.hi;
        facts.startLo = halves.lo;
        break;
      case SPAN.END_TIME_UNIX_NANO:
        fixed64Halves();
        facts.endHi = halves.hi;
        facts.endLo = halves.lo;
        break;
      case SPAN.STATUS:
        facts.statusCode = statusCodeIn(delimited(end));
        break;
      default:
        pass(tag & 7, end);
    }
  }
  return facts;
}

/** A checked Status's code, as spanStatus reads it. @param {number} end */
function statusCodeIn(end) {
  let code = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === STATUS.CODE) code = varint32() | 0;
    else pass(tag & 7, end);
  }
  return code;
}

export const spanIdIn = lastOf(SPAN.SPAN_ID, spanIdOf, '');

/**
 * A span's place in a tree of its request's spans: its id, its parent's and its start, in one pass, as the built
 * span gives them (the last of a field given twice).
 * @param {number} end @returns {{ spanId: string, parentSpanId: string, startTimeUnixNano: string }}
 */
export function treeNodeIn(end) {
  let spanId = '';
  let parentSpanId = '';
  let startTimeUnixNano = '0';
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === SPAN.SPAN_ID) spanId = spanIdOf(end);
    else if (tag === SPAN.PARENT_SPAN_ID) parentSpanId = spanIdOf(end);
    else if (tag === SPAN.START_TIME_UNIX_NANO) startTimeUnixNano = fixed64String(end, false);
    else pass(tag & 7, end);
  }
  return { spanId, parentSpanId, startTimeUnixNano };
}
