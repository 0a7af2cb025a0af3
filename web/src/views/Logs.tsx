import { useCallback, useState } from 'react';
import { useWatch } from '../live';
import { Link, setQueryParam, type Route } from '../router';
import {
  formatTime,
  formatValue,
  logTime,
  nsToMs,
  serviceColor,
  severityClass,
  severityLabel,
  SEVERITY_LEVELS,
  shortId,
} from '../format';
import { VirtualList } from '../components/VirtualList';
import { usePagedList } from '../components/usePagedList';
import { ServiceSelect } from '../components/ServiceSelect';
import { AttrTable, KvRow, Section } from '../components/AttrTable';
import { FilterInput, ListEmpty, Select, Toolbar, Total } from '../components/Toolbar';
import { useListKeys } from '../keys';
import type { LogRecord } from '../types';

const ROW_HEIGHT = 26;

/** The URL's filters (`/logs?q=text&trace=<id>&service=…&severity=17`) as the server's query. */
function logFilters(q: URLSearchParams): string {
  const params = new URLSearchParams();
  const severity = Number(q.get('severity') ?? 0) || 0;
  if (severity) params.set('severity', String(severity));
  const service = q.get('service');
  if (service) params.set('service', service);
  const body = q.get('q');
  if (body) params.set('body', body);
  const trace = q.get('trace')?.trim();
  if (trace) params.set('traceId', trace);
  return params.toString();
}

/** Log records carry no id of their own; these fields tell apart the records of one list. */
function logKey(l: LogRecord): string {
  return `${l.requestId}/${l.observedTimeUnixNano}/${l.timeUnixNano}/${l.spanId}/${l.severityNumber}`;
}

export function Logs({ route }: { route: Route }) {
  const q = route.query;
  const minSeverity = Number(q.get('severity') ?? 0) || 0;
  const trace = q.get('trace') ?? '';
  const filters = logFilters(q);
  // Newest first by the records' own time: exporters batch, so arrival order interleaves services.
  const query = filters ? `${filters}&sort=time` : 'sort=time';
  const version = useWatch('logs', query);
  const list = usePagedList('logs', query, version);
  const logs = list.items;
  const [selected, setSelected] = useState(-1);
  const [expanded, setExpanded] = useState<string | null>(null);

  const itemKey = useCallback((i: number) => (logs[i] ? logKey(logs[i]) : undefined), [logs]);
  const expandedIndex = expanded === null ? -1 : logs.findIndex((l) => logKey(l) === expanded);
  const cur = Math.min(selected, logs.length - 1);
  const toggle = (i: number) => {
    const key = logs[i] && logKey(logs[i]);
    setExpanded((e) => (e === key ? null : key));
  };
  useListKeys({ count: logs.length, selected: cur, setSelected, open: toggle });

  return (
    <div className="view">
      <Toolbar right={<Total total={list.total} noun="records" />}>
        <Select
          param="severity"
          label="Minimum severity"
          value={String(minSeverity || '')}
          options={SEVERITY_LEVELS.map((s) => ({ value: s.min ? String(s.min) : '', label: `Severity: ${s.label}` }))}
        />
        <ServiceSelect value={q.get('service') ?? ''} what="logs" />
        <FilterInput param="q" label="Body text" value={q.get('q') ?? ''} placeholder="Body contains…" width={240} />
        {trace && (
          <span className="chip removable">
            trace {shortId(trace)}
            <button type="button" aria-label="Remove trace filter" onClick={() => setQueryParam('trace', undefined)}>
              ✕
            </button>
          </span>
        )}
      </Toolbar>
      <div className={`table logs-table ${list.loading && logs.length ? 'stale' : ''}`}>
        <div className="thead log-grid">
          <div className="th">Time</div>
          <div className="th">Severity</div>
          <div className="th">Service</div>
          <div className="th">Body</div>
          <div className="th">Trace</div>
        </div>
        {list.error && logs.length > 0 && <div className="banner error">{list.error}</div>}
        {list.rowCount === 0 ? (
          <ListEmpty
            list={list}
            filtered={filters !== ''}
            noMatch="No log record matches these filters."
            nothingStored="No logs yet. Records sent to /v1/logs (HTTP) or LogsService/Export (gRPC) appear here live."
          />
        ) : (
          <VirtualList
            count={list.rowCount}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            expandedIndex={expandedIndex}
            expandedKey={expanded}
            label="Log records"
            onRange={list.onRange}
            itemKey={itemKey}
            renderRow={(i) =>
              logs[i] ? (
                <LogRow log={logs[i]} selected={i === cur} open={i === expandedIndex} onClick={() => toggle(i)} />
              ) : (
                <div className="tr log-grid placeholder">Loading…</div>
              )
            }
            renderExpanded={(i) => <LogDetail log={logs[i]} />}
          />
        )}
      </div>
    </div>
  );
}

function LogRow({ log, selected, open, onClick }: { log: LogRecord; selected: boolean; open: boolean; onClick: () => void }) {
  return (
    <div
      className={`tr log-grid ${selected ? 'selected' : ''} ${open ? 'open' : ''} ${log.severityNumber >= 17 ? 'sev-row-error' : ''}`}
      onClick={onClick}
      aria-expanded={open}
    >
      <span className="td mono muted">{formatTime(logTime(log))}</span>
      <span className="td">
        <span className={`sev ${severityClass(log.severityNumber)}`}>
          {severityLabel(log.severityNumber, log.severityText)}
        </span>
      </span>
      <span className="td ellipsis">
        <span className="svc-dot" style={{ background: serviceColor(log.service) }} />
        {log.service}
      </span>
      <span className="td ellipsis body-cell">{formatValue(log.body)}</span>
      <span className="td">
        {log.traceId && (
          <Link
            className="mono trace-link"
            to={`/traces/${log.traceId}${log.spanId ? `?span=${log.spanId}` : ''}`}
            onClick={(e) => e.stopPropagation()}
          >
            {shortId(log.traceId)}
          </Link>
        )}
      </span>
    </div>
  );
}

function LogDetail({ log }: { log: LogRecord }) {
  return (
    <div className="log-detail">
      <pre className="log-body">{typeof log.body === 'string' ? log.body : JSON.stringify(log.body, null, 2)}</pre>
      <div className="detail-cols">
        <div>
          <table className="kv">
            <tbody>
              <KvRow label="Time">
                {formatTime(nsToMs(log.timeUnixNano))} <span className="muted mono">{log.timeUnixNano}</span>
              </KvRow>
              <KvRow label="Observed">
                {formatTime(nsToMs(log.observedTimeUnixNano))}{' '}
                <span className="muted mono">{log.observedTimeUnixNano}</span>
              </KvRow>
              <KvRow label="Severity">
                {log.severityNumber} {log.severityText}
              </KvRow>
              {log.eventName && (
                <KvRow label="Event name">{log.eventName}</KvRow>
              )}
              <KvRow label="Trace" mono>
                {log.traceId ? (
                  <Link to={`/traces/${log.traceId}${log.spanId ? `?span=${log.spanId}` : ''}`}>
                    {log.traceId}
                    {log.spanId && ` / ${log.spanId}`}
                  </Link>
                ) : (
                  <span className="muted">none</span>
                )}
              </KvRow>
              <KvRow label="Flags">{log.flags}</KvRow>
              <KvRow label="Scope" mono>
                {log.scope.name} {log.scope.version}
              </KvRow>
              <KvRow label="Request">
                <Link to={`/requests/${log.requestId}`}>{log.requestId}</Link>
              </KvRow>
            </tbody>
          </table>
        </div>
        <Section title="Attributes" count={Object.keys(log.attributes).length}>
          <AttrTable attrs={log.attributes} />
        </Section>
        <Section title="Resource" count={Object.keys(log.resource).length}>
          <AttrTable attrs={log.resource} />
        </Section>
      </div>
    </div>
  );
}
