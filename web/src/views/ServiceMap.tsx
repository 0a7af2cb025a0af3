import { useEffect, useMemo, useState } from 'react';
import { api } from '../api';
import { useWatch } from '../live';
import { href, Link, setQueryParam, type Route } from '../router';
import { formatCount } from '../format';
import { markBidi } from '../text';
import { Empty, Toolbar, Total } from '../components/Toolbar';
import { TimeRange } from '../components/TimeRange';
import { serviceAttrs } from '../components/Service';
import type { Dependencies, Edge } from '../peers';

const NODE_W = 170;
const NODE_H = 34;
const COL_GAP = 130;
const ROW_GAP = 26;
const PAD = 20;

/** Each service's column: one past its furthest caller, so calls go left to right (a cycle stops at the last column). */
function columns(services: string[], edges: Edge[]): Map<string, number> {
  const col = new Map(services.map((s) => [s, 0]));
  for (let round = 0; round < services.length; round++) {
    let moved = false;
    for (const e of edges) {
      if (e.parent === e.child) continue;
      const want = Math.min(services.length - 1, col.get(e.parent)! + 1);
      if (want > col.get(e.child)!) {
        col.set(e.child, want);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return col;
}

const edgeKey = (e: Edge) => `${e.parent}>${e.child}`;

/** The service map (GET /api/dependencies): who calls whom, how often and how often it failed; a click on an edge lists its traces. */
export function ServiceMap({ route }: { route: Route }) {
  const q = route.query;
  const params = new URLSearchParams();
  for (const k of ['from', 'to']) if (q.get(k)) params.set(k, q.get(k)!);
  if (q.get('errors') === '1') params.set('error', 'true');
  const query = params.toString();
  const version = useWatch('traces', query);
  const [data, setData] = useState<Dependencies | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    api
      .dependencies(query)
      .then((d) => current && (setData(d), setError(null)))
      .catch((e: Error) => current && setError(e.message));
    return () => {
      current = false;
    };
  }, [query, version]);

  const layout = useMemo(() => {
    if (!data) return null;
    const col = columns(data.services, data.edges);
    const rows = new Map<number, string[]>();
    for (const s of data.services) rows.set(col.get(s)!, [...(rows.get(col.get(s)!) ?? []), s]);
    const pos = new Map<string, { x: number; y: number }>();
    for (const [c, list] of rows) list.forEach((s, r) => pos.set(s, { x: PAD + c * (NODE_W + COL_GAP), y: PAD + r * (NODE_H + ROW_GAP) }));
    const width = PAD * 2 + (Math.max(0, ...col.values()) + 1) * (NODE_W + COL_GAP) - COL_GAP;
    const height = PAD * 2 + Math.max(1, ...[...rows.values()].map((l) => l.length)) * (NODE_H + ROW_GAP) - ROW_GAP;
    return { pos, width, height };
  }, [data]);

  // Edges into one service end at one box: their labels stack above it.
  const stacked = useMemo(() => {
    const seen = new Map<string, number>();
    return new Map(
      (data?.edges ?? []).map((e) => {
        const k = seen.get(e.child) ?? 0;
        seen.set(e.child, k + 1);
        return [edgeKey(e), k];
      }),
    );
  }, [data]);
  const chosen = data?.edges.find((e) => edgeKey(e) === q.get('edge')) ?? null;
  const maxCalls = Math.max(1, ...(data?.edges.map((e) => e.calls) ?? []));

  return (
    <div className="view scroll service-map-view">
      <Toolbar right={<Total total={data?.total ?? null} noun="edges" />}>
        <span className="muted">Calls between services: a span whose parent span is another service&apos;s.</span>
        <TimeRange from={q.get('from')} to={q.get('to')} />
        <label className="check">
          <input type="checkbox" checked={q.get('errors') === '1'} onChange={(e) => setQueryParam('errors', e.target.checked ? '1' : undefined)} />
          Failed calls only
        </label>
      </Toolbar>
      {error && <div className="banner error">{error}</div>}
      {!data || !layout ? (
        <Empty>{error ? 'Could not load the service map.' : 'Loading…'}</Empty>
      ) : data.edges.length === 0 ? (
        <Empty>
          No call between two services is stored{query ? ' that matches these filters' : ''}: a span whose parent belongs to another service draws an edge here.
        </Empty>
      ) : (
        <svg className="service-map" width={layout.width} height={layout.height} aria-label="Service map">
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">
              <path d="M0 0L10 5L0 10z" className="arrow-head" />
            </marker>
          </defs>
          {data.edges.map((e) => {
            const a = layout.pos.get(e.parent)!;
            const b = layout.pos.get(e.child)!;
            const x1 = a.x + NODE_W;
            const y1 = a.y + NODE_H / 2;
            const x2 = b.x;
            const y2 = b.y + NODE_H / 2;
            const back = x2 <= x1;
            const bend = back ? 60 : (x2 - x1) / 2;
            const d = back
              ? `M${x1} ${y1} C${x1 + bend} ${y1 - 80}, ${x2 - bend} ${y2 - 80}, ${x2} ${y2}`
              : `M${x1} ${y1} C${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
            const key = edgeKey(e);
            return (
              <g
                key={key}
                className={`map-edge ${e.errors ? 'has-errors' : ''} ${chosen === e ? 'chosen' : ''}`}
                data-edge={key}
                onClick={() => setQueryParam('edge', chosen === e ? undefined : key)}
              >
                <path d={d} className="edge-hit" />
                <path d={d} className="edge-line" markerEnd="url(#arrow)" style={{ strokeWidth: 1.5 + 4 * Math.sqrt(e.calls / maxCalls) }} />
                {/* By the arrow's head: edges fanning out of one service end at different boxes, so their labels do not meet. */}
                <text
                  x={back ? (x1 + x2) / 2 : x2 - 14}
                  y={back ? Math.min(y1, y2) - 62 : y2 - 7 - 13 * (stacked.get(key) ?? 0)}
                  textAnchor={back ? 'middle' : 'end'}
                  className="edge-label"
                >
                  {formatCount(e.calls)} calls{e.errors ? ` · ${formatCount(e.errors)} failed` : ''}
                </text>
              </g>
            );
          })}
          {data.services.map((s) => {
            const p = layout.pos.get(s)!;
            return (
              <Link key={s} to={href('/traces', { service: s })}>
                <g className="map-node" {...serviceAttrs(s)}>
                  <rect x={p.x} y={p.y} width={NODE_W} height={NODE_H} rx={5} />
                  <text x={p.x + 12} y={p.y + NODE_H / 2 + 4}>
                    {markBidi(s.length > 22 ? `${s.slice(0, 21)}…` : s)}
                  </text>
                  <title>{s}: its traces</title>
                </g>
              </Link>
            );
          })}
        </svg>
      )}
      {chosen && (
        <section className="card edge-traces" aria-label="Traces of the chosen edge">
          <h3 className="sub">
            {markBidi(chosen.parent)} → {markBidi(chosen.child)}: {formatCount(chosen.calls)} calls in {formatCount(chosen.traces)} traces
            {chosen.errors ? `, ${formatCount(chosen.errors)} failed` : ''}
          </h3>
          <div className="muted small">The newest {chosen.traceIds.length}:</div>
          <ul className="edge-trace-list">
            {chosen.traceIds.map((id) => (
              <li key={id}>
                <Link className="mono" to={`/traces/${id}`} data-trace-id={id}>
                  {id}
                </Link>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
