import { markBidi } from '../text';
import { Icon } from '../components/Icon';
import { useMemo } from 'react';
import { href, Link } from '../router';
import { formatDuration } from '../format';
import { VirtualList } from '../components/VirtualList';
import { Empty } from '../components/Toolbar';
import { ServiceDot, serviceAttrs } from '../components/Service';
import { buildTree, signature, signatureCounts, type Node, type Tree } from '../components/traceTree';
import { useTrace } from '../components/useTrace';

const ROW_HEIGHT = 24;

type Mark = 'only' | 'count' | '';

/** Each signature's spans' durations, in tree order: the k-th span of a kind is compared with the k-th of the other side. */
function durationsBySignature(tree: Tree): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const n of tree.ordered) {
    const sig = signature(n);
    const list = out.get(sig);
    if (list) list.push(n.durationMs);
    else out.set(sig, [n.durationMs]);
  }
  return out;
}

/** How much longer (+) or shorter (−) than its counterpart a span took, when it differs by a visible amount. */
function delta(ms: number, there: number | undefined): string {
  if (there === undefined) return '';
  const d = ms - there;
  if (Math.abs(d) < Math.max(0.001, there * 0.01)) return '';
  return `${d > 0 ? '+' : '−'}${formatDuration(Math.abs(d))}`;
}

/**
 * Two traces side by side, on one time scale. Spans are matched by what they did (service and name, with their ancestors'):
 * a span with no counterpart in the other trace is marked "only here", one whose kind occurs a different
 * number of times there is marked with both counts.
 */
export function TraceCompare({ a, b }: { a: string; b: string }) {
  const left = useTrace(a);
  const right = useTrace(b);
  const treeA = useMemo(() => buildTree(left.spans), [left.spans]);
  const treeB = useMemo(() => buildTree(right.spans), [right.spans]);
  const countsA = useMemo(() => signatureCounts(treeA), [treeA]);
  const countsB = useMemo(() => signatureCounts(treeB), [treeB]);
  const onlyA = treeA.ordered.filter((n) => !countsB.has(signature(n))).length;
  const onlyB = treeB.ordered.filter((n) => !countsA.has(signature(n))).length;
  // One time scale for both sides: a bar's length compares with the other side's as it reads.
  const scaleMs = Math.max(treeA.totalMs, treeB.totalMs);
  const durationsA = useMemo(() => durationsBySignature(treeA), [treeA]);
  const durationsB = useMemo(() => durationsBySignature(treeB), [treeB]);

  return (
    <div className="view">
      <div className="toolbar">
        <Link className="btn small" to={`/traces/${a}`}>
          ← Trace {a.slice(0, 8)}
        </Link>
        <span className="strong">Comparing two traces</span>
        {left.spans.length > 0 && right.spans.length > 0 && (
          <span className="muted" data-diff={`${onlyA} ${onlyB}`}>
            {onlyA} spans only in the left trace, {onlyB} only in the right; spans matched by service and name along their path
          </span>
        )}
        <div className="spacer" />
        <Link className="btn small" to={href(`/traces/${b}`, { compare: a })}>
          <Icon name="swap" /> Swap
        </Link>
      </div>
      <div className="compare">
        <ComparePane id={a} side="left" state={left} tree={treeA} own={countsA} other={countsB} otherDurations={durationsB} scaleMs={scaleMs} />
        <ComparePane id={b} side="right" state={right} tree={treeB} own={countsB} other={countsA} otherDurations={durationsA} scaleMs={scaleMs} />
      </div>
    </div>
  );
}

function ComparePane({
  id,
  side,
  state,
  tree,
  own,
  other,
  otherDurations,
  scaleMs,
}: {
  id: string;
  side: string;
  state: { spans: unknown[]; loaded: boolean; error: string | null };
  tree: Tree;
  own: Map<string, number>;
  other: Map<string, number>;
  otherDurations: Map<string, number[]>;
  scaleMs: number;
}) {
  const { marks, deltas } = useMemo(() => {
    const seen = new Map<string, number>();
    const marks: Mark[] = [];
    const deltas: string[] = [];
    for (const n of tree.ordered) {
      const sig = signature(n);
      const k = seen.get(sig) ?? 0;
      seen.set(sig, k + 1);
      const there = other.get(sig) ?? 0;
      marks.push(there === 0 ? 'only' : there !== own.get(sig) ? 'count' : '');
      deltas.push(delta(n.durationMs, otherDurations.get(sig)?.[k]));
    }
    return { marks, deltas };
  }, [tree, own, other, otherDurations]);
  const errors = tree.ordered.filter((n) => n.span.status.code === 2).length;
  const root = tree.roots[0]?.span;
  return (
    <section className="compare-pane" data-side={side} aria-label={`Trace ${id}`}>
      <div className="compare-head">
        <Link className="mono" to={`/traces/${id}`}>
          {id.slice(0, 16)}
        </Link>
        {root && (
          <span className="ellipsis">
            <ServiceDot service={root.service} />
            {root.service}: <b>{root.name}</b>
          </span>
        )}
        <span className="muted">
          {tree.ordered.length} spans · {formatDuration(tree.totalMs)}
        </span>
        {errors > 0 && (
          <span className="badge error" data-errors={errors}>
            {errors} error{errors === 1 ? '' : 's'}
          </span>
        )}
      </div>
      {state.spans.length === 0 ? (
        <Empty>{state.error ?? (state.loaded ? 'No stored span has this trace id.' : 'Loading…')}</Empty>
      ) : (
        <VirtualList
          count={tree.ordered.length}
          rowHeight={ROW_HEIGHT}
          label={`Spans of ${id}`}
          renderRow={(i) => <CompareRow node={tree.ordered[i]} mark={marks[i]} delta={deltas[i]} own={own} other={other} total={scaleMs} />}
        />
      )}
    </section>
  );
}

function CompareRow({
  node,
  mark,
  delta,
  own,
  other,
  total,
}: {
  node: Node;
  mark: Mark;
  delta: string;
  own: Map<string, number>;
  other: Map<string, number>;
  total: number;
}) {
  const s = node.span;
  const failed = s.status.code === 2;
  const sig = signature(node);
  const service = serviceAttrs(s.service);
  return (
    <Link
      to={`/traces/${s.traceId}?span=${s.spanId}`}
      className={`compare-row ${mark ? `diff-${mark}` : ''} ${failed ? 'is-error' : ''}`}
      data-diff={mark || undefined}
      data-error={failed || undefined}
      data-span-id={s.spanId}
    >
      <span className="compare-label" style={{ paddingLeft: 6 + node.depth * 12 }}>
        <span className="svc-bar" {...service} />
        <span className="svc-name">{markBidi(s.service)}</span> <span className="span-name">{markBidi(s.name)}</span>
        {failed && <span className="badge error small">error</span>}
      </span>
      <span className="compare-mark small">{mark === 'only' ? 'only here' : mark === 'count' ? `${own.get(sig)} here · ${other.get(sig)} there` : ''}</span>
      <span className="compare-bar-cell">
        <span
          className="bar"
          data-service={s.service}
          style={{ ...service.style, left: `${total ? (node.offsetMs / total) * 100 : 0}%`, width: `max(2px, ${total ? (node.durationMs / total) * 100 : 100}%)` }}
        />
      </span>
      <span className="num small" title={delta ? `${delta} against its counterpart in the other trace` : undefined}>
        {formatDuration(node.durationMs)}
        {delta && <span className={`compare-delta ${delta.startsWith('+') ? 'slower' : 'faster'}`}> {delta}</span>}
      </span>
    </Link>
  );
}
