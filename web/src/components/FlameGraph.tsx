import { useMemo } from 'react';
import { markBidi } from '../text';
import { serviceAttrs } from './Service';
import { useWidth } from './Chart';
import { TimeAxis, type Span01 } from './Timeline';
import { spanTitle, type Tree } from './traceTree';
import { layoutFlame, MIN_PX, type FlameGroup } from './flameLayout';
import { formatCount } from '../format';

const LEVEL = 20;
/** Narrower than this a profile's block says nothing. */
const MIN_BLOCK_PX = 0.75;
/** Narrower than this a block has no room for its name. */
const LABEL_PX = 40;

/** One block of a flame graph: where it sits (in percent of the graph's width) and what it shows. */
export interface FlameBlock {
  key: string;
  left: number;
  width: number;
  depth: number;
  label: string;
  title: string;
  /** Painted in this service's colour; without one, in the stylesheet's neutral colour. */
  service?: string;
  className?: string;
  /** How much darker than its colour the block is, 0 to 1: tells neighbours of one colour apart. */
  shade?: number;
  /** `data-*` attributes that name what the block stands for, for tests and for clicks. */
  data?: Record<string, string>;
}

/**
 * The drawing both flame graphs share, a trace's spans on a time axis and a profile's merged stacks: one level
 * per depth from the top, blocks too narrow to see left out, names only where they fit.
 */
export function FlameBlocks({ blocks, maxDepth, onSelect }: { blocks: FlameBlock[]; maxDepth: number; onSelect: (block: FlameBlock) => void }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  return (
    <div className="flame" ref={ref} style={{ height: (maxDepth + 1) * LEVEL }} aria-label="Flame graph">
      {blocks.map((b) => {
        const px = (b.width / 100) * width;
        if (b.left >= 100 || b.left + b.width <= 0 || px < MIN_BLOCK_PX) return null;
        const service = b.service === undefined ? { style: {} } : serviceAttrs(b.service);
        return (
          <div
            key={b.key}
            className={`flame-block ${b.className ?? ''}`}
            {...service}
            {...b.data}
            style={{
              ...service.style,
              ...(b.shade === undefined ? {} : { ['--shade' as string]: b.shade }),
              left: `${b.left}%`,
              width: `${b.width}%`,
              top: b.depth * LEVEL,
            }}
            title={b.title}
            onClick={() => onSelect(b)}
          >
            {px > LABEL_PX ? markBidi(b.label) : ''}
          </div>
        );
      })}
    </div>
  );
}

/** The part of the trace a group covers, as a window to zoom to (a little wider, so its spans are not at the edge). */
function groupWindow(g: FlameGroup, win: Span01): Span01 {
  const w = win.b - win.a;
  const a = win.a + (Math.max(0, g.left) / 100) * w;
  const b = win.a + (Math.min(100, g.left + g.width) / 100) * w;
  const pad = (b - a) * 0.1;
  return { a: Math.max(0, a - pad), b: Math.min(1, b + pad) };
}

const groupText = (g: FlameGroup) =>
  `${formatCount(g.count)} span${g.count === 1 ? '' : 's'}${g.errors ? ` (${formatCount(g.errors)} error${g.errors === 1 ? '' : 's'})` : ''}`;

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
          {groupErrors > 0 && <b className="error-text"> ({formatCount(groupErrors)} errors)</b>} are drawn as {formatCount(layout.groups.length)} grouped blocks,
          striped: click one, or zoom in, to see its spans.
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
