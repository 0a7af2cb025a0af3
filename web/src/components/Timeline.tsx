import { useLayoutEffect, useRef, useState, type PointerEvent, type ReactNode } from 'react';
import { formatDuration, serviceColor } from '../format';
import { useServiceColors } from '../serviceColors';
import type { Tree } from './traceTree';

/** The part of a trace in view, as fractions of its duration: [0, 1] is all of it. */
export interface Span01 {
  a: number;
  b: number;
}

export const WHOLE: Span01 = { a: 0, b: 1 };

/** Narrowest zoom: a thousandth of the trace, still wider than a pixel's rounding. */
const MIN_WIDTH = 0.001;

/** Where a bar of `offsetMs`..+`durationMs` sits in the window, in percent of the window's width. */
export function place(offsetMs: number, durationMs: number, totalMs: number, win: Span01): { left: number; width: number } {
  if (totalMs <= 0) return { left: 0, width: 100 };
  const span = (win.b - win.a) * totalMs;
  return { left: ((offsetMs - win.a * totalMs) / span) * 100, width: (durationMs / span) * 100 };
}

function clampWindow(a: number, b: number): Span01 {
  let lo = Math.max(0, Math.min(a, b));
  let hi = Math.min(1, Math.max(a, b));
  if (hi - lo < MIN_WIDTH) {
    const mid = (lo + hi) / 2;
    lo = Math.max(0, mid - MIN_WIDTH / 2);
    hi = Math.min(1, lo + MIN_WIDTH);
  }
  return { a: lo, b: hi };
}

/**
 * A strip that zooms by dragging: the drag shows as a band while the pointer moves (only this strip
 * re-renders), and the window changes once, when the button is released. A click without a drag moves
 * the window there; a double click shows the whole trace again.
 */
function DragZoom({
  toFraction,
  win,
  setWin,
  className,
  label,
  children,
}: {
  /** The trace fraction under a point `x` pixels from the strip's left, given the strip's width. */
  toFraction: (x: number, width: number) => number;
  win: Span01;
  setWin: (w: Span01) => void;
  className: string;
  label: string;
  children: ReactNode;
}) {
  const [drag, setDrag] = useState<{ x0: number; x1: number } | null>(null);
  const local = (e: PointerEvent<HTMLDivElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return { x: Math.max(0, Math.min(r.width, e.clientX - r.left)), width: r.width };
  };
  return (
    <div
      className={`zoom-strip ${className}`}
      aria-label={label}
      title="Drag to zoom, double-click to show the whole trace"
      onPointerDown={(e) => {
        if (e.button !== 0) return;
        e.currentTarget.setPointerCapture(e.pointerId);
        const { x } = local(e);
        setDrag({ x0: x, x1: x });
      }}
      onPointerMove={(e) => {
        if (!drag) return;
        const { x } = local(e);
        setDrag({ x0: drag.x0, x1: x });
      }}
      onPointerUp={(e) => {
        if (!drag) return;
        const { x, width } = local(e);
        setDrag(null);
        if (Math.abs(x - drag.x0) < 3) {
          if (className !== 'minimap') return;
          const at = toFraction(x, width);
          const half = (win.b - win.a) / 2;
          const a = Math.max(0, Math.min(1 - 2 * half, at - half));
          setWin({ a, b: a + 2 * half });
          return;
        }
        setWin(clampWindow(toFraction(drag.x0, width), toFraction(x, width)));
      }}
      onPointerCancel={() => setDrag(null)}
      onDoubleClick={() => setWin(WHOLE)}
    >
      {children}
      {drag && Math.abs(drag.x1 - drag.x0) >= 3 && <div className="zoom-band" style={{ left: Math.min(drag.x0, drag.x1), width: Math.abs(drag.x1 - drag.x0) }} />}
    </div>
  );
}

/** The whole trace in miniature, one line per span in tree order, with the zoomed window marked. */
export function Minimap({ tree, win, setWin }: { tree: Tree; win: Span01; setWin: (w: Span01) => void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const colors = useServiceColors();
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = canvas.current?.parentElement;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useLayoutEffect(() => {
    const c = canvas.current;
    if (!c || width === 0) return;
    const ratio = window.devicePixelRatio || 1;
    const height = c.clientHeight;
    c.width = Math.round(width * ratio);
    c.height = Math.round(height * ratio);
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const n = tree.ordered.length;
    const rowH = Math.max(1, height / Math.max(1, n));
    const total = tree.totalMs || 1;
    tree.ordered.forEach((node, i) => {
      ctx.fillStyle = serviceColor(node.span.service);
      const x = (node.offsetMs / total) * width;
      ctx.fillRect(x, (i / n) * height, Math.max(1, (node.durationMs / total) * width), rowH);
    });
  }, [tree, width, colors]);
  return (
    <DragZoom toFraction={(x, w) => x / w} win={win} setWin={setWin} className="minimap" label="Trace minimap">
      <canvas ref={canvas} />
      <div className="minimap-shade" style={{ left: 0, width: `${win.a * 100}%` }} />
      <div className="minimap-shade" style={{ left: `${win.b * 100}%`, right: 0 }} />
      <div className="minimap-window" data-window={`${win.a.toFixed(4)} ${win.b.toFixed(4)}`} style={{ left: `${win.a * 100}%`, width: `${(win.b - win.a) * 100}%` }} />
    </DragZoom>
  );
}

/** The time axis of the window in view, which zooms further when dragged across. */
export function TimeAxis({ totalMs, win, setWin }: { totalMs: number; win: Span01; setWin: (w: Span01) => void }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <DragZoom toFraction={(x, w) => win.a + (x / w) * (win.b - win.a)} win={win} setWin={setWin} className="wf-time time-axis" label="Time axis">
      {ticks.map((t) => (
        <span key={t} className="tick" style={{ left: `${t * 100}%` }}>
          {formatDuration(totalMs * (win.a + t * (win.b - win.a)))}
        </span>
      ))}
    </DragZoom>
  );
}
