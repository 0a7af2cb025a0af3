import { markBidi } from '../text';
import { Icon } from '../components/Icon';
import { useCallback, useState } from 'react';
import { useWatch } from '../live';
import { href, Link, setQueryParam, type Route } from '../router';
import { formatTime, formatValue, logTime, nsToMs, severityClass, severityLabel, SEVERITY_LEVELS, shortId } from '../format';
import { VirtualList } from '../components/VirtualList';
import { usePagedList } from '../components/usePagedList';
import { ServiceSelect } from '../components/ServiceSelect';
import { AttrTable, KvRow, Section } from '../components/AttrTable';
import { FilterInput, ListEmpty, Select, Toolbar, Total } from '../components/Toolbar';
import { useListKeys } from '../keys';
import { ServiceDot } from '../components/Service';
import { TimeRange } from '../components/TimeRange';
import { flagsText } from '../components/flags';
import { attrQuery } from '../components/attrFilter';
import type { LogRecord } from '../generated/api';

const ROW_HEIGHT = 26;

/** A record's time as the server filters on it: its own when set, else when it was observed. */
const recordNs = (l: LogRecord) => (l.timeUnixNano && l.timeUnixNano !== '0' ? l.timeUnixNano : l.observedTimeUnixNano);

/**
 * A record's own link: `/logs?record=<request id>-<time in ns>` finds it again (the records of one
 * request at one nanosecond, in practice the one) over everything stored.
 */
export function recordLink(l: LogRecord): string {
  return href('/logs', { record: `${l.requestId}-${recordNs(l)}` });
}

const RECORD = /^(\d+)-(\d{1,20})$/;

/**
 * The URL's filters (`/logs?q=text&trace=<id>&span=<id>&service=…&severity=17&attr=k=v&from=…&to=…`,
 * `request=<id>`, `record=<request>-<ns>`) as the server's query.
 */
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
  const span = q.get('span')?.trim();
  if (span) params.set('spanId', span);
  const request = q.get('request')?.trim();
  if (request) params.set('requestId', request);
  attrQuery(q.get('attr'), params);
  const record = RECORD.exec(q.get('record') ?? '');
  if (record) {
    params.set('requestId', record[1]);
    params.set('from', record[2]);
    params.set('to', record[2]);
  } else for (const k of ['from', 'to']) if (q.get(k)) params.set(k, q.get(k)!);
  return params.toString();
}

/** Log records carry no id of their own; these fields tell apart the records of one list. */
function logKey(l: LogRecord): string {
  return `${l.requestId}/${l.observedTimeUnixNano}/${l.timeUnixNano}/${l.spanId}/${l.severityNumber}`;
}

/** A filter the URL holds, shown as a chip that removes it. */
function FilterChip({ param, label }: { param: string; label: string }) {
  return (
    <span className="chip removable" data-chip={param}>
      {label}
      <button type="button" aria-label={`Remove ${param} filter`} onClick={() => setQueryParam(param, undefined)}>
        <Icon name="close" />
      </button>
    </span>
  );
}

export function Logs({ route }: { route: Route }) {
  const q = route.query;
  const minSeverity = Number(q.get('severity') ?? 0) || 0;
  const trace = q.get('trace') ?? '';
  const span = q.get('span') ?? '';
  const request = q.get('request') ?? '';
  const record = q.get('record') ?? '';
  const filters = logFilters(q);
  // Newest first by the records' own time: exporters batch, so arrival order interleaves services.
  const query = filters ? `${filters}&sort=time` : 'sort=time';
  const version = useWatch('logs', query);
  const list = usePagedList('logs', query, version);
  const logs = list.items;
  const [selected, setSelected] = useState(-1);
  // The opened record is in the URL (`open=<key>`), so a reload or a shared link shows it open; a record's own
  // link (`record=`) shows it open.
  const expanded = q.get('open') ?? (record && logs.length === 1 ? logKey(logs[0]) : null);

  const itemKey = useCallback((i: number) => (logs[i] ? logKey(logs[i]) : undefined), [logs]);
  const expandedIndex = expanded === null ? -1 : logs.findIndex((l) => logKey(l) === expanded);
  const cur = Math.min(selected, logs.length - 1);
  const toggle = (i: number) => {
    const key = logs[i] && logKey(logs[i]);
    setQueryParam('open', key === expanded ? undefined : key);
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
        <FilterInput param="q" label="Body text" value={q.get('q') ?? ''} placeholder="Body contains…" width={220} />
        <FilterInput param="attr" label="Attributes (several: separated by ;)" value={q.get('attr') ?? ''} placeholder="key=value; key2=value2" width={220} />
        {!record && <TimeRange from={q.get('from')} to={q.get('to')} />}
        {trace && <FilterChip param="trace" label={`trace ${shortId(trace)}`} />}
        {span && <FilterChip param="span" label={`span ${shortId(span)}`} />}
        {request && <FilterChip param="request" label={`request ${request}`} />}
        {record && <FilterChip param="record" label="one record" />}
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
        <span className={`sev ${severityClass(log.severityNumber)}`}>{severityLabel(log.severityNumber, log.severityText)}</span>
      </span>
      <span className="td ellipsis">
        <ServiceDot service={log.service} />
        {markBidi(log.service)}
      </span>
      <span className="td ellipsis body-cell">{markBidi(formatValue(log.body))}</span>
      <span className="td">
        {log.traceId && (
          <Link className="mono trace-link" to={`/traces/${log.traceId}${log.spanId ? `?span=${log.spanId}` : ''}`} onClick={(e) => e.stopPropagation()}>
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
      <div className="section-actions">
        <Link className="btn small" to={recordLink(log)} data-action="record-link" title="A link to this record alone">
          <Icon name="link" /> Link to this record
        </Link>{' '}
        {log.traceId && (
          <Link className="btn small" to={`/traces/${log.traceId}${log.spanId ? `?span=${log.spanId}` : ''}`} data-action="log-span">
            {log.spanId ? 'Open its span' : 'Open its trace'}
          </Link>
        )}
      </div>
      <pre className="log-body">{markBidi(typeof log.body === 'string' ? log.body : JSON.stringify(log.body, null, 2))}</pre>
      <div className="detail-cols">
        <div>
          <table className="kv">
            <tbody>
              <KvRow label="Time">
                {formatTime(nsToMs(log.timeUnixNano))} <span className="muted mono">{log.timeUnixNano}</span>
              </KvRow>
              <KvRow label="Observed">
                {formatTime(nsToMs(log.observedTimeUnixNano))} <span className="muted mono">{log.observedTimeUnixNano}</span>
              </KvRow>
              <KvRow label="Severity">
                {log.severityNumber} {log.severityText}
              </KvRow>
              {log.eventName && <KvRow label="Event name">{log.eventName}</KvRow>}
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
              <KvRow label="Flags">
                <span data-flags={log.flags} title={`flags = ${log.flags} (0x${log.flags.toString(16)})`}>
                  {flagsText(log.flags, 'log')}
                </span>
              </KvRow>
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
