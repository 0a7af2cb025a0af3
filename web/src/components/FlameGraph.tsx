import { markBidi } from '../text';
import { serviceAttrs } from './Service';
import { useWidth } from './Chart';
import { place, TimeAxis, type Span01 } from './Timeline';
import { spanTitle, type Tree } from './traceTree';

const LEVEL = 20;
/** Narrower than this a block says nothing; leaving it out keeps 5,000 spans light. */
const MIN_PX = 0.75;

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
  return (
    <div className="flame-wrap">
      <div className="flame-axis">
        <TimeAxis totalMs={tree.totalMs} win={win} setWin={setWin} />
      </div>
      <div className="flame-scroll">
        <div className="flame" ref={ref} style={{ height: (tree.maxDepth + 1) * LEVEL }} aria-label="Flame graph">
          {tree.ordered.map((n) => {
            const { left, width: w } = place(n.offsetMs, n.durationMs, tree.totalMs, win);
            const px = (w / 100) * width;
            if (left >= 100 || left + w <= 0 || px < MIN_PX) return null;
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
        </div>
      </div>
    </div>
  );
}
