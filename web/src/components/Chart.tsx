import { useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { formatCompact, formatTime, formatUnit } from '../format';
import { navigate } from '../router';

export interface ChartPoint {
  x: number;
  y: number;
}

/**
 * One line: its segments are drawn apart in the same colour, so nothing joins the last value before a
 * counter restarted to the first one after.
 */
export interface Series {
  label: string;
  color: string;
  segments: ChartPoint[][];
  /** An SVG dash pattern, to tell apart lines of one colour (percentiles of one series). */
  dash?: string;
}

function niceStep(range: number, target: number): number {
  if (!(range > 0)) return 1;
  const raw = range / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/** An element's width, kept current as it resizes. */
export function useWidth<T extends HTMLElement>(): [RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(600);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

const PAD = { left: 56, right: 16, top: 10, bottom: 24 };

/** Axis labels as precise as the visible range needs: milliseconds for a few seconds, the date across days. */
function timeLabel(ms: number, range: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const hms = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  if (range < 10_000) return `${hms}.${p(d.getMilliseconds(), 3)}`;
  if (range > 86_400_000) return `${d.getMonth() + 1}/${d.getDate()} ${hms.slice(0, 5)}`;
  return hms;
}

/** A point drawn over a chart that links somewhere: an exemplar and its trace. */
export interface Marker {
  x: number;
  y: number;
  color: string;
  title: string;
  to: string;
}

/** Pixels per character of an axis label (10.5px system font, digits are the widest), for the left margin. */
const AXIS_CHAR_PX = 6.4;

/**
 * Time-series line chart in plain SVG: one polyline per segment of a series, a crosshair with values on
 * hover, and a legend whose entries hide and show their series. Each polyline carries its series' label
 * and its values (`data-series`, `data-values`), so tests and scripts read what is drawn. Values are
 * shown in the metric's `unit` (bytes, durations, `{request}`…).
 */
export function LineChart({ series, height = 260, unit = '', markers = [] }: { series: Series[]; height?: number; unit?: string; markers?: Marker[] }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const [hoverX, setHoverX] = useState<number | null>(null);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const shown = series.filter((s) => !hidden.has(s.label));
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  const flat = shown.map((s) => s.segments.flat());
  const extend = (p: ChartPoint) => {
    if (!Number.isFinite(p.y)) return;
    x0 = Math.min(x0, p.x);
    x1 = Math.max(x1, p.x);
    y0 = Math.min(y0, p.y);
    y1 = Math.max(y1, p.y);
  };
  for (const points of flat) for (const p of points) extend(p);
  for (const m of markers) extend(m);
  const legend = (series.length > 1 || Boolean(series[0]?.label)) && (
    <div className="chart-legend" aria-label="Series">
      {series.map((s) => (
        <button
          key={s.label}
          type="button"
          className={`legend-item ${hidden.has(s.label) ? 'off' : ''}`}
          aria-pressed={!hidden.has(s.label)}
          data-series={s.label}
          title={hidden.has(s.label) ? 'Show this series' : 'Hide this series'}
          onClick={() =>
            setHidden((h) => {
              const next = new Set(h);
              if (!next.delete(s.label)) next.add(s.label);
              return next;
            })
          }
        >
          <span className="swatch" style={{ background: s.color }} />
          {s.label || '(no attributes)'}
        </button>
      ))}
    </div>
  );
  if (!Number.isFinite(x0))
    return (
      <div className="chart" ref={ref}>
        <div className="muted small">{shown.length ? 'No numeric points.' : 'Every series is hidden: pick one below.'}</div>
        {legend}
      </div>
    );
  if (x1 === x0) {
    x0 -= 1000;
    x1 += 1000;
  }
  if (y0 > 0 && y0 / (y1 || 1) < 0.5) y0 = 0;
  if (y1 === y0) {
    y1 += Math.abs(y1) * 0.1 || 1;
    y0 -= Math.abs(y0) * 0.1 || 0;
  }
  const yStep = niceStep(y1 - y0, 4);
  y0 = Math.floor(y0 / yStep) * yStep;
  y1 = Math.ceil(y1 / yStep) * yStep;
  const yTicks: number[] = [];
  for (let v = y0; v <= y1 + yStep / 2; v += yStep) yTicks.push(v);
  const yLabels = yTicks.map((v) => formatUnit(v, unit, true));
  const left = Math.max(PAD.left, Math.ceil(Math.max(...yLabels.map((l) => l.length)) * AXIS_CHAR_PX) + 12);
  const w = Math.max(200, width);
  const plotW = w - left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const sx = (x: number) => left + ((x - x0) / (x1 - x0)) * plotW;
  const sy = (y: number) => PAD.top + plotH - ((y - y0) / (y1 - y0)) * plotH;
  const xTicks: number[] = [];
  const xCount = Math.max(2, Math.floor(plotW / 110));
  for (let i = 0; i <= xCount; i++) xTicks.push(x0 + ((x1 - x0) * i) / xCount);

  let hover: { x: number; rows: { s: Series; y: number }[] } | null = null;
  if (hoverX !== null) {
    const target = x0 + ((hoverX - left) / plotW) * (x1 - x0);
    let best = Infinity;
    let bestX = 0;
    for (const points of flat)
      for (const p of points)
        if (Math.abs(p.x - target) < best) {
          best = Math.abs(p.x - target);
          bestX = p.x;
        }
    const rows: { s: Series; y: number }[] = [];
    shown.forEach((s, i) => {
      const p = flat[i].find((q) => q.x === bestX);
      if (p) rows.push({ s, y: p.y });
    });
    hover = { x: bestX, rows };
  }
  // The tooltip goes on the side of the crosshair with more room and never wider than that room.
  const hx = hover ? sx(hover.x) : 0;
  const onLeft = hx < w / 2;
  const room = Math.min(480, (onLeft ? w - hx : hx) - 20);

  return (
    <div className="chart" ref={ref}>
      <svg
        width={w}
        height={height}
        role="img"
        aria-label="Time series chart"
        onMouseMove={(e) => setHoverX(e.clientX - e.currentTarget.getBoundingClientRect().left)}
        onMouseLeave={() => setHoverX(null)}
      >
        {yTicks.map((v, i) => (
          <g key={v}>
            <line className="grid" x1={left} x2={w - PAD.right} y1={sy(v)} y2={sy(v)} />
            <text className="axis y-label" x={left - 6} y={sy(v) + 4} textAnchor="end">
              {yLabels[i]}
            </text>
          </g>
        ))}
        {xTicks.map((v, i) => (
          <text key={i} className="axis" x={sx(v)} y={height - 6} textAnchor={i === 0 ? 'start' : i === xTicks.length - 1 ? 'end' : 'middle'}>
            {timeLabel(v, x1 - x0)}
          </text>
        ))}
        {shown.map((s) => {
          const segments = s.segments.map((seg) => seg.filter((p) => Number.isFinite(p.y))).filter((seg) => seg.length);
          const dots = segments.reduce((n, seg) => n + seg.length, 0) <= 60;
          return (
            <g key={s.label}>
              {segments.map((pts, i) => (
                <g key={i}>
                  <polyline
                    fill="none"
                    stroke={s.color}
                    strokeWidth={1.75}
                    strokeLinejoin="round"
                    strokeDasharray={s.dash}
                    data-series={s.label}
                    data-segment={i}
                    data-values={pts.map((p) => p.y).join(' ')}
                    points={pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}
                  />
                  {(dots || pts.length === 1) && pts.map((p, j) => <circle key={j} cx={sx(p.x)} cy={sy(p.y)} r={2.5} fill={s.color} />)}
                </g>
              ))}
            </g>
          );
        })}
        {markers.map((m, i) => (
          <a
            key={i}
            href={m.to}
            className="exemplar"
            data-exemplar={m.to}
            onClick={(e) => {
              e.preventDefault();
              navigate(m.to);
            }}
          >
            <title>{m.title}</title>
            <rect x={sx(m.x) - 4} y={sy(m.y) - 4} width={8} height={8} transform={`rotate(45 ${sx(m.x)} ${sy(m.y)})`} fill={m.color} />
          </a>
        ))}
        {hover && <line className="crosshair" x1={hx} x2={hx} y1={PAD.top} y2={PAD.top + plotH} />}
      </svg>
      {hover && hover.rows.length > 0 && (
        <div className="tooltip" style={{ maxWidth: room, minWidth: Math.min(200, room), ...(onLeft ? { left: hx + 12 } : { right: w - hx + 12 }) }}>
          <div className="muted">{formatTime(hover.x)}</div>
          {hover.rows.slice(0, 12).map((r) => (
            <div key={r.s.label} className="tooltip-row">
              <span className="swatch" style={{ background: r.s.color }} />
              <span className="ellipsis">{r.s.label || '(no attributes)'}</span>
              <span className="strong">{formatUnit(r.y, unit)}</span>
            </div>
          ))}
        </div>
      )}
      {legend}
    </div>
  );
}

export interface Bucket {
  label: string;
  count: number;
}

/** Bucket counts as vertical bars, labelled with their upper bounds. */
export function BarChart({ buckets, height = 220 }: { buckets: Bucket[]; height?: number }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const w = Math.max(200, width);
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const plotW = w - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom - 14;
  const bw = plotW / Math.max(1, buckets.length);
  const step = niceStep(max, 4);
  const ticks: number[] = [];
  for (let v = 0; v <= max + step / 2; v += step) ticks.push(v);
  const top = ticks[ticks.length - 1] || 1;
  const labelEvery = Math.max(1, Math.ceil(buckets.length / Math.max(1, Math.floor(plotW / 56))));
  return (
    <div className="chart" ref={ref}>
      <svg width={w} height={height} role="img" aria-label="Bucket counts">
        {ticks.map((v) => {
          const y = PAD.top + plotH - (v / top) * plotH;
          return (
            <g key={v}>
              <line className="grid" x1={PAD.left} x2={w - PAD.right} y1={y} y2={y} />
              <text className="axis" x={PAD.left - 6} y={y + 4} textAnchor="end">
                {formatCompact(v)}
              </text>
            </g>
          );
        })}
        {buckets.map((b, i) => {
          const h = (b.count / top) * plotH;
          const x = PAD.left + i * bw;
          return (
            <g key={i}>
              <rect className="bucket" x={x + 1} y={PAD.top + plotH - h} width={Math.max(1, bw - 2)} height={h}>
                <title>{`${b.label}: ${b.count}`}</title>
              </rect>
              {i % labelEvery === 0 && (
                <text className="axis" x={x + bw / 2} y={height - 18} textAnchor="middle">
                  {b.label}
                </text>
              )}
            </g>
          );
        })}
        <text className="axis" x={PAD.left} y={height - 2}>
          upper bound (le)
        </text>
      </svg>
    </div>
  );
}
