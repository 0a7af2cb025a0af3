import { markBidi } from '../text';
import { useCallback, useMemo, useState, type ClipboardEvent, type KeyboardEvent } from 'react';
import { useWatch } from '../live';
import { Link, navigate, setQueryParam, type Route } from '../router';
import { formatDuration, formatTime, nsToMs, shortId } from '../format';
import type { TraceSummary } from '../generated/api';
import { VirtualList } from '../components/VirtualList';
import { usePagedList } from '../components/usePagedList';
import { ServiceSelect } from '../components/ServiceSelect';
import { FilterInput, ListEmpty, Toolbar, Total } from '../components/Toolbar';
import { useListKeys } from '../keys';
import { ServiceDot, serviceAttrs } from '../components/Service';
import { TimeRange } from '../components/TimeRange';
import { attrQuery } from '../components/attrFilter';
import { OperationSelect } from '../components/OperationSelect';
import { DurationScatter } from '../components/DurationScatter';

const ROW_HEIGHT = 30;

type SortKey = 'start' | 'duration' | 'spans';

/** A full trace id, or a prefix long enough for the server to resolve (GET /api/traces/:traceId). */
const TRACE_ID = /^[0-9a-f]{8,32}$/i;

/** The URL's filters as the server's query: `/traces?name=GET&attr=http.route` → `nameContains=GET&attr.http.route=`. */
function traceQuery(q: URLSearchParams): string {
  const params = new URLSearchParams();
  const service = q.get('service');
  if (service) params.set('service', service);
  const name = q.get('name')?.trim();
  if (name) params.set('nameContains', name);
  const op = q.get('op');
  if (op) params.set('name', op);
  attrQuery(q.get('attr'), params);
  if (q.get('errors') === '1') params.set('error', 'true');
  const min = q.get('min')?.trim();
  if (min) params.set('minDurationMs', min);
  const max = q.get('max')?.trim();
  if (max) params.set('maxDurationMs', max);
  for (const k of ['from', 'to']) if (q.get(k)) params.set(k, q.get(k)!);
  params.set('sort', (q.get('sort') as SortKey) || 'start');
  return params.toString();
}

export function Traces({ route }: { route: Route }) {
  const q = route.query;
  const sort = (q.get('sort') as SortKey) || 'start';
  const query = traceQuery(q);
  const version = useWatch('traces', query);
  const list = usePagedList('traces', query, version);
  const traces = list.items;
  const filtered = ['service', 'op', 'name', 'attr', 'errors', 'min', 'max', 'from', 'to'].some((k) => q.get(k));
  const [selected, setSelected] = useState(-1);

  const maxDuration = useMemo(() => traces.reduce((m, t) => Math.max(m, durationMs(t)), 0), [traces]);
  const itemKey = useCallback((i: number) => traces[i]?.traceId, [traces]);
  const open = (i: number) => traces[i] && navigate(`/traces/${traces[i].traceId}`);
  const cur = Math.min(selected, traces.length - 1);
  useListKeys({ count: traces.length, selected: cur, setSelected, open });

  const sortHeader = (key: SortKey, label: string, className: string) => (
    <button type="button" className={`th sortable ${className} ${sort === key ? 'sorted' : ''}`} onClick={() => setQueryParam('sort', key === 'start' ? undefined : key)}>
      {label}
      {sort === key ? ' ↓' : ''}
    </button>
  );

  return (
    <div className="view">
      <Toolbar right={<Total total={list.total} noun="traces" />}>
        <TraceIdSearch />
        <ServiceSelect value={q.get('service') ?? ''} what="spans" />
        {q.get('service') && <OperationSelect service={q.get('service')!} value={q.get('op') ?? ''} />}
        <FilterInput param="name" label="Span name" value={q.get('name') ?? ''} placeholder="Span name contains…" />
        <FilterInput param="attr" label="Attributes (several: separated by ;)" value={q.get('attr') ?? ''} placeholder="key=value; key2=value2" width={220} />
        <FilterInput param="min" label="Minimum duration (ms)" value={q.get('min') ?? ''} placeholder="min ms" width={86} />
        <FilterInput param="max" label="Maximum duration (ms)" value={q.get('max') ?? ''} placeholder="max ms" width={86} />
        <TimeRange from={q.get('from')} to={q.get('to')} />
        <label className="check">
          <input type="checkbox" checked={q.get('errors') === '1'} onChange={(e) => setQueryParam('errors', e.target.checked ? '1' : undefined)} />
          Errors only
        </label>
      </Toolbar>
      {traces.length > 1 && <DurationScatter traces={traces} />}
      <div className={`table traces-table ${list.loading && traces.length ? 'stale' : ''}`}>
        <div className="thead trace-grid">
          {sortHeader('start', 'Start', '')}
          <div className="th">Root span</div>
          <div className="th">Services</div>
          {sortHeader('spans', 'Spans', 'num')}
          <div className="th num">Errors</div>
          {sortHeader('duration', 'Duration', '')}
        </div>
        {list.error && traces.length > 0 && <div className="banner error">{list.error}</div>}
        {list.rowCount === 0 ? (
          <ListEmpty
            list={list}
            filtered={filtered}
            noMatch="No trace matches these filters."
            nothingStored="No traces yet. Point an OTLP exporter at this collector; traces appear here as they arrive."
          />
        ) : (
          <VirtualList
            count={list.rowCount}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            label="Traces"
            onRange={list.onRange}
            itemKey={itemKey}
            renderRow={(i) =>
              traces[i] ? <TraceRow t={traces[i]} maxDuration={maxDuration} selected={i === cur} /> : <div className="tr trace-grid placeholder">Loading…</div>
            }
          />
        )}
      </div>
    </div>
  );
}

/**
 * Goes to a trace by id: a pasted id (or prefix of at least 8 hex digits) opens at once, a typed one on
 * Enter. The trace view asks the server, which resolves a prefix to the one trace that has it.
 */
function TraceIdSearch() {
  const [text, setText] = useState('');
  const go = (value: string) => {
    const id = value.trim().toLowerCase();
    if (!TRACE_ID.test(id)) return false;
    navigate(`/traces/${id}`);
    return true;
  };
  return (
    <input
      type="search"
      className="filter mono"
      data-filter="traceId"
      aria-label="Trace ID"
      placeholder="Trace ID…"
      style={{ width: 150 }}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        if (e.target.value.trim().length === 32) go(e.target.value);
      }}
      onPaste={(e: ClipboardEvent<HTMLInputElement>) => {
        if (go(e.clipboardData.getData('text'))) e.preventDefault();
      }}
      onKeyDown={(e: KeyboardEvent<HTMLInputElement>) => {
        if (e.key === 'Enter') go(text);
        if (e.key === 'Escape') e.currentTarget.blur();
      }}
      title="A trace id, or its first 8 or more hex digits: opens that trace"
    />
  );
}

function durationMs(t: TraceSummary): number {
  return Number(t.durationNanos) / 1e6;
}

/** The root's service first, then the others by name: the server lists them in the order its spans arrived, which differs from trace to trace. */
function stableServices(t: TraceSummary): string[] {
  const rest = t.services.filter((s) => s !== t.rootService).sort((a, b) => a.localeCompare(b));
  return t.services.includes(t.rootService) ? [t.rootService, ...rest] : rest;
}

function TraceRow({ t, maxDuration, selected }: { t: TraceSummary; maxDuration: number; selected: boolean }) {
  const duration = durationMs(t);
  const services = stableServices(t);
  return (
    <Link to={`/traces/${t.traceId}`} className={`tr trace-grid ${selected ? 'selected' : ''}`} data-trace-id={t.traceId}>
      <span className="td mono muted" title={formatTime(nsToMs(t.startTimeUnixNano))}>
        {formatTime(nsToMs(t.startTimeUnixNano))}
      </span>
      <span className="td ellipsis">
        <ServiceDot service={t.rootService} />
        <span className="svc-name">{markBidi(t.rootService)}</span> <span className="strong">{markBidi(t.rootName)}</span>
        {!t.hasRoot && (
          <span className="badge warn" title="The root span has not arrived">
            no root
          </span>
        )}
        <span className="muted mono small"> {shortId(t.traceId)}</span>
      </span>
      <span className="td ellipsis">
        {services.slice(0, 4).map((s) => (
          <span key={s} className="chip" {...serviceAttrs(s)}>
            {markBidi(s)}
          </span>
        ))}
        {services.length > 4 && <span className="muted small">+{services.length - 4}</span>}
      </span>
      <span className="td num">{t.spanCount}</span>
      <span className="td num">{t.errorCount > 0 ? <span className="badge error">{t.errorCount}</span> : ''}</span>
      <span className="td duration-cell">
        <span className="dur-bar" style={{ width: `${maxDuration > 0 ? Math.max(1, (duration / maxDuration) * 100) : 0}%` }} />
        <span className="dur-text">{formatDuration(duration)}</span>
      </span>
    </Link>
  );
}
