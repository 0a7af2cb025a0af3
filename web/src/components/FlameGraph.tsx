import { useMemo } from 'react';
import { markBidi } from '../text';
import { serviceAttrs } from './Service';
import { useWidth } from './Chart';
import { TimeAxis, type Span01 } from './Timeline';
import { spanTitle, type Tree } from './traceTree';
import { layoutFlame, MIN_PX, type FlameGroup } from './flameLayout';
import { formatCount } from '../format';

const LEVEL = 20;

/** The part of the trace a group covers, as a window to zoom to (a little wider, so its spans are not at the edge). */
function groupWindow(g: FlameGroup, win: Span01): Span01 {
  const w = win.b - win.a;
  const a = win.a + (Math.max(0, g.left) / 100) * w;
  const b = win.a + (Math.min(100, g.left + g.width) / 100) * w;
  const pad = (b - a) * 0.1;
  return { a: Math.max(0, a - pad), b: Math.min(1, b + pad) };
}

const groupText = (g: FlameGroup) => `${formatCount(g.count)} span${g.count === 1 ? '' : 's'}${g.errors ? ` (${formatCount(g.errors)} error${g.errors === 1 ? '' : 's'})` : ''}`;

/**
 * The trace as a flame graph: one level per depth, each span a block under its parent, placed on the
 * same time axis (and zoom) as the waterfall, so where the time went shows at a glance.
 */
export function FlameGraph({
  tree,
  win,
  setWin,
  selectedId,
  matches,
  current,
  onSelect,
}: {
  tree: Tree;
  win: Span01;
  setWin: (w: Span01) => void;
  selectedId: string;
  matches: Set<string>;
  current?: string;
  onSelect: (spanId: string) => void;
}) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const layout = useMemo(() => layoutFlame(tree, win, width), [tree, win, width]);
  const groupErrors = layout.groups.reduce((n, g) => n + g.errors, 0);
  return (
    <div className="flame-wrap">
      <div className="flame-axis">
        <TimeAxis totalMs={tree.totalMs} win={win} setWin={setWin} />
      </div>
      {layout.grouped > 0 && (
        <div className="flame-hidden small" data-grouped={layout.grouped} data-group-errors={groupErrors}>
          {formatCount(layout.grouped)} spans narrower than {MIN_PX} px at this zoom
          {groupErrors > 0 && <b className="error-text"> ({formatCount(groupErrors)} errors)</b>} are drawn as {formatCount(layout.groups.length)} grouped
          blocks, striped: click one, or zoom in, to see its spans.
        </div>
      )}
      <div className="flame-scroll">
        <div className="flame" ref={ref} style={{ height: (tree.maxDepth + 1) * LEVEL }} aria-label="Flame graph">
          {layout.blocks.map(({ node: n, left, width: w, px }) => {
            const id = n.span.spanId;
            const service = serviceAttrs(n.span.service);
            const mark = matches.has(id) ? (id === current ? 'find-current' : 'find-match') : '';
            return (
              <div
                key={id}
                className={`flame-block ${id === selectedId ? 'selected' : ''} ${n.span.status.code === 2 ? 'is-error' : ''} ${mark}`}
                data-span-id={id}
                data-service={service['data-service']}
                style={{ ...service.style, left: `${left}%`, width: `${w}%`, top: n.depth * LEVEL }}
                title={spanTitle(n.span, n.durationMs)}
                onClick={() => onSelect(id)}
              >
                {px > 40 ? markBidi(n.span.name) : ''}
              </div>
            );
          })}
          {layout.groups.map((g) => {
            const px = (g.width / 100) * width;
            return (
              <div
                key={`${g.depth}:${g.left}`}
                className={`flame-block flame-group ${g.errors ? 'is-error' : ''}`}
                data-count={g.count}
                data-errors={g.errors}
                style={{ left: `${g.left}%`, width: `max(2px, ${g.width}%)`, top: g.depth * LEVEL }}
                title={`${groupText(g)}, each narrower than ${MIN_PX} px: click to zoom in`}
                onClick={() => setWin(groupWindow(g, win))}
              >
                {px > 60 ? groupText(g) : ''}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
