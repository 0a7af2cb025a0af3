// Percentiles of OTLP histogram points, by the buckets' own semantics (opentelemetry-proto metrics.proto):
// an explicit bucket i counts values in (bounds[i-1], bounds[i]] and the last one (bounds[n-1], +inf); an
// exponential bucket of index i counts (base^i, base^(i+1)] with base = 2^(2^-scale), negative ones mirrored,
// and the zero bucket [-zeroThreshold, zeroThreshold]. Every value recorded lies within the point's min and max
// when it has them, so each bucket is cut to them: no percentile can be drawn outside what the point reports.
// This module imports no other (types aside), so a unit test can load it on its own.
import type { DataPoint } from '../generated/api';

/** One bucket of a distribution: `count` values in (lo, hi]. */
interface Range {
  lo: number;
  hi: number;
  count: number;
}

const num = (v: number | string | undefined) => (v === undefined ? NaN : Number(v));
const nums = (xs: string[] | undefined) => (xs ?? []).map(Number);

/** The point's min and max, each NaN when it has none. */
function limits(p: DataPoint): { min: number; max: number } {
  return { min: num(p.min), max: num(p.max) };
}

/** Cuts each bucket to [min, max]; a bucket the limits leave empty becomes a point at the nearer limit. */
function clampRanges(ranges: Range[], { min, max }: { min: number; max: number }): Range[] {
  return ranges.map((r) => {
    let lo = Number.isFinite(min) ? Math.max(r.lo, min) : r.lo;
    let hi = Number.isFinite(max) ? Math.min(r.hi, max) : r.hi;
    if (lo > hi) lo = hi = Number.isFinite(max) && r.lo >= max ? max : lo;
    return { lo, hi, count: r.count };
  });
}

/**
 * Explicit buckets. Without a min the first bucket, (-inf, bounds[0]], is taken to start at 0 (or at its bound
 * when that is negative); without a max the overflow bucket, (bounds[n-1], +inf), is taken as its lower edge,
 * as Prometheus' histogram_quantile does.
 */
function explicitRanges(p: DataPoint, counts: number[]): Range[] {
  const bounds = (p.explicitBounds ?? []).map(num);
  const { min, max } = limits(p);
  const ranges = counts.map((count, i) => {
    const lo = i > 0 ? bounds[i - 1] : Number.isFinite(min) ? min : Math.min(0, bounds[0] ?? 0);
    const hi = i < bounds.length ? bounds[i] : Number.isFinite(max) ? max : lo;
    return { lo, hi, count };
  });
  return clampRanges(ranges, { min, max });
}

/** Exponential buckets, lowest first: negative ones mirrored, then zero, then positive. */
function exponentialRanges(p: DataPoint, neg: number[], zero: number, pos: number[]): Range[] {
  const base = 2 ** (2 ** -(p.scale ?? 0));
  const threshold = Math.abs(num(p.zeroThreshold)) || 0;
  const out: Range[] = [];
  const nOff = p.negative?.offset ?? 0;
  for (let i = neg.length - 1; i >= 0; i--) out.push({ lo: -(base ** (nOff + i + 1)), hi: -(base ** (nOff + i)), count: neg[i] });
  if (zero) out.push({ lo: -threshold, hi: threshold, count: zero });
  const pOff = p.positive?.offset ?? 0;
  for (let i = 0; i < pos.length; i++) out.push({ lo: base ** (pOff + i), hi: base ** (pOff + i + 1), count: pos[i] });
  return clampRanges(out, limits(p));
}

/** The value below which `q` of the counted values lie, interpolated linearly within its bucket. */
function quantile(ranges: Range[], q: number): number {
  const total = ranges.reduce((n, r) => n + r.count, 0);
  if (total <= 0) return NaN;
  const rank = q * total;
  let seen = 0;
  for (const r of ranges) {
    if (r.count > 0 && seen + r.count >= rank) return r.lo + ((rank - seen) / r.count) * (r.hi - r.lo);
    seen += r.count;
  }
  return ranges[ranges.length - 1].hi;
}

/** Counts of `b` less those of `a` when both have the same buckets (a cumulative histogram's last interval), else null. */
function minus(b: number[], a: number[]): number[] | null {
  if (a.length !== b.length) return null;
  const out = b.map((v, i) => v - a[i]);
  return out.some((v) => v < 0) ? null : out;
}

/** The buckets of one point, less those of `prev` (the point before it in a cumulative series) when given. */
function rangesOf(p: DataPoint, prev: DataPoint | null): Range[] {
  if (p.explicitBounds !== undefined || p.bucketCounts !== undefined) {
    const own = nums(p.bucketCounts);
    const counts = (prev && minus(own, nums(prev.bucketCounts))) || own;
    return explicitRanges(p, counts);
  }
  const pos = nums(p.positive?.bucketCounts);
  const neg = nums(p.negative?.bucketCounts);
  const zero = Number(p.zeroCount ?? 0);
  const sameBuckets = prev && prev.scale === p.scale && prev.positive?.offset === p.positive?.offset && prev.negative?.offset === p.negative?.offset;
  const dPos = sameBuckets ? minus(pos, nums(prev.positive?.bucketCounts)) : null;
  const dNeg = sameBuckets ? minus(neg, nums(prev.negative?.bucketCounts)) : null;
  return dPos && dNeg && prev ? exponentialRanges(p, dNeg, Math.max(0, zero - Number(prev.zeroCount ?? 0)), dPos) : exponentialRanges(p, neg, zero, pos);
}

/**
 * P50, P90 and P99 (or any `qs`) of each point of one segment of a histogram series. For a cumulative series
 * each point is taken less the one before it (the values recorded in that interval), as a dashboard shows
 * latency; the segment's first point counts everything since its start. A cumulative point's min and max
 * cover its whole interval, so they bound the values of any part of it too.
 */
export function percentiles(segment: DataPoint[], cumulative: boolean, qs: number[]): { x: number; ys: number[] }[] {
  const out: { x: number; ys: number[] }[] = [];
  segment.forEach((p, i) => {
    const ranges = rangesOf(p, cumulative && i > 0 ? segment[i - 1] : null);
    const { min, max } = limits(p);
    const ys = qs.map((q) => {
      const v = quantile(ranges, q);
      return Math.min(Number.isFinite(max) ? max : v, Math.max(Number.isFinite(min) ? min : v, v));
    });
    if (ys.some(Number.isFinite)) out.push({ x: Number(p.timeUnixNano) / 1e6, ys });
  });
  return out;
}
