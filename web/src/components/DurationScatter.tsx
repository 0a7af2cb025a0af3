import { navigate } from '../router';
import { formatDuration, formatTime, nsToMs } from '../format';
import type { TraceSummary } from '../generated/api';
import { useWidth } from './Chart';

const HEIGHT = 120;
const PAD = { left: 56, right: 12, top: 8, bottom: 18 };

/**
 * The listed traces as dots, start time across and duration up (as Jaeger draws its search results): outliers
 * stand out, errors in red; a click opens the trace.
 */
export function DurationScatter({ traces }: { traces: TraceSummary[] }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const points = traces.map((t) => ({ t, x: nsToMs(t.startTimeUnixNano), y: Number(t.durationNanos) / 1e6 }));
  const xs = points.map((p) => p.x).sort((a, b) => a - b);
  const x1 = xs[xs.length - 1] ?? 0;
  // A few traces far older than the rest (an import, a fixture) would squeeze the rest into a line at the right:
  // the axis starts at the 5th percentile then, and the older ones sit on its left edge, counted.
  const p5 = xs[Math.floor(xs.length * 0.05)] ?? 0;
  const x0 = (xs[0] ?? 0) < p5 - 4 * (x1 - p5) ? p5 : (xs[0] ?? 0);
  const earlier = xs.filter((x) => x < x0).length;
  const y1 = Math.max(...points.map((p) => p.y), 0.001);
  const w = Math.max(0, width - PAD.left - PAD.right);
  const h = HEIGHT - PAD.top - PAD.bottom;
  const px = (x: number) => PAD.left + (x1 > x0 ? (Math.max(0, x - x0) / (x1 - x0)) * w : w / 2);
  const py = (y: number) => PAD.top + h - (y / y1) * h;
  return (
    <div className="scatter" ref={ref} aria-label="Duration of the listed traces">
      {width > 0 && points.length > 0 && (
        <svg width={width} height={HEIGHT}>
          <line className="axis" x1={PAD.left} x2={PAD.left + w} y1={PAD.top + h} y2={PAD.top + h} />
          <text className="y-label" x={PAD.left - 6} y={PAD.top + 8} textAnchor="end">
            {formatDuration(y1)}
          </text>
          <text className="y-label" x={PAD.left - 6} y={PAD.top + h} textAnchor="end">
            0
          </text>
          <text className="y-label" x={PAD.left} y={HEIGHT - 4}>
            {earlier ? `${earlier} older at the edge · ` : ''}
            {formatTime(x0)}
          </text>
          <text className="y-label" x={PAD.left + w} y={HEIGHT - 4} textAnchor="end">
            {formatTime(x1)}
          </text>
          {points.map(({ t, x, y }) => (
            <circle
              key={t.traceId}
              className={`dot ${t.errorCount ? 'is-error' : ''}`}
              data-trace-id={t.traceId}
              cx={px(x)}
              cy={py(y)}
              r={t.errorCount ? 4 : 3}
              onClick={() => navigate(`/traces/${t.traceId}`)}
            >
              <title>{`${t.rootService}: ${t.rootName} · ${formatDuration(y)} · ${t.spanCount} spans${t.errorCount ? ` · ${t.errorCount} errors` : ''}`}</title>
            </circle>
          ))}
        </svg>
      )}
    </div>
  );
}
