import { toNumber } from '../format';
import type { DataPoint } from '../types';

/** One bucket of a distribution: `count` values in (lo, hi]. */
interface Range {
  lo: number;
  hi: number;
  count: number;
}

/** Explicit buckets: the first starts at the point's min (else 0 or below its bound), the last ends at its max. */
function explicitRanges(p: DataPoint, counts: number[]): Range[] {
  const bounds = (p.explicitBounds ?? []).map(toNumber);
  const min = p.min !== undefined ? toNumber(p.min) : NaN;
  const max = p.max !== undefined ? toNumber(p.max) : NaN;
  return counts.map((count, i) => {
    const lo = i === 0 ? (Number.isFinite(min) ? Math.min(min, bounds[0] ?? min) : Math.min(0, bounds[0] ?? 0)) : bounds[i - 1];
    const hi = i < bounds.length ? bounds[i] : Number.isFinite(max) ? Math.max(max, lo) : lo;
    return { lo, hi, count };
  });
}

/** Exponential buckets, lowest first: negative ones mirrored, then zero, then positive (base = 2^(2^-scale)). */
function exponentialRanges(p: DataPoint, neg: number[], zero: number, pos: number[]): Range[] {
  const base = 2 ** (2 ** -(p.scale ?? 0));
  const out: Range[] = [];
  const nOff = p.negative?.offset ?? 0;
  for (let i = neg.length - 1; i >= 0; i--) out.push({ lo: -(base ** (nOff + i + 1)), hi: -(base ** (nOff + i)), count: neg[i] });
  if (zero) out.push({ lo: 0, hi: 0, count: zero });
  const pOff = p.positive?.offset ?? 0;
  for (let i = 0; i < pos.length; i++) out.push({ lo: base ** (pOff + i), hi: base ** (pOff + i + 1), count: pos[i] });
  return out;
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

const nums = (xs: string[] | undefined) => (xs ?? []).map(Number);

/** Counts of `b` less those of `a` when both have the same buckets (a cumulative histogram's last interval), else null. */
function minus(b: number[], a: number[]): number[] | null {
  if (a.length !== b.length) return null;
  const out = b.map((v, i) => v - a[i]);
  return out.some((v) => v < 0) ? null : out;
}

/**
 * P50, P90 and P99 of each point of one segment of a histogram series. For a cumulative series each
 * point is taken less the one before it (the values recorded in that interval), as a dashboard shows
 * latency; the segment's first point counts everything since its start.
 */
export function percentiles(segment: DataPoint[], cumulative: boolean, qs: number[]): { x: number; ys: number[] }[] {
  const out: { x: number; ys: number[] }[] = [];
  segment.forEach((p, i) => {
    const prev = cumulative && i > 0 ? segment[i - 1] : null;
    let ranges: Range[];
    if (p.explicitBounds !== undefined || p.bucketCounts !== undefined) {
      const own = nums(p.bucketCounts);
      const counts = (prev && minus(own, nums(prev.bucketCounts))) || own;
      ranges = explicitRanges(p, counts);
    } else {
      const sameScale = prev && prev.scale === p.scale && prev.positive?.offset === p.positive?.offset && prev.negative?.offset === p.negative?.offset;
      const pos = nums(p.positive?.bucketCounts);
      const neg = nums(p.negative?.bucketCounts);
      const zero = Number(p.zeroCount ?? 0);
      const dPos = sameScale ? minus(pos, nums(prev!.positive?.bucketCounts)) : null;
      const dNeg = sameScale ? minus(neg, nums(prev!.negative?.bucketCounts)) : null;
      ranges =
        dPos && dNeg
          ? exponentialRanges(p, dNeg, Math.max(0, zero - Number(prev!.zeroCount ?? 0)), dPos)
          : exponentialRanges(p, neg, zero, pos);
    }
    const ys = qs.map((q) => quantile(ranges, q));
    if (ys.some(Number.isFinite)) out.push({ x: Number(p.timeUnixNano) / 1e6, ys });
  });
  return out;
}
