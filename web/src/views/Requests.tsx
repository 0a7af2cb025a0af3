import { markBidi } from '../text';
import { AttemptTimeline, type Attempt } from '../components/AttemptTimeline';
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../api';
import { useWatch } from '../live';
import { href, Link, navigate, type Route } from '../router';
import { answerStatus, formatBytes, formatCount, formatDuration, formatTime, GRPC_CODES } from '../format';
import { VirtualList } from '../components/VirtualList';
import { usePagedList } from '../components/usePagedList';
import { CopyButton, KvRow, Section } from '../components/AttrTable';
import { JsonTree } from '../components/JsonTree';
import { ServiceDot } from '../components/Service';
import { ServiceSelect } from '../components/ServiceSelect';
import { UpstreamLegs } from '../components/UpstreamLegs';
import { choices, Empty, ListEmpty, Select, Toolbar, Total } from '../components/Toolbar';
import { useKeys, useListKeys } from '../keys';
import type { JournalDetail, JournalEntry, OtapStream, OtapStreamRow } from '../generated/api';
import { noAnswer, OUTCOMES } from '../outcome';
import { useSignals } from '../signals';

const ROW_HEIGHT = 26;

function statusText(e: JournalEntry): string {
  return e.response ? answerStatus(e.response.status, e.transport) : 'no answer';
}

function statusClass(e: JournalEntry): string {
  if (e.outcome === 'accepted') return 'ok';
  if (e.outcome === 'partial') return 'warn';
  return 'error';
}

function encodingOf(contentType: string | undefined, transport: string): string {
  const ct = (contentType ?? '').toLowerCase();
  if (transport === 'otap') return 'arrow';
  if (ct.includes('json')) return 'json';
  if (ct.includes('protobuf') || ct.includes('grpc') || transport === 'grpc') return 'protobuf';
  return ct || '—';
}

const FILTERS = ['signal', 'transport', 'outcome', 'service'];

/** A journal entry with the services of the resources it carried (absent for a request that was not decoded). */
type Entry = JournalEntry & { services?: string[] };
/** A row of the list: a request, or an OTAP stream in place of its batches. */
type Row = JournalEntry | OtapStreamRow;

const isStream = (row: Row): row is OtapStreamRow => 'stream' in row;
const rowKey = (row: Row) => (isStream(row) ? `stream-${row.stream.id}` : String(row.id));

export function Requests({ route }: { route: Route }) {
  const signals = useSignals();
  const q = route.query;
  const filters: Record<string, string> = {};
  for (const f of FILTERS) if (q.get(f)) filters[f] = q.get(f)!;
  // The list shows each OTAP stream as one row; a stream's own page lists its batches.
  const stream = q.get('stream');
  const query = new URLSearchParams({ ...filters, ...(stream ? { stream } : { group: 'streams' }) }).toString();
  const version = useWatch('requests', query);
  const list = usePagedList('requests', query, version);
  const rows = list.items;
  const [selected, setSelected] = useState(-1);

  const itemKey = useCallback((i: number) => (rows[i] ? rowKey(rows[i]) : undefined), [rows]);
  const cur = Math.min(selected, rows.length - 1);
  const target = (row: Row) => (isStream(row) ? href('/requests', { ...filters, stream: row.stream.id }) : `/requests/${row.id}`);
  useListKeys({ count: rows.length, selected: cur, setSelected, open: (i) => navigate(target(rows[i])) });
  useKeys((e) => {
    if (stream && e.key === 'Escape') navigate(href('/requests', filters));
  });

  return (
    <div className="view">
      {stream && <StreamSummary id={stream} version={version} back={href('/requests', filters)} />}
      <Toolbar right={<Total total={list.total} noun={stream ? 'batches' : 'requests'} one={stream ? 'batch' : 'request'} />}>
        <Select
          param="signal"
          label="Signal"
          value={q.get('signal') ?? ''}
          options={choices(
            'All signals',
            signals.map((s) => s.name),
          )}
        />
        <Select param="transport" label="Transport" value={q.get('transport') ?? ''} options={choices('All transports', ['http', 'grpc', 'otap', 'import'])} />
        <Select param="outcome" label="Outcome" value={q.get('outcome') ?? ''} options={choices('All outcomes', OUTCOMES)} />
        <ServiceSelect value={q.get('service') ?? ''} what="any" />
      </Toolbar>
      <div className={`table ${list.loading && rows.length ? 'stale' : ''}`}>
        <div className="thead req-grid">
          <div className="th">Time</div>
          <div className="th">Transport</div>
          <div className="th">Encoding</div>
          <div className="th">Compr.</div>
          <div className="th">Signal</div>
          <div className="th">Service</div>
          <div className="th num">Bytes</div>
          <div className="th num">Items</div>
          <div className="th">User-Agent</div>
          <div className="th">Response</div>
          <div className="th">Fault</div>
        </div>
        {list.error && rows.length > 0 && <div className="banner error">{list.error}</div>}
        {list.rowCount === 0 ? (
          <ListEmpty
            list={list}
            filtered={query !== ''}
            noMatch="No request matches these filters."
            nothingStored="No requests yet. Every export request — accepted, rejected or faulted — is listed here with its headers and body."
          />
        ) : (
          <VirtualList
            count={list.rowCount}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            label="Requests"
            onRange={list.onRange}
            itemKey={itemKey}
            renderRow={(i) => {
              const row = rows[i];
              if (!row) return <div className="tr req-grid placeholder">Loading…</div>;
              return isStream(row) ? <StreamRow row={row} to={target(row)} selected={i === cur} /> : <RequestRow e={row} selected={i === cur} />;
            }}
          />
        )}
      </div>
    </div>
  );
}

const CAUSE_WORDS: Record<string, string> = {
  'half-close': 'closed',
  cancel: 'cancelled',
  reset: 'reset by fault',
  idle: 'idle timeout',
  error: 'ended by server',
  shutdown: 'server stopped',
};

/** Open, or how the stream ended, as a badge: a client's own half-close is the one clean end. */
function StreamState({ s }: { s: OtapStream }) {
  if (!s.end) return <span className="badge live">open</span>;
  const code = s.end.status !== null && s.end.status !== 0 ? ` ${GRPC_CODES[s.end.status] ?? s.end.status}` : '';
  const title = [s.end.cause, s.end.message].filter(Boolean).join(': ');
  return (
    <span className={`badge ${s.end.cause === 'half-close' ? 'ok' : s.end.cause === 'cancel' || s.end.cause === 'shutdown' ? 'muted' : 'error'}`} title={title}>
      {CAUSE_WORDS[s.end.cause] ?? s.end.cause}
      {code}
    </span>
  );
}

/** The batches that were not answered OK, by status. */
function notOk(s: OtapStream): { label: string; count: number }[] {
  const out = Object.entries(s.statuses)
    .filter(([code]) => code !== '0')
    .map(([code, count]) => ({ label: GRPC_CODES[Number(code)] ?? code, count }));
  if (s.unanswered) out.push({ label: 'no status', count: s.unanswered });
  return out;
}

const batchesText = (n: number) => `${formatCount(n)} ${n === 1 ? 'batch' : 'batches'}`;

/** Time since open, for a stream still open: counted from its openedAt as the page renders. */
const durationOf = (s: OtapStream) => (s.end ? s.durationMs : Math.max(s.durationMs, Date.now() - Date.parse(s.openedAt)));

function StreamRow({ row, to, selected }: { row: OtapStreamRow; to: string; selected: boolean }) {
  const s = row.stream;
  const bad = notOk(s);
  const badText = bad.map((b) => `${formatCount(b.count)}× ${b.label}`).join(', ');
  return (
    <Link to={to} className={`tr req-grid stream-row ${selected ? 'selected' : ''}`} data-stream-id={s.id} data-stream-state={s.state}>
      <span className="td mono muted" title={`opened ${s.openedAt}`}>
        {formatTime(Date.parse(s.openedAt))}
      </span>
      <span className="td">
        <span className="tag tag-otap">otap</span>
      </span>
      <span
        className="td span-2 ellipsis"
        title={row.matched < s.kept ? `${row.matched} of the ${s.kept} batches held match the filters` : `OTAP stream ${s.id}: its batches`}
      >
        <span className="stream-open">▸</span> {batchesText(s.batches)}
        {row.matched < s.kept && <span className="muted small"> ({formatCount(row.matched)} match)</span>}
      </span>
      <span className="td">{s.signal}</span>
      <ServicesCell services={s.services} />
      <span className="td num">{formatBytes(s.bytes)}</span>
      <span className="td num">{formatCount(s.items)}</span>
      <span className="td ellipsis muted" title={`${s.userAgent} from ${s.peer}`}>
        {markBidi(s.userAgent)}
      </span>
      <span className="td ellipsis">
        <StreamState s={s} /> <span className="muted small">{formatDuration(durationOf(s))}</span>
      </span>
      <span className="td ellipsis not-ok" title={badText || undefined} data-not-ok={badText}>
        {badText}
      </span>
    </Link>
  );
}

/** The stream whose batches the list shows: what it is, whether it is open, and what it has carried. */
function StreamSummary({ id, version, back }: { id: string; version: number; back: string }) {
  const [s, setStream] = useState<OtapStream | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api
      .otapStream(id)
      .then((found) => {
        setStream(found);
        setError(null);
      })
      .catch((e: Error) => setError(e instanceof ApiError && e.status === 404 ? 'The server no longer holds this stream.' : e.message));
  }, [id, version]);
  const bad = s ? notOk(s) : [];
  return (
    <div className="stream-summary" aria-label="OTAP stream">
      <Link className="btn small" to={back}>
        ← Requests
      </Link>
      <span className="stream-title">
        <span className="tag tag-otap">otap</span> stream <span className="mono">#{id}</span>
      </span>
      {!s ? (
        <span className="muted">{error ?? 'Loading…'}</span>
      ) : (
        <>
          <StreamState s={s} />
          <span>{s.signal}</span>
          <span className="muted mono small" title={s.path}>
            {s.method}
          </span>
          <span className="muted small">
            {markBidi(s.userAgent)} from <span className="mono">{s.peer}</span>
          </span>
          <span className="muted small">
            opened {formatTime(Date.parse(s.openedAt))}
            {s.closedAt && ` · closed ${formatTime(Date.parse(s.closedAt))}`} · {formatDuration(durationOf(s))}
          </span>
          <span>
            {batchesText(s.batches)}
            {s.kept < s.batches && <span className="muted small"> ({formatCount(s.batches - s.kept)} evicted)</span>} · {formatCount(s.items)} items ·{' '}
            {formatBytes(s.bytes)} Arrow
          </span>
          {bad.map((b) => (
            <span key={b.label} className="badge error">
              {formatCount(b.count)}× {b.label}
            </span>
          ))}
          {s.end?.message && <span className="muted small">{s.end.message}</span>}
        </>
      )}
    </div>
  );
}

/** The service.name of each resource a request or stream carried. */
function ServicesCell({ services }: { services: string[] }) {
  return (
    <span className="td ellipsis" data-services={services.join(',')} title={services.join(', ')}>
      {services.map((s) => (
        <span key={s} className="req-service">
          <ServiceDot service={s} />
          {s ? markBidi(s) : <span className="muted">(no service.name)</span>}
        </span>
      ))}
    </span>
  );
}

function RequestRow({ e, selected }: { e: Entry; selected: boolean }) {
  const services = e.services ?? [];
  return (
    <Link to={`/requests/${e.id}`} className={`tr req-grid ${selected ? 'selected' : ''}`} data-request-id={e.id}>
      <span className="td mono muted">{formatTime(Date.parse(e.time))}</span>
      <span className="td" title={e.otap ? `batch_id ${e.otap.batch} of OTAP stream ${e.otap.stream}` : undefined}>
        <span className={`tag tag-${e.transport}`}>{e.transport}</span>
        {e.otap && <span className="muted small"> #{e.otap.batch}</span>}
      </span>
      <span className="td">{encodingOf(e.contentType, e.transport)}</span>
      <span className="td muted">{e.contentEncoding || '—'}</span>
      <span className="td">{e.signal}</span>
      <ServicesCell services={services} />
      <span className="td num">{formatBytes(e.bytes)}</span>
      <span className="td num">{formatCount(e.items)}</span>
      <span className="td ellipsis muted" title={e.userAgent}>
        {markBidi(e.userAgent)}
      </span>
      <span className="td ellipsis">
        <span className={`badge ${statusClass(e)}`}>{statusText(e)}</span> <span className="muted small">{e.outcome}</span>
      </span>
      <span className="td ellipsis" title={e.fault ? `${e.fault.action} (rule ${e.fault.id})` : undefined}>
        {e.fault ? (
          <>
            <span className="badge fault">{e.fault.action}</span> <span className="mono muted small">{e.fault.id}</span>
          </>
        ) : (
          ''
        )}
      </span>
    </Link>
  );
}

export function RequestDetail({ id }: { id: string }) {
  const [detail, setDetail] = useState<JournalDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempts, setAttempts] = useState<Attempt[]>([]);

  useEffect(() => {
    setDetail(null);
    setError(null);
    setAttempts([]);
    api
      .request(id)
      .then(setDetail)
      .catch((e: Error) => setError(e instanceof ApiError && e.status === 404 ? 'The server no longer holds this request.' : e.message));
    // Without its batch's other attempts the page still shows the request itself.
    api
      .attempts<Attempt>(id)
      .then((r) => setAttempts(r.attempts))
      .catch(() => setAttempts([]));
  }, [id]);

  useKeys((e) => {
    if (e.key === 'Escape') navigate('/requests');
  });

  return (
    <div className="view scroll">
      <div className="toolbar">
        <Link className="btn small" to="/requests">
          ← Requests
        </Link>
        <span className="muted mono">{id}</span>
      </div>
      {!detail ? (
        <Empty>{error ?? 'Loading…'}</Empty>
      ) : (
        <div className="request-detail">
          <div className="detail-cols">
            <Section title="Request">
              <table className="kv">
                <tbody>
                  <KvRow label="Time">
                    {formatTime(Date.parse(detail.time))} <span className="muted mono">{detail.time}</span>
                  </KvRow>
                  <KvRow label="Transport">
                    {detail.transport} <span className="mono muted">{detail.path}</span>
                  </KvRow>
                  {detail.otap && (
                    <KvRow label="OTAP">
                      batch {detail.otap.batch} of{' '}
                      <Link to={href('/requests', { stream: detail.otap.stream })} data-stream-link={detail.otap.stream}>
                        stream #{detail.otap.stream}
                      </Link>
                    </KvRow>
                  )}
                  <KvRow label="Signal">{detail.signal}</KvRow>
                  <KvRow label="Content type" mono>
                    {detail.contentType || '—'}
                  </KvRow>
                  <KvRow label="Compression" mono>
                    {detail.contentEncoding || 'none'}
                  </KvRow>
                  <KvRow label="Size">
                    {formatBytes(detail.bytes)} <span className="muted">({formatCount(detail.bytes)} bytes)</span>
                  </KvRow>
                  <KvRow label="Items">{formatCount(detail.items)}</KvRow>
                  <KvRow label="User-Agent">{detail.userAgent}</KvRow>
                </tbody>
              </table>
            </Section>
            <Section title="Response">
              <table className="kv">
                <tbody>
                  <KvRow label="Outcome">
                    <span className={`badge ${statusClass(detail)}`}>{detail.outcome}</span>
                  </KvRow>
                  <KvRow label="Status">{detail.response ? statusText(detail) : noAnswer(detail.outcome)}</KvRow>
                  {detail.response?.message && <KvRow label="Message">{detail.response.message}</KvRow>}
                  <KvRow label="Fault">
                    {detail.fault ? (
                      <Link to="/faults">
                        {detail.fault.action} <span className="mono muted">{detail.fault.id}</span>
                        {detail.fault.side === 'upstream' && <span className="muted small"> (upstream side)</span>}
                      </Link>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </KvRow>
                  {detail.response?.partialSuccess !== undefined && (
                    <KvRow label="Partial success" mono>
                      {JSON.stringify(detail.response.partialSuccess)}
                    </KvRow>
                  )}
                </tbody>
              </table>
            </Section>
          </div>
          {detail.upstream && <UpstreamLegs upstream={detail.upstream} tees={detail.tees} stored={detail.stored} />}
          {attempts.length > 1 && (
            <Section title="Attempts of this batch" count={attempts.length}>
              <AttemptTimeline attempts={attempts} current={detail.id} />
            </Section>
          )}
          <Section title="Headers" count={Object.keys(detail.headers ?? {}).length}>
            <table className="kv">
              <tbody>
                {Object.entries(detail.headers ?? {})
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([k, v]) => (
                    <tr key={k}>
                      <th className="mono">{k}</th>
                      <td className="mono">{Array.isArray(v) ? v.join(', ') : String(v)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </Section>
          {detail.body !== undefined && detail.body !== null && detail.signal !== null && (
            <Carried id={detail.id} signal={detail.signal} body={detail.body} stored={detail.stored ?? (detail.outcome === 'accepted' || detail.outcome === 'partial')} />
          )}
          <Section title="Body (OTLP/JSON)">
            {detail.body !== undefined && detail.body !== null ? (
              <JsonTree value={detail.body} actions={<CopyButton text={JSON.stringify(detail.body, null, 2)} label="Copy JSON" />} />
            ) : (
              <div className="muted small">The server did not keep the body of this request.</div>
            )}
          </Section>
        </div>
      )}
    </div>
  );
}

type KeyValue = { key: string; value?: { stringValue?: string } };
interface Body {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: { traceId?: string }[] }[] }[];
  resourceLogs?: { resource?: { attributes?: KeyValue[] }; scopeLogs?: { logRecords?: unknown[] }[] }[];
  resourceMetrics?: { resource?: { attributes?: KeyValue[] }; scopeMetrics?: { metrics?: { name?: string }[] }[] }[];
}

const serviceIn = (r?: { attributes?: KeyValue[] }) => r?.attributes?.find((kv) => kv.key === 'service.name')?.value?.stringValue ?? '';

/** Traces shown by id before the rest are counted. */
const TRACE_LINKS = 24;

/** What the request carried, read from its own body, with links to it in the other views. */
function Carried({ id, signal, body, stored }: { id: number; signal: string; body: unknown; stored: boolean }) {
  const b = body as Body;
  const traces = new Map<string, string>();
  for (const rs of b.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) if (s.traceId && !traces.has(s.traceId)) traces.set(s.traceId, serviceIn(rs.resource));
  const logs = (b.resourceLogs ?? []).reduce((n, rl) => n + (rl.scopeLogs ?? []).reduce((m, sl) => m + (sl.logRecords?.length ?? 0), 0), 0);
  const metrics = new Map<string, { service: string; name: string }>();
  for (const rm of b.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        const service = serviceIn(rm.resource);
        metrics.set(`${service}\u0000${m.name}`, { service, name: m.name ?? '' });
      }
  if (!traces.size && !logs && !metrics.size) return null;
  return (
    <Section title={`Carried (${signal})`}>
      <div className="carried" aria-label="What this request carried">
        {!stored && <div className="muted">Not stored: the request was not accepted, so the other views do not show what it carried.</div>}
        {traces.size > 0 && (
          <div>
            <span className="muted">{traces.size === 1 ? '1 trace' : `${formatCount(traces.size)} traces`}: </span>
            {[...traces].slice(0, TRACE_LINKS).map(([traceId, service]) => (
              <Link key={traceId} className="chip mono" to={`/traces/${traceId}`} data-carried="trace">
                <ServiceDot service={service} />
                {traceId.slice(0, 12)}
              </Link>
            ))}
            {traces.size > TRACE_LINKS && <span className="muted small">and {traces.size - TRACE_LINKS} more</span>}
          </div>
        )}
        {logs > 0 && (
          <div>
            {stored ? (
              <Link className="btn small" to={href('/logs', { request: id })} data-carried="logs">
                {formatCount(logs)} log {logs === 1 ? 'record' : 'records'} →
              </Link>
            ) : (
              <span className="muted">
                {formatCount(logs)} log {logs === 1 ? 'record' : 'records'}
              </span>
            )}
          </div>
        )}
        {metrics.size > 0 && (
          <div>
            <span className="muted">{metrics.size === 1 ? '1 metric' : `${metrics.size} metrics`}: </span>
            {[...metrics.values()].map((m) => (
              <Link key={`${m.service}/${m.name}`} className="chip" to={`/metrics/${encodeURIComponent(m.service)}/${encodeURIComponent(m.name)}`} data-carried="metric">
                <ServiceDot service={m.service} />
                {m.name}
              </Link>
            ))}
          </div>
        )}
      </div>
    </Section>
  );
}
