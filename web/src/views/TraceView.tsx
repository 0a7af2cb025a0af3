import { markBidi } from '../text';
import { Icon } from '../components/Icon';
import { memo, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { href, Link, navigate, setQueryParam, type Route } from '../router';
import { formatDuration, formatTime, nsToMs, SPAN_KINDS, STATUS_CODES } from '../format';
import { AttrTable, CopyButton, KvRow, Section } from '../components/AttrTable';
import { VirtualList } from '../components/VirtualList';
import { Empty } from '../components/Toolbar';
import { ServiceDot, ServiceLegend, serviceAttrs } from '../components/Service';
import { Minimap, place, TimeAxis, WHOLE, type Span01 } from '../components/Timeline';
import { buildTree, download, findSpans, searchText, spanTitle, traceAsOtlp, visibleRows, type Node, type Tree } from '../components/traceTree';
import { useTrace } from '../components/useTrace';
import { FlameGraph } from '../components/FlameGraph';
import { flagsText } from '../components/flags';
import { criticalPath } from '../components/traceStats';
import { TraceStats } from '../components/TraceStats';
import { GenAiConversation } from '../components/GenAi';
import { useKeys } from '../keys';
import type { Span, TraceSummary } from '../generated/api';
import { api } from '../api';
import { TraceCompare } from './TraceCompare';

const ROW_HEIGHT = 26;

/** The kinds a waterfall row names (by SpanKind number): a client call and the server span it caused, both "POST", differ here. */
const KIND_TAGS: Record<number, string> = { 2: 'server', 3: 'client', 4: 'producer', 5: 'consumer' };

export function TraceView({ traceId, route }: { traceId: string; route: Route }) {
  const compare = route.query.get('compare');
  if (compare) return <TraceCompare a={traceId} b={compare} />;
  return <OneTrace traceId={traceId} route={route} />;
}

function OneTrace({ traceId, route }: { traceId: string; route: Route }) {
  const { spans, loaded, error } = useTrace(traceId);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const [win, setWin] = useState<Span01>(WHOLE);
  const [find, setFind] = useState('');
  const [findAt, setFindAt] = useState(0);
  const [focusId, setFocusId] = useState('');
  const selectedId = route.query.get('span') ?? '';
  const view = route.query.get('view');
  const mode = view === 'flame' || view === 'stats' ? view : 'waterfall';

  useEffect(() => {
    setCollapsed(new Set());
    setWin(WHOLE);
    setFind('');
  }, [traceId]);

  const tree = useMemo(() => buildTree(spans), [spans]);
  const critical = useMemo(() => criticalPath(tree), [tree]);
  const rows = useMemo(() => visibleRows(tree, collapsed), [tree, collapsed]);
  const finding = find !== '';
  const texts = useMemo(() => (finding ? tree.ordered.map((n) => searchText(n.span)) : []), [tree, finding]);
  const matches = useMemo(() => findSpans(tree, texts, find), [tree, texts, find]);
  const matchSet = useMemo(() => new Set(matches.map((n) => n.span.spanId)), [matches]);
  const current = matches.length ? matches[Math.min(findAt, matches.length - 1)] : undefined;
  const selected = tree.byId.get(selectedId);
  const rowIndex = useMemo(() => new Map(rows.map((n, i) => [n.span.spanId, i])), [rows]);
  const selectedRow = rowIndex.get(selectedId) ?? -1;

  // Stable, so that a waterfall row (memo) is drawn again only when what it shows changes, not on every scroll.
  const select = useCallback((spanId: string | undefined) => {
    setFocusId(spanId ?? '');
    setQueryParam('span', spanId);
  }, []);
  const toggle = useCallback(
    (spanId: string, open?: boolean) =>
      setCollapsed((prev) => {
        const next = new Set(prev);
        const isOpen = !next.has(spanId);
        if (open ?? !isOpen) next.delete(spanId);
        else next.add(spanId);
        return next;
      }),
    [],
  );

  /** Shows the match `i` (wrapping around): unfolds its ancestors and scrolls it into view. */
  const showMatch = (i: number) => {
    if (!matches.length) return;
    const at = (i + matches.length) % matches.length;
    const node = matches[at];
    setFindAt(at);
    setFocusId(node.span.spanId);
    setCollapsed((prev) => {
      let next = prev;
      for (let p = node.parent; p; p = p.parent)
        if (next.has(p.span.spanId)) {
          if (next === prev) next = new Set(prev);
          next.delete(p.span.spanId);
        }
      return next;
    });
  };

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
          {error ? `Could not load the trace: ${error}` : loaded ? 'No stored span has this trace id. Its spans show here as soon as they arrive.' : 'Loading…'}
        </Empty>
      </div>
    );
  }

  const root = tree.roots[0]?.span;
  const focusRow = rowIndex.get(focusId) ?? selectedRow;
  const viewLink = (view: string | undefined) => href(route.path, { ...Object.fromEntries(route.query), view });

  return (
    <div className="view">
      <TraceBreadcrumb traceId={traceId}>
        <div className="segmented" aria-label="Trace view">
          <Link className={mode === 'waterfall' ? 'on' : ''} to={viewLink(undefined)}>
            Waterfall
          </Link>
          <Link className={mode === 'flame' ? 'on' : ''} to={viewLink('flame')} data-view="flame">
            Flame graph
          </Link>
          <Link className={mode === 'stats' ? 'on' : ''} to={viewLink('stats')} data-view="stats">
            Statistics
          </Link>
        </div>
        <FindInTrace
          text={find}
          setText={(t) => {
            setFind(t);
            setFindAt(0);
          }}
          count={matches.length}
          at={current ? Math.min(findAt, matches.length - 1) : -1}
          step={(d) => showMatch(findAt + d)}
        />
        <div className="spacer" />
        <CompareWith traceId={traceId} rootName={root?.name ?? ''} rootService={root?.service ?? ''} />
        <DownloadTrace traceId={traceId} spans={spans} />
      </TraceBreadcrumb>
      <div className="trace-header">
        <h2>
          <ServiceDot service={root?.service ?? ''} />
          {markBidi(root?.service ?? '')}: {markBidi(root?.name ?? '')}
        </h2>
        <div className="facts">
          <Fact label="Start">{formatTime(Number(tree.startNs / 1000n) / 1000)}</Fact>
          <Fact label="Duration">{formatDuration(tree.totalMs)}</Fact>
          <Fact label="Services">{tree.services.length}</Fact>
          <Fact label="Spans">{spans.length}</Fact>
          <Fact label="Depth">{tree.maxDepth + 1}</Fact>
          <Fact label="Errors">{tree.errors ? <span className="badge error">{tree.errors}</span> : <span className="muted">0</span>}</Fact>
          <Fact label="Trace ID">
            <span className="mono">{traceId}</span> <CopyButton text={traceId} />
          </Fact>
          <Link className="btn small" to={`/logs?trace=${traceId}`}>
            Logs of this trace
          </Link>
          {mode === 'waterfall' && (
            <>
              <button type="button" className="btn small" onClick={() => setCollapsed(new Set())}>
                Expand all
              </button>
              <button type="button" className="btn small" onClick={() => setCollapsed(new Set(tree.ordered.filter((n) => n.children.length).map((n) => n.span.spanId)))}>
                Collapse all
              </button>
            </>
          )}
          {(win.a > 0 || win.b < 1) && (
            <button type="button" className="btn small" onClick={() => setWin(WHOLE)} data-action="reset-zoom">
              Show all {formatDuration(tree.totalMs)}
            </button>
          )}
        </div>
        <ServiceLegend services={tree.services} />
      </div>
      <div className={`split ${selected ? 'with-panel' : ''}`}>
        <div className="waterfall">
          {mode !== 'stats' && (
            <div className={`wf-row wf-minimap ${mode}`}>
              {mode === 'waterfall' && <div className="wf-label muted small">Drag on the timeline to zoom · double-click to reset</div>}
              <div className="wf-time-frame">
                <Minimap tree={tree} win={win} setWin={setWin} />
              </div>
            </div>
          )}
          {mode === 'stats' ? (
            <TraceStats tree={tree} />
          ) : mode === 'flame' ? (
            <FlameGraph
              tree={tree}
              win={win}
              setWin={setWin}
              selectedId={selectedId}
              matches={matchSet}
              current={current?.span.spanId}
              onSelect={(id) => select(id === selectedId ? undefined : id)}
            />
          ) : (
            <>
              <div className="wf-row wf-head">
                <div className="wf-label th">
                  Service &amp; operation
                  <span className="cp-legend" />
                  <span className="muted small">critical path</span>
                </div>
                <TimeAxis totalMs={tree.totalMs} win={win} setWin={setWin} />
              </div>
              <VirtualList
                count={rows.length}
                rowHeight={ROW_HEIGHT}
                focusIndex={focusRow}
                label="Spans"
                renderRow={(i) => (
                  <SpanRow
                    node={rows[i]}
                    totalMs={tree.totalMs}
                    win={win}
                    selected={rows[i].span.spanId === selectedId}
                    critical={critical.has(rows[i].span.spanId)}
                    match={matchSet.has(rows[i].span.spanId) ? (rows[i] === current ? 'current' : 'match') : undefined}
                    collapsed={collapsed.has(rows[i].span.spanId)}
                    onSelect={select}
                    onToggle={toggle}
                  />
                )}
              />
            </>
          )}
        </div>
        {selected && <SpanPanel node={selected} tree={tree} onClose={() => select(undefined)} />}
      </div>
    </div>
  );
}

/**
 * Find in trace: every span whose name, service, id, status, attribute or event contains the text is
 * highlighted; Enter goes to the next, Shift+Enter to the previous.
 */
function FindInTrace({ text, setText, count, at, step }: { text: string; setText: (t: string) => void; count: number; at: number; step: (d: number) => void }) {
  return (
    <span className="find">
      <input
        type="search"
        className="filter"
        aria-label="Find in trace"
        data-filter="find"
        placeholder="Find in trace…"
        value={text}
        style={{ width: 200 }}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            step(e.shiftKey ? -1 : 1);
          }
          if (e.key === 'Escape') e.currentTarget.blur();
        }}
      />
      {text && (
        <span className="muted small find-count" data-matches={count}>
          {count ? `${at + 1} of ${count}` : 'no match'}
        </span>
      )}
      <button type="button" className="btn small" disabled={!count} onClick={() => step(-1)} aria-label="Previous match (Shift+Enter)">
        <Icon name="up" />
      </button>
      <button type="button" className="btn small" disabled={!count} onClick={() => step(1)} aria-label="Next match (Enter)">
        <Icon name="down" />
      </button>
    </span>
  );
}

const HEX_ID = /^[0-9a-f]{8,32}$/i;
/** Traces offered to compare with: the latest of the same root. */
const PEERS = 20;

/** Opens this trace side by side with another one: picked from the latest traces of the same root, or named by its id or an 8+ digit prefix. */
function CompareWith({ traceId, rootName, rootService }: { traceId: string; rootName: string; rootService: string }) {
  const [other, setOther] = useState('');
  const [peers, setPeers] = useState<TraceSummary[]>([]);
  useEffect(() => {
    let current = true;
    const query = new URLSearchParams({ rootName, ...(rootService ? { service: rootService } : {}) }).toString();
    api
      .list('traces', query, PEERS + 1)
      .then((page) => current && setPeers(page.items.filter((t) => t.traceId !== traceId).slice(0, PEERS)))
      .catch(() => current && setPeers([]));
    return () => {
      current = false;
    };
  }, [traceId, rootName, rootService]);
  const go = (value: string) => {
    const id = value.trim().toLowerCase();
    if (HEX_ID.test(id)) navigate(href(`/traces/${traceId}`, { compare: id }));
  };
  return (
    <span className="find">
      <select
        className="filter"
        aria-label="Compare with a trace of the same root"
        title={`The latest traces of ${rootName}`}
        value=""
        style={{ width: 170 }}
        onChange={(e) => go(e.target.value)}
        disabled={peers.length === 0}
      >
        <option value="">{peers.length ? `Compare with… (${peers.length})` : 'Nothing to compare'}</option>
        {peers.map((t) => (
          <option key={t.traceId} value={t.traceId} data-trace-id={t.traceId}>
            {t.traceId.slice(0, 8)} · {formatDuration(Number(t.durationNanos) / 1e6)} · {t.spanCount} spans{t.errorCount ? ` · ${t.errorCount} errors` : ''} ·{' '}
            {formatTime(Number(BigInt(t.startTimeUnixNano) / 1_000_000n))}
          </option>
        ))}
      </select>
      <input
        type="search"
        className="filter mono"
        aria-label="Compare with trace"
        placeholder="or a trace ID…"
        value={other}
        style={{ width: 120 }}
        onChange={(e) => setOther(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && go(other)}
      />
      <button type="button" className="btn small" onClick={() => go(other)} disabled={!HEX_ID.test(other.trim())}>
        Compare
      </button>
    </span>
  );
}

function DownloadTrace({ traceId, spans }: { traceId: string; spans: Span[] }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="btn small"
      disabled={busy}
      title="The trace as one OTLP/JSON export request: POST it to any /v1/traces"
      onClick={() => {
        setBusy(true);
        traceAsOtlp(traceId, spans)
          .then((body) => download(`trace-${traceId}.json`, JSON.stringify(body, null, 2)))
          .finally(() => setBusy(false));
      }}
    >
      <Icon name="download" /> OTLP/JSON
    </button>
  );
}

function TraceBreadcrumb({ traceId, children }: { traceId: string; children?: ReactNode }) {
  return (
    <div className="toolbar">
      <Link className="btn small" to="/traces">
        ← Traces
      </Link>
      <span className="muted mono">{traceId}</span>
      {children}
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

const SpanRow = memo(function SpanRow({
  node,
  totalMs,
  win,
  selected,
  critical,
  match,
  collapsed,
  onSelect,
  onToggle,
}: {
  node: Node;
  totalMs: number;
  win: Span01;
  selected: boolean;
  critical: boolean;
  match?: 'match' | 'current';
  collapsed: boolean;
  onSelect: (spanId: string | undefined) => void;
  onToggle: (spanId: string) => void;
}) {
  const s = node.span;
  const { left, width } = place(node.offsetMs, node.durationMs, totalMs, win);
  const isError = s.status.code === 2;
  const labelRight = left + width < 78;
  const labelInside = !labelRight && width > 12 && left >= 0;
  const service = serviceAttrs(s.service);
  return (
    <div
      className={`wf-row span-row ${selected ? 'selected' : ''} ${isError ? 'is-error' : ''} ${critical ? 'critical' : ''} ${match ? `find-${match}` : ''}`}
      onClick={() => onSelect(selected ? undefined : s.spanId)}
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
              onToggle(s.spanId);
            }}
          >
            <Icon name={collapsed ? 'right' : 'open'} />
            {collapsed && <span className="small muted">{node.children.length}</span>}
          </button>
        ) : (
          <span className="toggle-spacer" />
        )}
        <span className="svc-bar" {...service} />
        <span className="svc-name">{markBidi(s.service)}</span>
        <span className="span-name" title={s.name}>
          {markBidi(s.name)}
        </span>
        {KIND_TAGS[s.kind] && (
          <span className={`kind-tag kind-${KIND_TAGS[s.kind]}`} data-kind={KIND_TAGS[s.kind]} title={`Span kind: ${KIND_TAGS[s.kind]}`}>
            {KIND_TAGS[s.kind]}
          </span>
        )}
        {isError && (
          <span className="err-icon" title="Status: error">
            !
          </span>
        )}
        {node.orphan && (
          <span className="badge warn small" title={`Parent ${s.parentSpanId} has not arrived`}>
            orphan
          </span>
        )}
      </div>
      <div className="wf-time">
        {left < 100 && left + width > 0 && (
          <span
            className="bar"
            data-service={service['data-service']}
            style={{ ...service.style, left: `${left}%`, width: `max(2px, ${width}%)` }}
            title={`${spanTitle(s, node.durationMs)}${critical ? ' · on the critical path' : ''}`}
          >
            {s.events.map((ev, i) => {
              const at = nsToMs(ev.timeUnixNano) - nsToMs(s.startTimeUnixNano);
              const pos = node.durationMs > 0 ? Math.min(100, Math.max(0, (at / node.durationMs) * 100)) : 0;
              return <span key={i} className="event-tick" style={{ left: `${pos}%` }} title={ev.name} />;
            })}
          </span>
        )}
        <span
          className={`bar-label ${labelInside ? 'inside' : ''}`}
          style={
            labelRight
              ? { left: `calc(${Math.max(0, left + width)}% + 4px)` }
              : labelInside
                ? { left: `calc(${left}% + 6px)` }
                : { right: `calc(${Math.max(0, 100 - left)}% + 4px)` }
          }
        >
          {formatDuration(node.durationMs)}
        </span>
      </div>
    </div>
  );
});

function SpanPanel({ node, tree, onClose }: { node: Node; tree: Tree; onClose: () => void }) {
  const s = node.span;
  const startMs = nsToMs(s.startTimeUnixNano);
  const body = useRef<HTMLDivElement>(null);
  useEffect(() => {
    body.current?.scrollTo(0, 0);
  }, [s.spanId]);
  return (
    <aside className="panel" aria-label="Span details">
      <div className="panel-head">
        <div>
          <div className="panel-title">{markBidi(s.name)}</div>
          <div className="small">
            <ServiceDot service={s.service} />
            {markBidi(s.service)}
          </div>
        </div>
        <button type="button" className="btn small" onClick={onClose} aria-label="Close details">
          <Icon name="close" />
        </button>
      </div>
      <div className="panel-body" ref={body}>
        <div className="section-actions">
          <Link className="btn small" to={href('/logs', { trace: s.traceId, span: s.spanId })} data-action="span-logs">
            Logs of this span
          </Link>
        </div>
        <table className="kv">
          <tbody>
            <KvRow label="Status">
              <span className={`badge ${s.status.code === 2 ? 'error' : s.status.code === 1 ? 'ok' : ''}`}>{STATUS_CODES[s.status.code] ?? s.status.code}</span>{' '}
              {s.status.message}
            </KvRow>
            <KvRow label="Kind">{SPAN_KINDS[s.kind] ?? s.kind}</KvRow>
            <KvRow label="Duration">{formatDuration(node.durationMs)}</KvRow>
            <KvRow label="Start">
              +{formatDuration(node.offsetMs)} <span className="muted">({formatTime(startMs)})</span>
            </KvRow>
            <KvRow label="Span ID" mono>
              {s.spanId}
            </KvRow>
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
              <KvRow label="Trace state" mono>
                {s.traceState}
              </KvRow>
            )}
            <KvRow label="Flags">
              <span data-flags={s.flags} title={`flags = ${s.flags} (0x${s.flags.toString(16)})`}>
                {flagsText(s.flags, 'span')}
              </span>
            </KvRow>
            <KvRow label="Request">
              <Link to={`/requests/${s.requestId}`}>{s.requestId}</Link>
            </KvRow>
          </tbody>
        </table>
        <GenAiConversation span={s} />
        <Section title="Attributes" count={Object.keys(s.attributes).length}>
          <AttrTable attrs={s.attributes} />
          {s.droppedAttributesCount > 0 && <div className="muted small">{s.droppedAttributesCount} attributes dropped by the sender</div>}
        </Section>
        <Section title="Events" count={s.events.length}>
          {s.events.length === 0 && <div className="muted small">none</div>}
          {s.events.map((ev, i) => (
            <div key={i} className="event">
              <div>
                <span className="muted mono">+{formatDuration(nsToMs(ev.timeUnixNano) - startMs)}</span> <span className="strong">{markBidi(ev.name)}</span>
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
