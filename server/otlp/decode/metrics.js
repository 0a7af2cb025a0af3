// Metrics (metrics.proto): the decoder of a Metric and of each type of data point, which check a point without
// building it while the cursor is not building, and readers of a checked point's time.
import { canonicalMetric, LazyMetric, storedMetric } from '../metric.js';
import { DEFAULT_BUCKETS, EMPTY_ANY, EMPTY_ARRAY } from '../model.js';
import { countLevel, keyValue, push } from './common.js';
import {
  cursor,
  fieldTag,
  fieldsOf,
  halves,
  I64,
  LEN,
  VARINT,
  delimited,
  double,
  fail,
  finish,
  fixed64String,
  lastOf,
  pass,
  recurring,
  skip,
  spanIdOf,
  traceIdOf,
  u32le,
  varint32,
  varint64String,
  zigzag32,
} from './wire.js';

// Each message's fields by tag (fieldTag: field number and wire type). Field 1 of the points and of Exemplar is
// reserved (labels, before attributes); a repeated number arrives packed (LEN) or, from older senders, one field
// per value.

/** Metric: fields 4, 6 and 8 are reserved (types no longer in OTLP). */
const METRIC = Object.freeze({
  NAME: fieldTag(1, LEN),
  DESCRIPTION: fieldTag(2, LEN),
  UNIT: fieldTag(3, LEN),
  GAUGE: fieldTag(5, LEN),
  SUM: fieldTag(7, LEN),
  HISTOGRAM: fieldTag(9, LEN),
  EXPONENTIAL_HISTOGRAM: fieldTag(10, LEN),
  SUMMARY: fieldTag(11, LEN),
  METADATA: fieldTag(12, LEN),
});
/** Gauge, Sum, Histogram, ExponentialHistogram and Summary: each type has a prefix of these (MetricType.fields). */
const DATA = Object.freeze({
  DATA_POINTS: fieldTag(1, LEN),
  AGGREGATION_TEMPORALITY: fieldTag(2, VARINT),
  IS_MONOTONIC: fieldTag(3, VARINT),
});
/** What every type of data point has alike. */
const POINT = Object.freeze({ TIME_UNIX_NANO: fieldTag(3, I64) });
const NUMBER_POINT = Object.freeze({
  START_TIME_UNIX_NANO: fieldTag(2, I64),
  TIME_UNIX_NANO: fieldTag(3, I64),
  AS_DOUBLE: fieldTag(4, I64),
  EXEMPLARS: fieldTag(5, LEN),
  AS_INT: fieldTag(6, I64),
  ATTRIBUTES: fieldTag(7, LEN),
  FLAGS: fieldTag(8, VARINT),
});
const HISTOGRAM_POINT = Object.freeze({
  START_TIME_UNIX_NANO: fieldTag(2, I64),
  TIME_UNIX_NANO: fieldTag(3, I64),
  COUNT: fieldTag(4, I64),
  SUM: fieldTag(5, I64),
  BUCKET_COUNTS: fieldTag(6, I64),
  BUCKET_COUNTS_PACKED: fieldTag(6, LEN),
  EXPLICIT_BOUNDS: fieldTag(7, I64),
  EXPLICIT_BOUNDS_PACKED: fieldTag(7, LEN),
  EXEMPLARS: fieldTag(8, LEN),
  ATTRIBUTES: fieldTag(9, LEN),
  FLAGS: fieldTag(10, VARINT),
  MIN: fieldTag(11, I64),
  MAX: fieldTag(12, I64),
});
/** ExponentialHistogramDataPoint. */
const EXP_POINT = Object.freeze({
  ATTRIBUTES: fieldTag(1, LEN),
  START_TIME_UNIX_NANO: fieldTag(2, I64),
  TIME_UNIX_NANO: fieldTag(3, I64),
  COUNT: fieldTag(4, I64),
  SUM: fieldTag(5, I64),
  SCALE: fieldTag(6, VARINT),
  ZERO_COUNT: fieldTag(7, I64),
  POSITIVE: fieldTag(8, LEN),
  NEGATIVE: fieldTag(9, LEN),
  FLAGS: fieldTag(10, VARINT),
  EXEMPLARS: fieldTag(11, LEN),
  MIN: fieldTag(12, I64),
  MAX: fieldTag(13, I64),
  ZERO_THRESHOLD: fieldTag(14, I64),
});
/** ExponentialHistogramDataPoint.Buckets. */
const BUCKETS = Object.freeze({
  OFFSET: fieldTag(1, VARINT),
  BUCKET_COUNTS: fieldTag(2, VARINT),
  BUCKET_COUNTS_PACKED: fieldTag(2, LEN),
});
const SUMMARY_POINT = Object.freeze({
  START_TIME_UNIX_NANO: fieldTag(2, I64),
  TIME_UNIX_NANO: fieldTag(3, I64),
  COUNT: fieldTag(4, I64),
  SUM: fieldTag(5, I64),
  QUANTILE_VALUES: fieldTag(6, LEN),
  ATTRIBUTES: fieldTag(7, LEN),
  FLAGS: fieldTag(8, VARINT),
});
/** SummaryDataPoint.ValueAtQuantile. */
const QUANTILE = Object.freeze({ QUANTILE: fieldTag(1, I64), VALUE: fieldTag(2, I64) });
const EXEMPLAR = Object.freeze({
  TIME_UNIX_NANO: fieldTag(2, I64),
  AS_DOUBLE: fieldTag(3, I64),
  SPAN_ID: fieldTag(4, LEN),
  TRACE_ID: fieldTag(5, LEN),
  AS_INT: fieldTag(6, I64),
  FILTERED_ATTRIBUTES: fieldTag(7, LEN),
});

const METRIC_FIELDS = fieldsOf(METRIC);
const DATA_FIELDS = fieldsOf(DATA);
const NUMBER_POINT_FIELDS = fieldsOf(NUMBER_POINT);
const HISTOGRAM_POINT_FIELDS = fieldsOf(HISTOGRAM_POINT);
const EXP_POINT_FIELDS = fieldsOf(EXP_POINT);
const BUCKETS_FIELDS = fieldsOf(BUCKETS);
const SUMMARY_POINT_FIELDS = fieldsOf(SUMMARY_POINT);
const QUANTILE_FIELDS = fieldsOf(QUANTILE);
const EXEMPLAR_FIELDS = fieldsOf(EXEMPLAR);

/**
 * Where a Metric's data points are, for counting them without a decode (common.js ItemCount): in its data, of
 * which the decode keeps the last, in the field every type of data has first. Only that field is checked there:
 * the types differ in the others.
 * @type {readonly import('./common.js').CountLevel[]}
 */
export const POINTS_IN_METRIC = Object.freeze([
  countLevel([METRIC.GAUGE, METRIC.SUM, METRIC.HISTOGRAM, METRIC.EXPONENTIAL_HISTOGRAM, METRIC.SUMMARY], METRIC),
  countLevel([DATA.DATA_POINTS], { DATA_POINTS: DATA.DATA_POINTS }, true),
]);

// ---- repeated numbers ----

/** Repeated fixed64 arrives packed or, from older senders, one field per value. @param {string[]} list @param {number} tag @param {number} end */
function fixed64List(list, tag, end) {
  if ((tag & 7) === I64) return push(list, fixed64String(end, false));
  const e = delimited(end);
  if ((e - cursor.pos) % 8 !== 0) throw fail('packed fixed64 length is not a multiple of 8');
  if (!cursor.building) {
    cursor.pos = e;
    return list;
  }
  const out = list === EMPTY_ARRAY ? [] : list;
  while (cursor.pos < e) out.push(fixed64String(e, false));
  return out;
}

/** @param {number[]} list @param {number} tag @param {number} end */
function doubleList(list, tag, end) {
  if ((tag & 7) === I64) return push(list, double(end));
  const e = delimited(end);
  if ((e - cursor.pos) % 8 !== 0) throw fail('packed double length is not a multiple of 8');
  if (!cursor.building) {
    cursor.pos = e;
    return list;
  }
  const out = list === EMPTY_ARRAY ? [] : list;
  while (cursor.pos < e) out.push(double(e));
  return out;
}

/** @param {string[]} list @param {number} tag @param {number} end */
function uint64List(list, tag, end) {
  if ((tag & 7) === VARINT) return push(list, varint64String(false));
  const e = delimited(end);
  const out = cursor.building && list === EMPTY_ARRAY ? [] : list;
  while (cursor.pos < e) {
    const v = varint64String(false);
    if (cursor.building) out.push(v);
  }
  if (cursor.pos !== e) throw fail('truncated packed varint');
  return out;
}

// ---- data points ----

/** @param {number} end */
function exemplar(end) {
  let filteredAttributes = EMPTY_ARRAY;
  let timeUnixNano = '0';
  let spanId = '';
  let traceId = '';
  let valueKind = 0;
  /** @type {number|string} */
  let value = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case EXEMPLAR.FILTERED_ATTRIBUTES:
        filteredAttributes = push(filteredAttributes, keyValue(delimited(end), 0));
        break;
      case EXEMPLAR.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case EXEMPLAR.AS_DOUBLE:
        valueKind = 1;
        value = double(end);
        break;
      case EXEMPLAR.AS_INT:
        valueKind = 2;
        value = fixed64String(end, true);
        break;
      case EXEMPLAR.SPAN_ID:
        spanId = spanIdOf(end);
        break;
      case EXEMPLAR.TRACE_ID:
        traceId = traceIdOf(end);
        break;
      default:
        skip(tag, end, EXEMPLAR_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  /** @type {any} */
  const out = { filteredAttributes, timeUnixNano, spanId, traceId };
  if (valueKind === 1) out.asDouble = value;
  else if (valueKind === 2) out.asInt = value;
  return out;
}

/** @param {number} end */
function numberPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let exemplars = EMPTY_ARRAY;
  let flags = 0;
  let valueKind = 0;
  /** @type {number|string} */
  let value = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case NUMBER_POINT.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case NUMBER_POINT.START_TIME_UNIX_NANO:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case NUMBER_POINT.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case NUMBER_POINT.AS_DOUBLE:
        valueKind = 1;
        value = double(end);
        break;
      case NUMBER_POINT.AS_INT:
        valueKind = 2;
        value = fixed64String(end, true);
        break;
      case NUMBER_POINT.EXEMPLARS:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case NUMBER_POINT.FLAGS:
        flags = varint32();
        break;
      default:
        skip(tag, end, NUMBER_POINT_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  /** @type {any} */
  const out = { attributes, startTimeUnixNano, timeUnixNano, exemplars, flags };
  if (valueKind === 1) out.asDouble = value;
  else if (valueKind === 2) out.asInt = value;
  return out;
}

/** proto3 `optional` doubles: present in the model only when present on the wire. */
/** @param {any} out @param {number} sum @param {number} min @param {number} max @param {number} present bit 1 sum, 2 min, 4 max */
function optionalStats(out, sum, min, max, present) {
  if (present & 1) out.sum = sum;
  if (present & 2) out.min = min;
  if (present & 4) out.max = max;
  return out;
}

/** @param {number} end */
function histogramPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let bucketCounts = EMPTY_ARRAY;
  let explicitBounds = EMPTY_ARRAY;
  let exemplars = EMPTY_ARRAY;
  let flags = 0;
  let sum = 0;
  let min = 0;
  let max = 0;
  let present = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case HISTOGRAM_POINT.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case HISTOGRAM_POINT.START_TIME_UNIX_NANO:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case HISTOGRAM_POINT.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case HISTOGRAM_POINT.COUNT:
        count = fixed64String(end, false);
        break;
      case HISTOGRAM_POINT.SUM:
        sum = double(end);
        present |= 1;
        break;
      case HISTOGRAM_POINT.BUCKET_COUNTS:
      case HISTOGRAM_POINT.BUCKET_COUNTS_PACKED:
        bucketCounts = fixed64List(bucketCounts, tag, end);
        break;
      case HISTOGRAM_POINT.EXPLICIT_BOUNDS:
      case HISTOGRAM_POINT.EXPLICIT_BOUNDS_PACKED:
        explicitBounds = doubleList(explicitBounds, tag, end);
        break;
      case HISTOGRAM_POINT.EXEMPLARS:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case HISTOGRAM_POINT.FLAGS:
        flags = varint32();
        break;
      case HISTOGRAM_POINT.MIN:
        min = double(end);
        present |= 2;
        break;
      case HISTOGRAM_POINT.MAX:
        max = double(end);
        present |= 4;
        break;
      default:
        skip(tag, end, HISTOGRAM_POINT_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  const out = { attributes, startTimeUnixNano, timeUnixNano, count, bucketCounts, explicitBounds, exemplars, flags };
  return optionalStats(out, sum, min, max, present);
}

/** @param {number} end */
function buckets(end) {
  let offset = 0;
  let bucketCounts = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === BUCKETS.OFFSET) offset = zigzag32();
    else if (tag === BUCKETS.BUCKET_COUNTS || tag === BUCKETS.BUCKET_COUNTS_PACKED) bucketCounts = uint64List(bucketCounts, tag, end);
    else skip(tag, end, BUCKETS_FIELDS);
  }
  finish(end);
  if (!cursor.building) return DEFAULT_BUCKETS;
  return { offset, bucketCounts };
}

/** @param {number} end */
function exponentialPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let scale = 0;
  let zeroCount = '0';
  let positive = DEFAULT_BUCKETS;
  let negative = DEFAULT_BUCKETS;
  let flags = 0;
  let exemplars = EMPTY_ARRAY;
  let zeroThreshold = 0;
  let sum = 0;
  let min = 0;
  let max = 0;
  let present = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case EXP_POINT.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case EXP_POINT.START_TIME_UNIX_NANO:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case EXP_POINT.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case EXP_POINT.COUNT:
        count = fixed64String(end, false);
        break;
      case EXP_POINT.SUM:
        sum = double(end);
        present |= 1;
        break;
      case EXP_POINT.SCALE:
        scale = zigzag32();
        break;
      case EXP_POINT.ZERO_COUNT:
        zeroCount = fixed64String(end, false);
        break;
      case EXP_POINT.POSITIVE:
        positive = buckets(delimited(end));
        break;
      case EXP_POINT.NEGATIVE:
        negative = buckets(delimited(end));
        break;
      case EXP_POINT.FLAGS:
        flags = varint32();
        break;
      case EXP_POINT.EXEMPLARS:
        exemplars = push(exemplars, exemplar(delimited(end)));
        break;
      case EXP_POINT.MIN:
        min = double(end);
        present |= 2;
        break;
      case EXP_POINT.MAX:
        max = double(end);
        present |= 4;
        break;
      case EXP_POINT.ZERO_THRESHOLD:
        zeroThreshold = double(end);
        break;
      default:
        skip(tag, end, EXP_POINT_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  const out = {
    attributes,
    startTimeUnixNano,
    timeUnixNano,
    count,
    scale,
    zeroCount,
    positive,
    negative,
    flags,
    exemplars,
    zeroThreshold,
  };
  return optionalStats(out, sum, min, max, present);
}

/** @param {number} end */
function quantile(end) {
  let q = 0;
  let value = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === QUANTILE.QUANTILE) q = double(end);
    else if (tag === QUANTILE.VALUE) value = double(end);
    else skip(tag, end, QUANTILE_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { quantile: q, value };
}

/** @param {number} end */
function summaryPoint(end) {
  let attributes = EMPTY_ARRAY;
  let startTimeUnixNano = '0';
  let timeUnixNano = '0';
  let count = '0';
  let sum = 0;
  let quantileValues = EMPTY_ARRAY;
  let flags = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case SUMMARY_POINT.ATTRIBUTES:
        attributes = push(attributes, keyValue(delimited(end), 0));
        break;
      case SUMMARY_POINT.START_TIME_UNIX_NANO:
        startTimeUnixNano = fixed64String(end, false);
        break;
      case SUMMARY_POINT.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case SUMMARY_POINT.COUNT:
        count = fixed64String(end, false);
        break;
      case SUMMARY_POINT.SUM:
        sum = double(end);
        break;
      case SUMMARY_POINT.QUANTILE_VALUES:
        quantileValues = push(quantileValues, quantile(delimited(end)));
        break;
      case SUMMARY_POINT.FLAGS:
        flags = varint32();
        break;
      default:
        skip(tag, end, SUMMARY_POINT_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { attributes, startTimeUnixNano, timeUnixNano, count, sum, quantileValues, flags };
}

// ---- metrics ----

/**
 * The five types of metric data: where each sits in a Metric, its data points' decoder, how many of the
 * shared data fields it has (see metricData) and the tag of a point's attributes. A data point's item kind.
 * @typedef {{ tag: number, key: string, decode: (end: number) => any, fields: number, attributesTag: number }} MetricType
 */
const METRIC_TYPE_LIST = [
  { tag: METRIC.GAUGE, key: 'gauge', decode: numberPoint, fields: 1, attributesTag: NUMBER_POINT.ATTRIBUTES },
  { tag: METRIC.SUM, key: 'sum', decode: numberPoint, fields: 3, attributesTag: NUMBER_POINT.ATTRIBUTES },
  { tag: METRIC.HISTOGRAM, key: 'histogram', decode: histogramPoint, fields: 2, attributesTag: HISTOGRAM_POINT.ATTRIBUTES },
  { tag: METRIC.EXPONENTIAL_HISTOGRAM, key: 'exponentialHistogram', decode: exponentialPoint, fields: 2, attributesTag: EXP_POINT.ATTRIBUTES },
  { tag: METRIC.SUMMARY, key: 'summary', decode: summaryPoint, fields: 1, attributesTag: SUMMARY_POINT.ATTRIBUTES },
];
/**
 * @type {MetricType[]} by the tag of the Metric field: an array, since a lookup in an object keyed by these numbers
 * was the costliest line of decoding a metric in `node --cpu-prof` output for metrics over gRPC.
 */
const METRIC_TYPES = [];
for (const type of METRIC_TYPE_LIST) METRIC_TYPES[type.tag] = type;
/** @type {Record<string, MetricType>} by the model's field name */
export const METRIC_TYPES_BY_KEY = Object.fromEntries(METRIC_TYPE_LIST.map((t) => [t.key, t]));

/**
 * What a lazy decode makes of a data point that the cursor is at: given the point's end and type, it checks the
 * point and returns its item (the item model's LazyPoint).
 * @typedef {(end: number, type: MetricType) => any} PointItem
 */

/** The fields of the last metric data metricData read, beside its points. */
let dataTemporality = 0;
let dataMonotonic = false;

/**
 * Gauge, Sum, Histogram, ExponentialHistogram and Summary share one layout:
 * data_points=1, aggregation_temporality=2, is_monotonic=3 (each type uses a prefix of it).
 * @param {number} end @param {MetricType} type @param {PointItem|null} pointItem @returns {any[]} the data points
 */
function metricData(end, type, pointItem) {
  const fields = type.fields;
  let dataPoints = EMPTY_ARRAY;
  let aggregationTemporality = 0;
  let isMonotonic = false;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === DATA.DATA_POINTS) dataPoints = push(dataPoints, pointItem !== null ? pointItem(delimited(end), type) : type.decode(delimited(end)));
    else if (tag === DATA.AGGREGATION_TEMPORALITY && fields >= 2) aggregationTemporality = varint32() | 0;
    else if (tag === DATA.IS_MONOTONIC && fields >= 3) isMonotonic = varint32() !== 0;
    else skip(tag, end, DATA_FIELDS & ((1 << (fields + 1)) - 1));
  }
  finish(end);
  dataTemporality = aggregationTemporality;
  dataMonotonic = isMonotonic;
  return dataPoints;
}

/**
 * A canonical Metric; or, given `pointItem` (a lazy decode), a LazyMetric: the metric's stored form, found by its
 * fields without building it, and its points as `pointItem` made them.
 * @param {number} end @param {PointItem|null} pointItem
 */
export function metric(end, pointItem) {
  let name = '';
  let description = '';
  let unit = '';
  let metadata = EMPTY_ARRAY;
  /** @type {MetricType|null} */
  let type = null;
  let dataPoints = EMPTY_ARRAY;
  let aggregationTemporality = 0;
  let isMonotonic = false;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case METRIC.NAME:
        name = recurring(end);
        break;
      case METRIC.DESCRIPTION:
        description = recurring(end);
        break;
      case METRIC.UNIT:
        unit = recurring(end);
        break;
      case METRIC.GAUGE:
      case METRIC.SUM:
      case METRIC.HISTOGRAM:
      case METRIC.EXPONENTIAL_HISTOGRAM:
      case METRIC.SUMMARY:
        type = METRIC_TYPES[tag];
        dataPoints = metricData(delimited(end), type, pointItem);
        aggregationTemporality = dataTemporality;
        isMonotonic = dataMonotonic;
        break;
      case METRIC.METADATA:
        metadata = push(metadata, keyValue(delimited(end), 0));
        break;
      default:
        skip(tag, end, METRIC_FIELDS);
    }
  }
  finish(end);
  if (type === null) return { name, description, unit, metadata };
  const key = /** @type {import('../metric.js').MetricDataField} */ (type.key);
  if (pointItem !== null) return new LazyMetric(storedMetric(name, description, unit, metadata, key, aggregationTemporality, isMonotonic), dataPoints);
  return canonicalMetric(name, description, unit, metadata, key, aggregationTemporality, isMonotonic, dataPoints);
}

// ---- readers of a checked data point ----

export const timeIn = lastOf(POINT.TIME_UNIX_NANO, (end) => fixed64String(end, false), '0');

/** The time `timeIn` reads, into `halves`, without making its text. @param {number} end */
export function rawTimeIn(end) {
  halves.hi = 0;
  halves.lo = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag !== POINT.TIME_UNIX_NANO) pass(tag & 7, end);
    else {
      halves.lo = u32le();
      halves.hi = u32le();
    }
  }
}
