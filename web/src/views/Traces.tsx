import { useMemo, useState } from 'react';
import { live, traceRoot, useLive, type TraceSummary } from '../live';
import { Link, navigate, setQueryParam, type Route } from '../router';
import { attrsMatch, formatDuration, formatTime, nsToMs, parseAttrFilter, serviceColor, shortId } from '../format';
import type { StoredTrace } from '../types';
import { VirtualList } from '../components/VirtualList';
import { choices, Empty, FilterInput, Select, Toolbar } from '../components/Toolbar';
import { useListKeys } from '../keys';

const ROW_HEIGHT = 30;

type SortKey = 'start' | 'duration' | 'spans';

/** A row of the list: from the spans the page holds, or from the server's summary of an older trace. */
type TraceRowData = Omit<StoredTrace, 'startTimeUnixNano' | 'endTimeUnixNano' | 'durationNanos'> & {
  startMs: number;
  endMs: number;
};

function rowOfSpans(t: TraceSummary): TraceRowData {
  const root = traceRoot(t);
  return {
    traceId: t.traceId,
    rootName: root?.name ?? '?',
    rootService: root?.service ?? '',
    hasRoot: t.root !== undefined,
    services: [...t.services],
    spanCount: t.spans.length,
    errorCount: t.errorCount,
    startMs: t.startMs,
    endMs: t.endMs,
  };
}

function rowOfStored(t: StoredTrace): TraceRowData {
  const startMs = nsToMs(t.startTimeUnixNano);
  return { ...t, startMs, endMs: startMs + Number(t.durationNanos) / 1e6 };
}

export function Traces({ route }: { route: Route }) {
  const version = useLive();
  const q = route.query;
  const service = q.get('service') ?? '';
  const name = q.get('name') ?? '';
  const attr = q.get('attr') ?? '';
  const errors = q.get('errors') === '1';
  const sort = (q.get('sort') as SortKey) || 'start';
  const [selected, setSelected] = useState(-1);

  const services = useMemo(() => {
    const set = new Set<string>();
    for (const t of live.data.traces.values()) for (const s of t.services) set.add(s);
    for (const t of live.data.storedTraces) for (const s of t.services) set.add(s);
    return [...set].sort();
  }, [version]);

  // Span name and attribute filters look into spans, which the page holds only for recent traces.
  const searchesSpans = name !== '' || attr !== '';

  const traces = useMemo(() => {
    const needle = name.toLowerCase();
    const attrFilter = parseAttrFilter(attr);
    const out: TraceRowData[] = [];
    for (const t of live.data.traces.values()) {
      if (errors && t.errorCount === 0) continue;
      if (service && !t.services.has(service)) continue;
      if (needle && !t.spans.some((s) => s.name.toLowerCase().includes(needle))) continue;
      if (attrFilter && !t.spans.some((s) => attrsMatch(s.attributes, attrFilter) || attrsMatch(s.resource, attrFilter)))
        continue;
      out.push(rowOfSpans(t));
    }
    if (!searchesSpans) {
      for (const t of live.data.storedTraces) {
        if (live.data.traces.has(t.traceId)) continue;
        if (errors && t.errorCount === 0) continue;
        if (service && !t.services.includes(service)) continue;
        out.push(rowOfStored(t));
      }
    }
    if (sort === 'duration') out.sort((a, b) => b.endMs - b.startMs - (a.endMs - a.startMs));
    else if (sort === 'spans') out.sort((a, b) => b.spanCount - a.spanCount);
    else out.sort((a, b) => b.startMs - a.startMs);
    return out;
  }, [version, service, name, attr, errors, sort, searchesSpans]);

  const unsearched = searchesSpans
    ? live.data.storedTraces.filter((t) => !live.data.traces.has(t.traceId)).length
    : 0;

  const maxDuration = useMemo(() => traces.reduce((m, t) => Math.max(m, t.endMs - t.startMs), 0), [traces]);
  const open = (i: number) => traces[i] && navigate(`/traces/${traces[i].traceId}`);
  const cur = Math.min(selected, traces.length - 1);
  useListKeys({ count: traces.length, selected: cur, setSelected, open });

  const sortHeader = (key: SortKey, label: string, className: string) => (
    <button
      type="button"
      className={`th sortable ${className} ${sort === key ? 'sorted' : ''}`}
      onClick={() => setQueryParam('sort', key === 'start' ? undefined : key)}
    >
      {label}
      {sort === key ? ' ↓' : ''}
    </button>
  );

  return (
    <div className="view">
      <Toolbar
        right={
          <span className="muted">
            {traces.length.toLocaleString('en-US')} traces
            {unsearched > 0 &&
              ` · span filters search the ${live.data.spanCount.toLocaleString('en-US')} most recent spans; ${unsearched.toLocaleString('en-US')} older traces not searched`}
          </span>
        }
      >
        <Select
          param="service"
          label="Service"
          value={service}
          options={choices('All services', services)}
        />
        <FilterInput param="name" label="Span name" value={name} placeholder="Span name contains…" />
        <FilterInput param="attr" label="Attribute" value={attr} placeholder="key=value" width={200} />
        <label className="check">
          <input
            type="checkbox"
            checked={errors}
            onChange={(e) => setQueryParam('errors', e.target.checked ? '1' : undefined)}
          />
          Errors only
        </label>
      </Toolbar>
      <div className="table traces-table">
        <div className="thead trace-grid">
          {sortHeader('start', 'Start', '')}
          <div className="th">Root span</div>
          <div className="th">Services</div>
          {sortHeader('spans', 'Spans', 'num')}
          <div className="th num">Errors</div>
          {sortHeader('duration', 'Duration', '')}
        </div>
        {traces.length === 0 ? (
          <Empty>
            {live.loading
              ? 'Loading…'
              : live.data.traces.size || live.data.storedTraces.length
                ? 'No trace matches these filters.'
                : 'No traces yet. Point an OTLP exporter at this collector; traces appear here as they arrive.'}
          </Empty>
        ) : (
          <VirtualList
            count={traces.length}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            label="Traces"
            renderRow={(i) => (
              <TraceRow t={traces[i]} maxDuration={maxDuration} selected={i === cur} />
            )}
          />
        )}
      </div>
    </div>
  );
}

function TraceRow({
  t,
  maxDuration,
  selected,
}: {
  t: TraceRowData;
  maxDuration: number;
  selected: boolean;
}) {
  const duration = t.endMs - t.startMs;
  const services = t.services;
  return (
    <Link
      to={`/traces/${t.traceId}`}
      className={`tr trace-grid ${selected ? 'selected' : ''}`}
      data-trace-id={t.traceId}
    >
      <span className="td mono muted">{formatTime(t.startMs)}</span>
      <span className="td ellipsis">
        <span className="svc-dot" style={{ background: serviceColor(t.rootService) }} />
        <span className="svc-name">{t.rootService}</span> <span className="strong">{t.rootName}</span>
        {!t.hasRoot && <span className="badge warn" title="The root span has not arrived">no root</span>}
        <span className="muted mono small"> {shortId(t.traceId)}</span>
      </span>
      <span className="td ellipsis">
        {services.slice(0, 4).map((s) => (
          <span key={s} className="chip" style={{ borderColor: serviceColor(s) }}>
            {s}
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
