import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError } from '../api';
import { useWatch } from '../live';
import { Link, navigate, setQueryParam, type Route } from '../router';
import {
  formatDuration,
  formatTime,
  nsToMs,
  SPAN_KINDS,
  STATUS_CODES,
  serviceColor,
} from '../format';
import { AttrTable, CopyButton, KvRow, Section } from '../components/AttrTable';
import { VirtualList } from '../components/VirtualList';
import { Empty } from '../components/Toolbar';
import { useKeys } from '../keys';
import type { Span } from '../types';

const ROW_HEIGHT = 26;

interface Node {
  span: Span;
  children: Node[];
  depth: number;
  offsetMs: number;
  durationMs: number;
  orphan: boolean;
}

interface Tree {
  roots: Node[];
  byId: Map<string, Node>;
  startNs: bigint;
  totalMs: number;
  maxDepth: number;
  services: string[];
  errors: number;
}

function safeBigInt(s: string): bigint {
  try {
    return BigInt(s || '0');
  } catch {
    return 0n;
  }
}

/** Parent/child tree with offsets computed exactly from the nanosecond strings. */
function buildTree(spans: Span[]): Tree {
  let startNs = -1n;
  let endNs = -1n;
  for (const s of spans) {
    const a = safeBigInt(s.startTimeUnixNano);
    const b = safeBigInt(s.endTimeUnixNano);
    if (startNs < 0n || a < startNs) startNs = a;
    if (b > endNs) endNs = b;
  }
  const byId = new Map<string, Node>();
  for (const s of spans) {
    const a = safeBigInt(s.startTimeUnixNano);
    const b = safeBigInt(s.endTimeUnixNano);
    byId.set(s.spanId, {
      span: s,
      children: [],
      depth: 0,
      offsetMs: Number(a - startNs) / 1e6,
      durationMs: b > a ? Number(b - a) / 1e6 : 0,
      orphan: false,
    });
  }
  const roots: Node[] = [];
  for (const n of byId.values()) {
    const parent = n.span.parentSpanId ? byId.get(n.span.parentSpanId) : undefined;
    if (parent && parent !== n) parent.children.push(n);
    else {
      n.orphan = Boolean(n.span.parentSpanId);
      roots.push(n);
    }
  }
  let maxDepth = 0;
  const byStart = (a: Node, b: Node) => a.offsetMs - b.offsetMs;
  const visit = (n: Node, depth: number, seen: Set<Node>) => {
    seen.add(n);
    n.depth = depth;
    maxDepth = Math.max(maxDepth, depth);
    n.children.sort(byStart);
    for (const c of n.children) if (!seen.has(c)) visit(c, depth + 1, seen);
  };
  roots.sort(byStart);
  const seen = new Set<Node>();
  for (const r of roots) visit(r, 0, seen);
  const services = [...new Set(spans.map((s) => s.service))].sort();
  return {
    roots,
    byId,
    startNs: startNs < 0n ? 0n : startNs,
    totalMs: endNs > startNs ? Number(endNs - startNs) / 1e6 : 0,
    maxDepth,
    services,
    errors: spans.filter((s) => s.status.code === 2).length,
  };
}

function flatten(roots: Node[], collapsed: Set<string>): Node[] {
  const out: Node[] = [];
  const stack = [...roots].reverse();
  const seen = new Set<Node>();
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    out.push(n);
    if (!collapsed.has(n.span.spanId)) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

export function TraceView({ traceId, route }: { traceId: string; route: Route }) {
  // Spans of a trace still arriving: every change notice for it loads the trace again.
  const version = useWatch('traces', `traceId=${encodeURIComponent(traceId)}`);
  const [loaded, setLoaded] = useState<{ traceId: string; spans: Span[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const selectedId = route.query.get('span') ?? '';

  useEffect(() => {
    setLoaded(null);
    setError(null);
    setCollapsed(new Set());
  }, [traceId]);

  useEffect(() => {
    let current = true;
    api
      .trace(traceId)
      .then((t) => {
        if (!current) return;
        setLoaded({ traceId, spans: t.spans });
        setError(null);
        // A prefix found its trace: the URL names the whole id from now on.
        if (t.traceId !== traceId) navigate(`/traces/${t.traceId}${location.search}`, { replace: true });
      })
      .catch((e: Error) => {
        if (!current) return;
        setLoaded({ traceId, spans: [] });
        setError(e instanceof ApiError && e.status === 404 ? null : e.message);
      });
    return () => {
      current = false;
    };
  }, [traceId, version]);

  const spans = useMemo(() => (loaded?.traceId === traceId ? loaded.spans : []), [loaded, traceId]);
  const tree = useMemo(() => buildTree(spans), [spans]);
  const rows = useMemo(() => flatten(tree.roots, collapsed), [tree, collapsed]);
  const selected = tree.byId.get(selectedId);
  const selectedRow = rows.findIndex((n) => n.span.spanId === selectedId);

  const select = (spanId: string | undefined) => setQueryParam('span', spanId);
  const toggle = (spanId: string, open?: boolean) =>
    setCollapsed((prev) => {
      const next = new Set(prev);
      const isOpen = !next.has(spanId);
      if (open ?? !isOpen) next.delete(spanId);
      else next.add(spanId);
      return next;
    });

  useKeys((e) => {
    if (e.key === 'Escape') {
      if (selectedId) select(undefined);
      else navigate('/traces');
    } else if (e.key === 'ArrowDown' || e.key === 'j') {
      const n = rows[Math.min(rows.length - 1, selectedRow + 1)];
      if (n) select(n.span.spanId);
    } else if (e.key === 'ArrowUp' || e.key === 'k') {
      const n = rows[Math.max(0, selectedRow - 1)];
      if (n) select(n.span.spanId);
    } else if ((e.key === 'ArrowLeft' || e.key === 'h') && selected) toggle(selected.span.spanId, false);
    else if ((e.key === 'ArrowRight' || e.key === 'l') && selected) toggle(selected.span.spanId, true);
    else return;
    e.preventDefault();
  });

  if (spans.length === 0) {
    return (
      <div className="view">
        <TraceBreadcrumb traceId={traceId} />
        <Empty>
          {error
            ? `Could not load the trace: ${error}`
            : loaded
              ? 'No stored span has this trace id. Its spans show here as soon as they arrive.'
              : 'Loading…'}
        </Empty>
      </div>
    );
  }

  const root = tree.roots[0]?.span;
  const ticks = [0, 0.25, 0.5, 0.75, 1];

  return (
    <div className="view">
      <TraceBreadcrumb traceId={traceId} />
      <div className="trace-header">
        <h2>
          <span className="svc-dot" style={{ background: serviceColor(root?.service ?? '') }} />
          {root?.service}: {root?.name}
        </h2>
        <div className="facts">
          <Fact label="Start">{formatTime(Number(tree.startNs / 1000n) / 1000)}</Fact>
          <Fact label="Duration">{formatDuration(tree.totalMs)}</Fact>
          <Fact label="Services">{tree.services.length}</Fact>
          <Fact label="Spans">{spans.length}</Fact>
          <Fact label="Depth">{tree.maxDepth + 1}</Fact>
          <Fact label="Errors">
            {tree.errors ? <span className="badge error">{tree.errors}</span> : <span className="muted">0</span>}
          </Fact>
          <Fact label="Trace ID">
            <span className="mono">{traceId}</span> <CopyButton text={traceId} />
          </Fact>
          <Link className="btn small" to={`/logs?trace=${traceId}`}>
            Logs of this trace
          </Link>
          <button type="button" className="btn small" onClick={() => setCollapsed(new Set())}>
            Expand all
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() =>
              setCollapsed(new Set([...tree.byId.values()].filter((n) => n.children.length).map((n) => n.span.spanId)))
            }
          >
            Collapse all
          </button>
        </div>
        <div className="legend">
          {tree.services.map((s) => (
            <span key={s} className="legend-item">
              <span className="svc-dot" style={{ background: serviceColor(s) }} />
              {s}
            </span>
          ))}
        </div>
      </div>
      <div className={`split ${selected ? 'with-panel' : ''}`}>
        <div className="waterfall">
          <div className="wf-row wf-head">
            <div className="wf-label th">Service &amp; operation</div>
            <div className="wf-time">
              {ticks.map((t) => (
                <span key={t} className="tick" style={{ left: `${t * 100}%` }}>
                  {formatDuration(tree.totalMs * t)}
                </span>
              ))}
            </div>
          </div>
          <VirtualList
            count={rows.length}
            rowHeight={ROW_HEIGHT}
            focusIndex={selectedRow}
            label="Spans"
            renderRow={(i) => (
              <SpanRow
                node={rows[i]}
                totalMs={tree.totalMs}
                selected={rows[i].span.spanId === selectedId}
                collapsed={collapsed.has(rows[i].span.spanId)}
                onSelect={() => select(rows[i].span.spanId === selectedId ? undefined : rows[i].span.spanId)}
                onToggle={() => toggle(rows[i].span.spanId)}
              />
            )}
          />
        </div>
        {selected && <SpanPanel node={selected} tree={tree} onClose={() => select(undefined)} />}
      </div>
    </div>
  );
}

function TraceBreadcrumb({ traceId }: { traceId: string }) {
  return (
    <div className="toolbar">
      <Link className="btn small" to="/traces">
        ← Traces
      </Link>
      <span className="muted mono">{traceId}</span>
    </div>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <span className="fact">
      <span className="fact-label">{label}</span>
      {children}
    </span>
  );
}

function SpanRow({
  node,
  totalMs,
  selected,
  collapsed,
  onSelect,
  onToggle,
}: {
  node: Node;
  totalMs: number;
  selected: boolean;
  collapsed: boolean;
  onSelect: () => void;
  onToggle: () => void;
}) {
  const s = node.span;
  const color = serviceColor(s.service);
  const left = totalMs > 0 ? (node.offsetMs / totalMs) * 100 : 0;
  const width = totalMs > 0 ? (node.durationMs / totalMs) * 100 : 100;
  const isError = s.status.code === 2;
  const labelRight = left + width < 78;
  const labelInside = !labelRight && width > 12;
  return (
    <div
      className={`wf-row span-row ${selected ? 'selected' : ''} ${isError ? 'is-error' : ''}`}
      onClick={onSelect}
      data-span-id={s.spanId}
    >
      <div className="wf-label" style={{ paddingLeft: 6 + node.depth * 14 }}>
        {node.children.length > 0 ? (
          <button
            type="button"
            className="toggle"
            aria-label={collapsed ? 'Expand' : 'Collapse'}
            onClick={(e) => {
              e.stopPropagation();
              onToggle();
            }}
          >
            {collapsed ? '▸' : '▾'}
            {collapsed && <span className="small muted">{node.children.length}</span>}
          </button>
        ) : (
          <span className="toggle-spacer" />
        )}
        <span className="svc-bar" style={{ background: color }} />
        <span className="svc-name">{s.service}</span>
        <span className="span-name" title={s.name}>
          {s.name}
        </span>
        {isError && <span className="err-icon" title="Status: error">!</span>}
        {node.orphan && (
          <span className="badge warn small" title={`Parent ${s.parentSpanId} has not arrived`}>
            orphan
          </span>
        )}
      </div>
      <div className="wf-time">
        <span
          className="bar"
          style={{ left: `${left}%`, width: `max(2px, ${width}%)`, background: color }}
          title={formatDuration(node.durationMs)}
        >
          {s.events.map((ev, i) => {
            const at = nsToMs(ev.timeUnixNano) - nsToMs(s.startTimeUnixNano);
            const pos = node.durationMs > 0 ? Math.min(100, Math.max(0, (at / node.durationMs) * 100)) : 0;
            return <span key={i} className="event-tick" style={{ left: `${pos}%` }} title={ev.name} />;
          })}
        </span>
        <span
          className={`bar-label ${labelInside ? 'inside' : ''}`}
          style={
            labelRight
              ? { left: `calc(${left + width}% + 4px)` }
              : labelInside
                ? { left: `calc(${left}% + 6px)` }
                : { right: `calc(${100 - left}% + 4px)` }
          }
        >
          {formatDuration(node.durationMs)}
        </span>
      </div>
    </div>
  );
}

function SpanPanel({ node, tree, onClose }: { node: Node; tree: Tree; onClose: () => void }) {
  const s = node.span;
  const startMs = nsToMs(s.startTimeUnixNano);
  return (
    <aside className="panel" aria-label="Span details">
      <div className="panel-head">
        <div>
          <div className="panel-title">{s.name}</div>
          <div className="small">
            <span className="svc-dot" style={{ background: serviceColor(s.service) }} />
            {s.service}
          </div>
        </div>
        <button type="button" className="btn small" onClick={onClose} aria-label="Close details">
          ✕
        </button>
      </div>
      <div className="panel-body">
        <table className="kv">
          <tbody>
            <KvRow label="Status">
              <span className={`badge ${s.status.code === 2 ? 'error' : s.status.code === 1 ? 'ok' : ''}`}>
                {STATUS_CODES[s.status.code] ?? s.status.code}
              </span>{' '}
              {s.status.message}
            </KvRow>
            <KvRow label="Kind">{SPAN_KINDS[s.kind] ?? s.kind}</KvRow>
            <KvRow label="Duration">{formatDuration(node.durationMs)}</KvRow>
            <KvRow label="Start">
              +{formatDuration(node.offsetMs)} <span className="muted">({formatTime(startMs)})</span>
            </KvRow>
            <KvRow label="Span ID" mono>{s.spanId}</KvRow>
            <KvRow label="Parent ID" mono>
              {s.parentSpanId ? (
                tree.byId.has(s.parentSpanId) ? (
                  <Link to={`/traces/${s.traceId}?span=${s.parentSpanId}`}>{s.parentSpanId}</Link>
                ) : (
                  <>
                    {s.parentSpanId} <span className="muted">(not received)</span>
                  </>
                )
              ) : (
                <span className="muted">root</span>
              )}
            </KvRow>
            {s.traceState && (
              <KvRow label="Trace state" mono>{s.traceState}</KvRow>
            )}
            <KvRow label="Flags">{s.flags}</KvRow>
            <KvRow label="Request">
              <Link to={`/requests/${s.requestId}`}>{s.requestId}</Link>
            </KvRow>
          </tbody>
        </table>
        <Section title="Attributes" count={Object.keys(s.attributes).length}>
          <AttrTable attrs={s.attributes} />
          {s.droppedAttributesCount > 0 && (
            <div className="muted small">{s.droppedAttributesCount} attributes dropped by the sender</div>
          )}
        </Section>
        <Section title="Events" count={s.events.length}>
          {s.events.length === 0 && <div className="muted small">none</div>}
          {s.events.map((ev, i) => (
            <div key={i} className="event">
              <div>
                <span className="muted mono">+{formatDuration(nsToMs(ev.timeUnixNano) - startMs)}</span>{' '}
                <span className="strong">{ev.name}</span>
              </div>
              <AttrTable attrs={ev.attributes} empty="" />
            </div>
          ))}
        </Section>
        <Section title="Links" count={s.links.length}>
          {s.links.length === 0 && <div className="muted small">none</div>}
          {s.links.map((l, i) => (
            <div key={i} className="event">
              <Link className="mono" to={`/traces/${l.traceId}?span=${l.spanId}`}>
                {l.traceId} / {l.spanId}
              </Link>
              <AttrTable attrs={l.attributes} empty="" />
            </div>
          ))}
        </Section>
        <Section title="Resource" count={Object.keys(s.resource).length}>
          <AttrTable attrs={s.resource} />
        </Section>
        <Section title="Scope">
          <div className="mono small">
            {s.scope.name || <span className="muted">(unnamed)</span>} {s.scope.version}
          </div>
        </Section>
      </div>
    </aside>
  );
}
