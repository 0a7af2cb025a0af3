// Log records (logs.proto): the decoder of a LogRecord, which checks one without building it while the cursor is
// not building, and readers of the fields of a checked record that queries look at.
import { EMPTY_ANY, EMPTY_ARRAY } from '../model.js';
import { anyValue, keyValue, push } from './common.js';
import {
  cursor,
  halves,
  I32,
  I64,
  LEN,
  VARINT,
  delimited,
  fieldTag,
  fieldsOf,
  finish,
  fixed32,
  fixed64String,
  lastOf,
  pass,
  skip,
  spanIdOf,
  string,
  traceIdOf,
  u32le,
  varint32,
} from './wire.js';

/** LogRecord's fields by tag (fieldTag: field number and wire type); field 4 is reserved. */
const LOG_RECORD = Object.freeze({
  TIME_UNIX_NANO: fieldTag(1, I64),
  SEVERITY_NUMBER: fieldTag(2, VARINT),
  SEVERITY_TEXT: fieldTag(3, LEN),
  BODY: fieldTag(5, LEN),
  ATTRIBUTES: fieldTag(6, LEN),
  DROPPED_ATTRIBUTES_COUNT: fieldTag(7, VARINT),
  FLAGS: fieldTag(8, I32),
  TRACE_ID: fieldTag(9, LEN),
  SPAN_ID: fieldTag(10, LEN),
  OBSERVED_TIME_UNIX_NANO: fieldTag(11, I64),
  EVENT_NAME: fieldTag(12, LEN),
});

const LOG_FIELDS = fieldsOf(LOG_RECORD);

/**
 * Where the checked record's time and observed time begin in the bytes checked (the last of a field given twice), or
 * -1: its sort key is read from there once it is checked (items.js checkedLogRecord), not by walking it again.
 */
export const checkedTimes = { time: -1, observed: -1 };

/** A canonical LogRecord; while the cursor is not building (a check), the empty AnyValue. @param {number} end */
export function logRecord(end) {
  if (!cursor.building) checkedTimes.time = checkedTimes.observed = -1;
  let timeUnixNano = '0';
  let observedTimeUnixNano = '0';
  let severityNumber = 0;
  let severityText = '';
  let body = EMPTY_ANY;
  let attributes = EMPTY_ARRAY;
  let droppedAttributesCount = 0;
  let flags = 0;
  let traceId = '';
  let spanId = '';
  let eventName = '';
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case LOG_RECORD.TIME_UNIX_NANO:
        if (!cursor.building) checkedTimes.time = cursor.pos;
        timeUnixNano = fixed64String(end, false);
        break;
      case LOG_RECORD.OBSERVED_TIME_UNIX_NANO:
        if (!cursor.building) checkedTimes.observed = cursor.pos;
        observedTimeUnixNano = fixed64String(end, false);
        break;
      case LOG_RECORD.SEVERITY_NUMBER:
        severityNumber = varint32() | 0;
        break;
      case LOG_RECORD.SEVERITY_TEXT:
        severityText = string(end);
        break;
      case LOG_RECORD.BODY:
        body = anyValue(delimited(end), 0);
        break;
      case LOG_RECORD.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case LOG_RECORD.DROPPED_ATTRIBUTES_COUNT:
        droppedAttributesCount = varint32();
        break;
      case LOG_RECORD.FLAGS:
        flags = fixed32(end);
        break;
      case LOG_RECORD.TRACE_ID:
        traceId = traceIdOf(end);
        break;
      case LOG_RECORD.SPAN_ID:
        spanId = spanIdOf(end);
        break;
      case LOG_RECORD.EVENT_NAME:
        eventName = string(end);
        break;
      default:
        skip(tag, end, LOG_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return {
    timeUnixNano,
    observedTimeUnixNano,
    severityNumber,
    severityText,
    body,
    attributes,
    droppedAttributesCount,
    flags,
    traceId,
    spanId,
    eventName,
  };
}

/** @type {import('./common.js').ItemKind} */
export const LOG_ITEM = { decode: logRecord, attributesTag: LOG_RECORD.ATTRIBUTES };

// ---- readers of a checked log record ----

export const traceIdIn = lastOf(LOG_RECORD.TRACE_ID, traceIdOf, '');
export const spanIdIn = lastOf(LOG_RECORD.SPAN_ID, spanIdOf, '');
export const severityIn = lastOf(LOG_RECORD.SEVERITY_NUMBER, () => varint32() | 0, 0);
export const bodyIn = lastOf(LOG_RECORD.BODY, (end) => anyValue(delimited(end), 0), EMPTY_ANY);

/** The record's time, or its observed time when it has none. @param {number} end */
export function timeIn(end) {
  let time = '0';
  let observed = '0';
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === LOG_RECORD.TIME_UNIX_NANO) time = fixed64String(end, false);
    else if (tag === LOG_RECORD.OBSERVED_TIME_UNIX_NANO) observed = fixed64String(end, false);
    else pass(tag & 7, end);
  }
  return time !== '0' ? time : observed;
}

/**
 * The sort key (`LazyTimedItem.timeNumber`) of the record just checked, from where `checkedTimes` found its times in
 * `view`: its time, or its observed time when its time is unset.
 * @param {DataView} view
 */
export function checkedTimeKey(view) {
  const { time, observed } = checkedTimes;
  const at = time >= 0 && (view.getUint32(time, true) !== 0 || view.getUint32(time + 4, true) !== 0) ? time : observed;
  return at < 0 ? 0 : view.getUint32(at + 4, true) * 4294967296 + view.getUint32(at, true);
}

/** The time `timeIn` reads, into `halves`, without making its text. @param {number} end */
export function rawTimeIn(end) {
  let timeHi = 0;
  let timeLo = 0;
  let observedHi = 0;
  let observedLo = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === LOG_RECORD.TIME_UNIX_NANO) {
      timeLo = u32le();
      timeHi = u32le();
    } else if (tag === LOG_RECORD.OBSERVED_TIME_UNIX_NANO) {
      observedLo = u32le();
      observedHi = u32le();
    } else pass(tag & 7, end);
  }
  const unset = timeHi === 0 && timeLo === 0;
  halves.hi = unset ? observedHi : timeHi;
  halves.lo = unset ? observedLo : timeLo;
}
