import { useMemo, useState } from 'react';
import { live, logTime, useLive } from '../live';
import { Link, setQueryParam, type Route } from '../router';
import {
  formatTime,
  formatValue,
  nsToMs,
  serviceColor,
  severityClass,
  severityLabel,
  SEVERITY_LEVELS,
  shortId,
} from '../format';
import { VirtualList } from '../components/VirtualList';
import { AttrTable, KvRow, Section } from '../components/AttrTable';
import { choices, Empty, FilterInput, Select, Toolbar } from '../components/Toolbar';
import { useListKeys } from '../keys';
import type { LogRecord } from '../types';

const ROW_HEIGHT = 26;

export function Logs({ route }: { route: Route }) {
  const version = useLive();
  const q = route.query;
  const minSeverity = Number(q.get('severity') ?? 0) || 0;
  const service = q.get('service') ?? '';
  const text = q.get('q') ?? '';
  const trace = q.get('trace') ?? '';
  const [selected, setSelected] = useState(-1);
  const [expanded, setExpanded] = useState<LogRecord | null>(null);

  const services = useMemo(() => [...new Set(live.data.logs.map((l) => l.service))].sort(), [version]);

  const logs = useMemo(() => {
    const needle = text.toLowerCase();
    const all = live.data.logs;
    const out: LogRecord[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const l = all[i];
      if (l.severityNumber < minSeverity) continue;
      if (service && l.service !== service) continue;
      if (trace && l.traceId !== trace) continue;
      if (needle && !formatValue(l.body).toLowerCase().includes(needle)) continue;
      out.push(l);
    }
    return out;
  }, [version, minSeverity, service, text, trace]);

  const expandedIndex = expanded ? logs.indexOf(expanded) : -1;
  const cur = Math.min(selected, logs.length - 1);
  const toggle = (i: number) => setExpanded((e) => (e === logs[i] ? null : logs[i]));
  useListKeys({ count: logs.length, selected: cur, setSelected, open: toggle });

  return (
    <div className="view">
      <Toolbar
        right={
          <span className="muted">
            {logs.length.toLocaleString('en-US')} of {live.data.logs.length.toLocaleString('en-US')} records
          </span>
        }
      >
        <Select
          param="severity"
          label="Minimum severity"
          value={String(minSeverity || '')}
          options={SEVERITY_LEVELS.map((s) => ({ value: s.min ? String(s.min) : '', label: `Severity: ${s.label}` }))}
        />
        <Select
          param="service"
          label="Service"
          value={service}
          options={choices('All services', services)}
        />
        <FilterInput param="q" label="Body text" value={text} placeholder="Body contains…" width={240} />
        {trace && (
          <span className="chip removable">
            trace {shortId(trace)}
            <button type="button" aria-label="Remove trace filter" onClick={() => setQueryParam('trace', undefined)}>
              ✕
            </button>
          </span>
        )}
      </Toolbar>
      <div className="table logs-table">
        <div className="thead log-grid">
          <div className="th">Time</div>
          <div className="th">Severity</div>
          <div className="th">Service</div>
          <div className="th">Body</div>
          <div className="th">Trace</div>
        </div>
        {logs.length === 0 ? (
          <Empty>
            {live.loading
              ? 'Loading…'
              : live.data.logs.length
                ? 'No log record matches these filters.'
                : 'No logs yet. Records sent to /v1/logs (HTTP) or LogsService/Export (gRPC) appear here live.'}
          </Empty>
        ) : (
          <VirtualList
            count={logs.length}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            expandedIndex={expandedIndex}
            expandedKey={expanded}
            label="Log records"
            renderRow={(i) => (
              <LogRow log={logs[i]} selected={i === cur} open={i === expandedIndex} onClick={() => toggle(i)} />
            )}
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
