import { markBidi } from '../text';
import { serviceAttrs } from './Service';
import { useWidth } from './Chart';
import { place, TimeAxis, type Span01 } from './Timeline';
import { spanTitle, type Tree } from './traceTree';

const LEVEL = 20;
/** Narrower than this a block says nothing; leaving it out keeps 5,000 spans light. */
const MIN_PX = 0.75;
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
        if (b.left >= 100 || b.left + b.width <= 0 || px < MIN_PX) return null;
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
  const blocks = tree.ordered.map((n): FlameBlock => {
    const id = n.span.spanId;
    const mark = matches.has(id) ? (id === current ? 'find-current' : 'find-match') : '';
    return {
      key: id,
      ...place(n.offsetMs, n.durationMs, tree.totalMs, win),
      depth: n.depth,
      label: n.span.name,
      title: spanTitle(n.span, n.durationMs),
      service: n.span.service,
      className: `${id === selectedId ? 'selected' : ''} ${n.span.status.code === 2 ? 'is-error' : ''} ${mark}`,
      data: { 'data-span-id': id },
    };
  });
  return (
    <div className="flame-wrap">
      <div className="flame-axis">
        <TimeAxis totalMs={tree.totalMs} win={win} setWin={setWin} />
      </div>
      <div className="flame-scroll">
        <FlameBlocks blocks={blocks} maxDepth={tree.maxDepth} onSelect={(b) => onSelect(b.key)} />
      </div>
    </div>
  );
}
