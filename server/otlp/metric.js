// A metric without its data points, as the store keeps it (`ctx.metric`), and the way back to the canonical Metric.
import { isDeepStrictEqual } from 'node:util';
import { EMPTY_ARRAY } from './model.js';

/**
 * @typedef {'gauge'|'sum'|'histogram'|'exponentialHistogram'|'summary'} MetricDataField
 * @typedef {Readonly<{ name: string, description: string, unit: string, metadata: any[], type: MetricDataField,
 *   aggregationTemporality: number, isMonotonic: boolean }>} StoredMetric
 *   `aggregationTemporality` is 0 and `isMonotonic` false for the types that have no such field
 */

/**
 * Stored metrics by name. A metric recurs in every export; kept once, it costs its points nothing.
 * @type {Map<string, StoredMetric[]>}
 */
const storedMetrics = new Map();
const MAX_STORED_METRIC_NAMES = 10_000;
const MAX_VARIANTS = 8;

/**
 * The one frozen StoredMetric for every metric like this one.
 * @param {string} name @param {string} description @param {string} unit @param {any[]} metadata
 * @param {MetricDataField} type @param {number} aggregationTemporality @param {boolean} isMonotonic
 * @returns {StoredMetric}
 */
export function storedMetric(name, description, unit, metadata, type, aggregationTemporality, isMonotonic) {
  const known = storedMetrics.get(name);
  if (known) {
    for (const k of known) {
      if (
        k.type === type &&
        k.unit === unit &&
        k.description === description &&
        k.aggregationTemporality === aggregationTemporality &&
        k.isMonotonic === isMonotonic &&
        (k.metadata === metadata || isDeepStrictEqual(k.metadata, metadata))
      )
        return k;
    }
  }
  const metric = Object.freeze({ name, description, unit, metadata, type, aggregationTemporality, isMonotonic });
  if (!known) {
    if (storedMetrics.size >= MAX_STORED_METRIC_NAMES) storedMetrics.clear();
    storedMetrics.set(name, [metric]);
  } else {
    if (known.length >= MAX_VARIANTS) known.shift();
    known.push(metric);
  }
  return metric;
}

/**
 * A metric of a request decoded lazily: its stored form and its data points, checked but not built. Its canonical
 * form is `metricOf(metric, its data points built)`.
 */
export class LazyMetric {
  /** @param {StoredMetric} metric @param {any[]} dataPoints */
  constructor(metric, dataPoints) {
    this.metric = metric;
    this.dataPoints = dataPoints;
  }
}

/**
 * The data field of a canonical Metric ('sum', 'gauge', ...), or '' for a metric without data. Named reads, most
 * common first: a loop over the names reads each by key, which costs more than the rest of storing a point.
 * @param {any} m @returns {MetricDataField|''}
 */
export function metricDataField(m) {
  if (m.sum) return 'sum';
  if (m.gauge) return 'gauge';
  if (m.histogram) return 'histogram';
  if (m.exponentialHistogram) return 'exponentialHistogram';
  if (m.summary) return 'summary';
  return '';
}

/** The data points of a canonical Metric or a LazyMetric: none for a metric without data. @param {any} m @returns {any[]} */
export function pointsOf(m) {
  if (m instanceof LazyMetric) return m.dataPoints;
  const field = metricDataField(m);
  return field ? m[field].dataPoints : EMPTY_ARRAY;
}

/** The StoredMetric of a canonical Metric with data, or of a LazyMetric. @param {any} m @returns {StoredMetric} */
export function storedFormOf(m) {
  if (m instanceof LazyMetric) return m.metric;
  const type = /** @type {MetricDataField} */ (metricDataField(m));
  const data = m[type];
  return storedMetric(m.name, m.description, m.unit, m.metadata, type, data.aggregationTemporality ?? 0, data.isMonotonic ?? false);
}

/**
 * A canonical Metric: the fields its type has, in the order a decode gives them, and one fixed shape per type (V8
 * looks a shape up on every metric when the data field is added by name).
 * @param {string} name @param {string} description @param {string} unit @param {any[]} metadata
 * @param {MetricDataField} type @param {number} aggregationTemporality @param {boolean} isMonotonic @param {any[]} dataPoints
 */
export function canonicalMetric(name, description, unit, metadata, type, aggregationTemporality, isMonotonic, dataPoints) {
  switch (type) {
    case 'gauge':
      return { name, description, unit, metadata, gauge: { dataPoints } };
    case 'sum':
      return { name, description, unit, metadata, sum: { dataPoints, aggregationTemporality, isMonotonic } };
    case 'histogram':
      return { name, description, unit, metadata, histogram: { dataPoints, aggregationTemporality } };
    case 'exponentialHistogram':
      return { name, description, unit, metadata, exponentialHistogram: { dataPoints, aggregationTemporality } };
    default:
      return { name, description, unit, metadata, summary: { dataPoints } };
  }
}

/** The canonical Metric of a stored metric and its data points. @param {StoredMetric} m @param {any[]} dataPoints */
export function metricOf(m, dataPoints) {
  return canonicalMetric(m.name, m.description, m.unit, m.metadata, m.type, m.aggregationTemporality, m.isMonotonic, dataPoints);
}
