// The percentiles the Metrics view draws for a histogram (web/src/components/percentiles.ts): by the OTLP bucket
// semantics, interpolated within a bucket, never outside the point's own min and max. The module is compiled
// here with TypeScript's transpiler, as it imports nothing but types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const source = readFileSync(new URL('../../web/src/components/percentiles.ts', import.meta.url), 'utf8');
const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
/** @type {{ percentiles: (segment: any[], cumulative: boolean, qs: number[]) => { x: number, ys: number[] }[] }} */
const { percentiles } = await import(`data:text/javascript;base64,${Buffer.from(outputText).toString('base64')}`);

const QS = [0.5, 0.9, 0.99];
/** @param {any} point */
const ofPoint = (point) => percentiles([{ timeUnixNano: '1000000', ...point }], false, QS)[0].ys;

/** @param {number[]} got @param {number[]} want */
function near(got, want) {
  assert.equal(got.length, want.length);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) < 1e-9, `value ${i}: got ${g}, want ${want[i]} (all: ${got.join(', ')})`));
}

// The default bounds of http.server.request.duration in milliseconds, as the Node SDK records it.
const MS_BOUNDS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];
/** @param {Record<number, number>} byBucket */
const countsOf = (byBucket) => Array.from({ length: MS_BOUNDS.length + 1 }, (_, i) => String(byBucket[i] ?? 0));

test('explicit buckets: upper-inclusive, interpolated, the bucket holding the max ends at the max', () => {
  // 90 values in (100, 250], 10 in (250, 500]; the point says min 120, max 309.
  const ys = ofPoint({ explicitBounds: MS_BOUNDS, bucketCounts: countsOf({ 7: 90, 8: 10 }), count: '100', min: 120, max: 309 });
  // P50: rank 50 of 90 in (120, 250]: 120 + 50/90 · 130. P90: rank 90 ends that bucket: 250.
  // P99: rank 9 of 10 in (250, 309]: 250 + 0.9 · 59 = 303.1 (drawn at 475 when the bucket ran to 500).
  near(ys, [120 + (50 / 90) * 130, 250, 303.1]);
  for (const y of ys) assert.ok(y >= 120 && y <= 309, `${y} within [min, max]`);
});

test('a value on a bound counts in the bucket it closes', () => {
  // Bounds [1, 2]: a value of exactly 1 is in (-inf, 1]; with min = max = 1 every percentile is 1.
  near(ofPoint({ explicitBounds: [1, 2], bucketCounts: ['5', '0', '0'], count: '5', min: 1, max: 1 }), [1, 1, 1]);
  // All in (1, 2] with min 2 and max 2: every percentile is 2, not a value inside the bucket.
  near(ofPoint({ explicitBounds: [1, 2], bucketCounts: ['0', '4', '0'], count: '4', min: 2, max: 2 }), [2, 2, 2]);
});

test('the overflow bucket ends at the max, the first starts at the min', () => {
  // 10 values: 2 in (-inf, 10], 8 in (100, +inf); min 4, max 180.
  const ys = ofPoint({ explicitBounds: [10, 100], bucketCounts: ['2', '0', '8'], count: '10', min: 4, max: 180 });
  // P50: rank 5, 3 of 8 into (100, 180]: 100 + 3/8 · 80 = 130; P90: 100 + 7/8 · 80 = 170; P99: 100 + 7.9/8 · 80 = 179.
  near(ys, [130, 170, 179]);
  // P10 lies in the first bucket, which starts at the min: 4 + 1/2 · 6 = 7.
  near(percentiles([{ timeUnixNano: '1', explicitBounds: [10, 100], bucketCounts: ['2', '0', '8'], min: 4, max: 180 }], false, [0.1])[0].ys, [7]);
});

test('without min and max: the first bucket starts at 0 and the overflow bucket is taken at its lower edge', () => {
  near(ofPoint({ explicitBounds: [10, 100], bucketCounts: ['10', '0', '0'], count: '10' }), [5, 9, 9.9]);
  near(ofPoint({ explicitBounds: [10, 100], bucketCounts: ['0', '0', '10'], count: '10' }), [100, 100, 100]);
});

test('exponential buckets: base 2^(2^-scale), index i covers (base^i, base^(i+1)], cut to min and max', () => {
  // scale 0: base 2. Offset 3: 4 values in (8, 16], 6 in (16, 32]; min 9, max 20.
  const ys = ofPoint({ scale: 0, zeroCount: '0', positive: { offset: 3, bucketCounts: ['4', '6'] }, count: '10', min: 9, max: 20 });
  // P50: rank 5, 1 of 6 into (16, 20]: 16 + 4/6; P90: 16 + 5/6 · 4; P99: 16 + 5.9/6 · 4.
  near(ys, [16 + 4 / 6, 16 + (5 / 6) * 4, 16 + (5.9 / 6) * 4]);
  // scale 1: base √2; index 2 covers (2, 2√2]. With no max its upper edge is 2√2.
  near(ofPoint({ scale: 1, positive: { offset: 2, bucketCounts: ['10'] }, count: '10' }), [
    2 + 0.5 * (2 * Math.SQRT2 - 2),
    2 + 0.9 * (2 * Math.SQRT2 - 2),
    2 + 0.99 * (2 * Math.SQRT2 - 2),
  ]);
});

test('exponential buckets: negative ones mirrored below the zero bucket', () => {
  // scale 0: negative index 1 covers [-4, -2); 5 values there, 5 zeros (threshold 0), none positive; min -3, max 0.
  const ys = ofPoint({ scale: 0, zeroCount: '5', negative: { offset: 1, bucketCounts: ['5'] }, positive: { offset: 0, bucketCounts: [] }, count: '10', min: -3, max: 0 });
  // P50 is rank 5: the end of the negative bucket, cut to (-3, -2]: -2. P90 and P99 are in the zero bucket: 0.
  near(ys, [-2, 0, 0]);
});

test("a cumulative series: each point less the one before, still within that point's min and max", () => {
  const a = { timeUnixNano: '1000000', explicitBounds: [100, 250, 500], bucketCounts: ['0', '10', '0', '0'], count: '10', min: 150, max: 240 };
  const b = { timeUnixNano: '2000000', explicitBounds: [100, 250, 500], bucketCounts: ['0', '10', '10', '0'], count: '20', min: 150, max: 300 };
  const [first, second] = percentiles([a, b], true, QS);
  near(first.ys, [150 + 0.5 * 90, 150 + 0.9 * 90, 150 + 0.99 * 90]);
  // The second interval: 10 values in (250, 300].
  near(second.ys, [275, 295, 299.5]);
});

test("every percentile of any buckets lies within the point's min and max", () => {
  let seed = 27;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let round = 0; round < 500; round++) {
    // Values drawn first, then bucketed as an SDK would, so min, max and the counts agree.
    const values = Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.round(random() * 2000 * 1000) / 1000 - (random() < 0.2 ? 500 : 0));
    const min = Math.min(...values);
    const max = Math.max(...values);
    const explicit = {
      explicitBounds: MS_BOUNDS,
      bucketCounts: MS_BOUNDS.concat(Infinity).map((b, i) => String(values.filter((v) => v <= b && (i === 0 || v > MS_BOUNDS[i - 1])).length)),
      min,
      max,
    };
    const scale = Math.floor(random() * 4) - 1;
    const base = 2 ** (2 ** -scale);
    const index = (/** @type {number} */ v) => Math.ceil(Math.log(Math.abs(v)) / Math.log(base)) - 1;
    const pos = values.filter((v) => v > 0).map(index);
    const neg = values.filter((v) => v < 0).map(index);
    const side = (/** @type {number[]} */ idx) => {
      if (!idx.length) return { offset: 0, bucketCounts: [] };
      const lo = Math.min(...idx);
      return { offset: lo, bucketCounts: Array.from({ length: Math.max(...idx) - lo + 1 }, (_, i) => String(idx.filter((x) => x === lo + i).length)) };
    };
    const exponential = { scale, zeroCount: String(values.filter((v) => v === 0).length), positive: side(pos), negative: side(neg), min, max };
    for (const point of [explicit, exponential]) {
      const qs = [0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];
      const [{ ys }] = percentiles([{ timeUnixNano: '1', ...point }], false, qs);
      ys.forEach((y, i) => assert.ok(y >= min && y <= max, `round ${round}, q ${qs[i]}: ${y} outside [${min}, ${max}] (${JSON.stringify(point)})`));
    }
  }
});
