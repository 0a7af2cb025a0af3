// UNIVARIATE_METRICS and its data point tables → ExportMetricsServiceRequest. A metric's `id` is a difference from
// the previous metric's; data points name their metric by `parent_id`, a difference from the previous point's, and
// their own attributes and exemplars by `id`, a difference from the previous non-null id. Exemplars name their
// point by `parent_id`, a difference from the previous exemplar's when both carry the same value.
import { attributesByParent, DeltaIds } from './attributes.js';
import { column, listColumn, nanos, stepEndsAt, struct } from './columns.js';
import { writeEnvelopes } from './envelope.js';

/**
 * @typedef {import('./otlp-writer.js').OtlpWriter} OtlpWriter
 * @typedef {(w: OtlpWriter) => void} Writes
 */

/** pmetric.MetricType numbers, and the Metric field each one's data goes in. */
const GAUGE = 1,
  SUM = 2,
  HISTOGRAM = 3,
  EXP_HISTOGRAM = 4,
  SUMMARY = 5;
const DATA_FIELD = { [GAUGE]: 5, [SUM]: 7, [HISTOGRAM]: 9, [EXP_HISTOGRAM]: 10, [SUMMARY]: 11 };

/** @param {any} list a List column's value @returns {any[]} */
const valuesOf = (list) => (list ? [...list] : []);

/**
 * @param {any} batch exemplar table @param {Map<number, any>} attrs
 * @returns {import('./columns.js').Steps<Map<number, Writes[]>>} exemplars by the id of their data point
 */
function* exemplarsOf(batch, attrs) {
  /** @type {Map<number, Writes[]>} */
  const byParent = new Map();
  if (!batch) return byParent;
  const id = column(batch, 'id');
  const parent = column(batch, 'parent_id');
  const time = column(batch, 'time_unix_nano');
  const intValue = column(batch, 'int_value');
  const doubleValue = column(batch, 'double_value');
  const spanId = column(batch, 'span_id');
  const traceId = column(batch, 'trace_id');
  const ids = new DeltaIds();
  /** @type {unknown} */
  let prevValue = undefined;
  let prevParent = 0;
  for (let row = 0; row < batch.numRows; row++) {
    const i = intValue(row);
    const d = i === null ? doubleValue(row) : null;
    const raw = Number(parent(row) ?? 0);
    // Equal values of the same kind continue a run; a point with neither value always does.
    const value = i !== null ? `i${i}` : d !== null ? d : null;
    const p = value === null || value === prevValue ? prevParent + raw : raw;
    if (value !== null) prevValue = value;
    prevParent = p;
    const own = ids.next(id(row));
    const attributes = own === null ? undefined : attrs.get(own);
    let list = byParent.get(p);
    if (!list) byParent.set(p, (list = []));
    list.push((w) => {
      w.attributes(7, attributes);
      w.fixed64(2, nanos(time(row)));
      if (i !== null) w.sfixed64Always(6, BigInt(i));
      else if (d !== null) w.doubleAlways(3, d);
      w.id(4, spanId(row));
      w.id(5, traceId(row));
    });
    if (stepEndsAt(row)) yield;
  }
  return byParent;
}

/**
 * Data points by the id of their metric.
 * @param {any} batch @param {Map<number, any>} attrs @param {Map<number, Writes[]>} exemplars
 * @param {(w: OtlpWriter, row: number, attributes: any, exemplars: Writes[]) => void} write
 * @returns {import('./columns.js').Steps<Map<number, Writes[]>>}
 */
function* pointsOf(batch, attrs, exemplars, write) {
  /** @type {Map<number, Writes[]>} */
  const byMetric = new Map();
  if (!batch) return byMetric;
  const id = column(batch, 'id');
  const parent = column(batch, 'parent_id');
  const ids = new DeltaIds();
  let metric = 0;
  for (let row = 0; row < batch.numRows; row++) {
    metric += Number(parent(row) ?? 0);
    const own = ids.next(id(row));
    const attributes = own === null ? undefined : attrs.get(own);
    const ex = own === null ? [] : (exemplars.get(own) ?? []);
    let list = byMetric.get(metric);
    if (!list) byMetric.set(metric, (list = []));
    list.push((w) => write(w, row, attributes, ex));
    if (stepEndsAt(row)) yield;
  }
  return byMetric;
}

/**
 * Writes each of `list` as a `field` message, a few at a time: a metric's data points, of which one metric may have
 * as many as the batch has rows. @param {OtlpWriter} w @param {number} field @param {Writes[]} list
 * @returns {import('./columns.js').Steps<void>}
 */
function* eachInSteps(w, field, list) {
  for (let i = 0; i < list.length; i++) {
    w.begin(field);
    list[i](w);
    w.end();
    if (stepEndsAt(i)) yield;
  }
}

/** `eachInSteps` at once: a data point's exemplars, written within the point's own step. @param {OtlpWriter} w @param {number} field @param {Writes[]} list */
function each(w, field, list) {
  if (list.length === 0) return;
  const steps = eachInSteps(w, field, list);
  while (!steps.next().done);
}

/** The columns every data point table has. @param {any} batch */
function times(batch) {
  return { start: column(batch, 'start_time_unix_nano'), time: column(batch, 'time_unix_nano'), flags: column(batch, 'flags') };
}

/** @param {OtlpWriter} w @param {number} field @param {number|null} v a proto3 `optional` double */
function optionalDouble(w, field, v) {
  if (v !== null) w.doubleAlways(field, v);
}

/**
 * @param {OtlpWriter} w
 * @param {Map<string, any>} tables record batches by payload type name
 * @param {import('./envelope.js').EnvelopeAttributes} envelope
 * @returns {import('./columns.js').Steps<void>}
 */
export function* writeMetrics(w, tables, envelope) {
  const metrics = tables.get('UNIVARIATE_METRICS');
  if (!metrics) return;

  const numbers = tables.get('NUMBER_DATA_POINTS');
  const n = times(numbers);
  const nInt = column(numbers, 'int_value');
  const nDouble = column(numbers, 'double_value');
  const numberPoints = yield* pointsOf(
    numbers,
    yield* attributesByParent(tables.get('NUMBER_DP_ATTRS')),
    yield* exemplarsOf(tables.get('NUMBER_DP_EXEMPLARS'), yield* attributesByParent(tables.get('NUMBER_DP_EXEMPLAR_ATTRS'))),
    (w, row, attributes, exemplars) => {
      w.fixed64(2, nanos(n.start(row)));
      w.fixed64(3, nanos(n.time(row)));
      const i = nInt(row);
      if (i !== null) w.sfixed64Always(6, BigInt(i));
      else {
        const d = nDouble(row);
        if (d !== null) w.doubleAlways(4, d);
      }
      each(w, 5, exemplars);
      w.attributes(7, attributes);
      w.uint(8, n.flags(row) ?? 0);
    },
  );

  const histograms = tables.get('HISTOGRAM_DATA_POINTS');
  const h = times(histograms);
  const hCount = column(histograms, 'count');
  const hSum = column(histograms, 'sum');
  const hBuckets = listColumn(histograms, 'bucket_counts');
  const hBounds = listColumn(histograms, 'explicit_bounds');
  const hMin = column(histograms, 'min');
  const hMax = column(histograms, 'max');
  const histogramPoints = yield* pointsOf(
    histograms,
    yield* attributesByParent(tables.get('HISTOGRAM_DP_ATTRS')),
    yield* exemplarsOf(tables.get('HISTOGRAM_DP_EXEMPLARS'), yield* attributesByParent(tables.get('HISTOGRAM_DP_EXEMPLAR_ATTRS'))),
    (w, row, attributes, exemplars) => {
      w.fixed64(2, nanos(h.start(row)));
      w.fixed64(3, nanos(h.time(row)));
      w.fixed64(4, nanos(hCount(row)));
      optionalDouble(w, 5, hSum(row));
      w.packedFixed64(6, hBuckets(row));
      w.packedDouble(7, hBounds(row));
      each(w, 8, exemplars);
      w.attributes(9, attributes);
      w.uint(10, h.flags(row) ?? 0);
      optionalDouble(w, 11, hMin(row));
      optionalDouble(w, 12, hMax(row));
    },
  );

  const exps = tables.get('EXP_HISTOGRAM_DATA_POINTS');
  const e = times(exps);
  const eCount = column(exps, 'count');
  const eSum = column(exps, 'sum');
  const eScale = column(exps, 'scale');
  const eZeroCount = column(exps, 'zero_count');
  const eMin = column(exps, 'min');
  const eMax = column(exps, 'max');
  const eZeroThreshold = column(exps, 'zero_threshold');
  const buckets = ['positive', 'negative'].map((side) => {
    const s = struct(exps, side);
    return { s, offset: column(s, 'offset'), counts: listColumn(s, 'bucket_counts') };
  });
  const expPoints = yield* pointsOf(
    exps,
    yield* attributesByParent(tables.get('EXP_HISTOGRAM_DP_ATTRS')),
    yield* exemplarsOf(tables.get('EXP_HISTOGRAM_DP_EXEMPLARS'), yield* attributesByParent(tables.get('EXP_HISTOGRAM_DP_EXEMPLAR_ATTRS'))),
    (w, row, attributes, exemplars) => {
      w.attributes(1, attributes);
      w.fixed64(2, nanos(e.start(row)));
      w.fixed64(3, nanos(e.time(row)));
      w.fixed64(4, nanos(eCount(row)));
      optionalDouble(w, 5, eSum(row));
      w.sint32(6, eScale(row) ?? 0);
      w.fixed64(7, nanos(eZeroCount(row)));
      buckets.forEach(({ s, offset, counts }, k) => {
        if (!s || !s.isValid(row)) return;
        w.begin(8 + k);
        w.sint32(1, offset(row) ?? 0);
        w.packedUint64(2, counts(row).map(BigInt));
        w.end();
      });
      w.uint(10, e.flags(row) ?? 0);
      each(w, 11, exemplars);
      optionalDouble(w, 12, eMin(row));
      optionalDouble(w, 13, eMax(row));
      w.double(14, eZeroThreshold(row) ?? 0);
    },
  );

  const summaries = tables.get('SUMMARY_DATA_POINTS');
  const q = times(summaries);
  const qCount = column(summaries, 'count');
  const qSum = column(summaries, 'sum');
  const quantiles = column(summaries, 'quantile');
  const summaryPoints = yield* pointsOf(summaries, yield* attributesByParent(tables.get('SUMMARY_DP_ATTRS')), new Map(), (w, row, attributes) => {
    w.fixed64(2, nanos(q.start(row)));
    w.fixed64(3, nanos(q.time(row)));
    w.fixed64(4, nanos(qCount(row)));
    w.double(5, qSum(row) ?? 0);
    for (const value of valuesOf(quantiles(row))) {
      w.begin(6);
      if (value) {
        w.double(1, value.quantile ?? 0);
        w.double(2, value.value ?? 0);
      }
      w.end();
    }
    w.attributes(7, attributes);
    w.uint(8, q.flags(row) ?? 0);
  });

  const pointsByType = { [GAUGE]: numberPoints, [SUM]: numberPoints, [HISTOGRAM]: histogramPoints, [EXP_HISTOGRAM]: expPoints, [SUMMARY]: summaryPoints };
  const id = column(metrics, 'id');
  const type = column(metrics, 'metric_type');
  const name = column(metrics, 'name');
  const description = column(metrics, 'description');
  const unit = column(metrics, 'unit');
  const temporality = column(metrics, 'aggregation_temporality');
  const monotonic = column(metrics, 'is_monotonic');
  let metricId = 0;
  /**
   * A metric's data, its points a few at a time.
   * @param {keyof typeof DATA_FIELD} t @param {number} row @param {number} metric its id
   * @returns {import('./columns.js').Steps<void>}
   */
  function* data(t, row, metric) {
    w.begin(DATA_FIELD[t]);
    yield* eachInSteps(w, 1, pointsByType[t].get(metric) ?? []);
    if (t !== GAUGE && t !== SUMMARY) w.uint(2, temporality(row) ?? 0);
    if (t === SUM) w.bool(3, Boolean(monotonic(row)));
    w.end();
  }
  yield* writeEnvelopes(w, metrics, envelope, 2, (row) => {
    metricId += Number(id(row) ?? 0);
    const t = /** @type {keyof typeof DATA_FIELD} */ (type(row));
    w.string(1, name(row) ?? '');
    w.string(2, description(row) ?? '');
    w.string(3, unit(row) ?? '');
    return t in DATA_FIELD ? data(t, row, metricId) : undefined;
  });
}

/** @type {import('./services.js').OtapService} */
export const ARROW_METRICS = Object.freeze({
  signal: 'metrics',
  method: 'ArrowMetricsService/ArrowMetrics',
  // RESOURCE_ATTRS, SCOPE_ATTRS, and UNIVARIATE_METRICS to EXP_HISTOGRAM_DP_EXEMPLAR_ATTRS
  types: Object.freeze([1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]),
  // A data point whose metric is not in the batch is not written: its rows say only how many points there may be.
  itemRows: null,
  write: writeMetrics,
});
