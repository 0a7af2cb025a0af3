import { useEffect, useMemo, useState } from 'react';
import { api, ApiError } from '../api';
import { live, useLive } from '../live';
import { Link, navigate, type Route } from '../router';
import { formatBytes, formatCount, formatTime, GRPC_CODES } from '../format';
import { VirtualList } from '../components/VirtualList';
import { CopyButton, JsonBlock, KvRow, Section } from '../components/AttrTable';
import { choices, Empty, Select, Toolbar } from '../components/Toolbar';
import { useKeys, useListKeys } from '../keys';
import type { JournalDetail, JournalEntry } from '../types';

const ROW_HEIGHT = 26;

function statusText(e: JournalEntry): string {
  if (!e.response) return '—';
  const s = e.response.status;
  if (e.transport === 'grpc') return `${s} ${GRPC_CODES[s] ?? ''}`.trim();
  return String(s);
}

function statusClass(e: JournalEntry): string {
  if (e.outcome === 'accepted') return 'ok';
  if (e.outcome === 'partial') return 'warn';
  return 'error';
}

function encodingOf(contentType: string | undefined, transport: string): string {
  const ct = (contentType ?? '').toLowerCase();
  if (ct.includes('json')) return 'json';
  if (ct.includes('protobuf') || ct.includes('grpc') || transport === 'grpc') return 'protobuf';
  return ct || '—';
}

export function Requests({ route }: { route: Route }) {
  const version = useLive();
  const q = route.query;
  const signal = q.get('signal') ?? '';
  const transport = q.get('transport') ?? '';
  const outcome = q.get('outcome') ?? '';
  const [selected, setSelected] = useState(-1);

  const rows = useMemo(() => {
    const all = live.data.requests;
    const out: JournalEntry[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const e = all[i];
      if (signal && e.signal !== signal) continue;
      if (transport && e.transport !== transport) continue;
      if (outcome && e.outcome !== outcome) continue;
      out.push(e);
    }
    return out;
  }, [version, signal, transport, outcome]);

  const cur = Math.min(selected, rows.length - 1);
  useListKeys({ count: rows.length, selected: cur, setSelected, open: (i) => navigate(`/requests/${rows[i].id}`) });

  return (
    <div className="view">
      <Toolbar right={<span className="muted">{rows.length.toLocaleString('en-US')} requests</span>}>
        <Select
          param="signal"
          label="Signal"
          value={signal}
          options={choices('All signals', ['traces', 'metrics', 'logs'])}
        />
        <Select
          param="transport"
          label="Transport"
          value={transport}
          options={choices('All transports', ['http', 'grpc', 'import'])}
        />
        <Select
          param="outcome"
          label="Outcome"
          value={outcome}
          options={choices('All outcomes', ['accepted', 'partial', 'rejected', 'faulted'])}
        />
      </Toolbar>
      <div className="table">
        <div className="thead req-grid">
          <div className="th">Time</div>
          <div className="th">Transport</div>
          <div className="th">Encoding</div>
          <div className="th">Compr.</div>
          <div className="th">Signal</div>
          <div className="th num">Bytes</div>
          <div className="th num">Items</div>
          <div className="th">User-Agent</div>
          <div className="th">Response</div>
          <div className="th">Fault</div>
        </div>
        {rows.length === 0 ? (
          <Empty>
            {live.loading
              ? 'Loading…'
              : 'No requests yet. Every export request — accepted, rejected or faulted — is listed here with its headers and body.'}
          </Empty>
        ) : (
          <VirtualList
            count={rows.length}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            label="Requests"
            renderRow={(i) => <RequestRow e={rows[i]} selected={i === cur} />}
          />
        )}
      </div>
    </div>
  );
}

function RequestRow({ e, selected }: { e: JournalEntry; selected: boolean }) {
  return (
    <Link to={`/requests/${e.id}`} className={`tr req-grid ${selected ? 'selected' : ''}`} data-request-id={e.id}>
      <span className="td mono muted">{formatTime(Date.parse(e.time))}</span>
      <span className="td">
        <span className={`tag tag-${e.transport}`}>{e.transport}</span>
      </span>
      <span className="td">{encodingOf(e.contentType, e.transport)}</span>
      <span className="td muted">{e.contentEncoding || '—'}</span>
      <span className="td">{e.signal}</span>
      <span className="td num">{formatBytes(e.bytes)}</span>
      <span className="td num">{formatCount(e.items)}</span>
      <span className="td ellipsis muted" title={e.userAgent}>
        {e.userAgent}
      </span>
      <span className="td ellipsis">
        <span className={`badge ${statusClass(e)}`}>{statusText(e)}</span>{' '}
        <span className="muted small">{e.outcome}</span>
      </span>
      <span className="td ellipsis">{e.fault ? <span className="badge fault">{e.fault.action}</span> : ''}</span>
    </Link>
  );
}

export function RequestDetail({ id }: { id: string }) {
  const version = useLive();
  const [detail, setDetail] = useState<JournalDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fromFeed = useMemo(() => live.data.requests.find((e) => String(e.id) === id), [version, id]);

  useEffect(() => {
    setDetail(null);
    setError(null);
    api
      .request(id)
      .then(setDetail)
      .catch((e: Error) =>
        setError(e instanceof ApiError && e.status === 404 ? 'The server no longer holds this request.' : e.message),
      );
  }, [id]);

  useKeys((e) => {
    if (e.key === 'Escape') navigate('/requests');
  });

  const entry: JournalEntry | undefined = detail ?? fromFeed;
  return (
    <div className="view scroll">
      <div className="toolbar">
        <Link className="btn small" to="/requests">
          ← Requests
        </Link>
        <span className="muted mono">{id}</span>
      </div>
      {!entry ? (
        <Empty>{error ?? 'Loading…'}</Empty>
      ) : (
        <div className="request-detail">
          <div className="detail-cols">
            <Section title="Request">
              <table className="kv">
                <tbody>
                  <KvRow label="Time">
                    {formatTime(Date.parse(entry.time))} <span className="muted mono">{entry.time}</span>
                  </KvRow>
                  <KvRow label="Transport">
                    {entry.transport} <span className="mono muted">{entry.path}</span>
                  </KvRow>
                  <KvRow label="Signal">{entry.signal}</KvRow>
                  <KvRow label="Content type" mono>{entry.contentType || '—'}</KvRow>
                  <KvRow label="Compression" mono>{entry.contentEncoding || 'none'}</KvRow>
                  <KvRow label="Size">
                    {formatBytes(entry.bytes)} <span className="muted">({formatCount(entry.bytes)} bytes)</span>
                  </KvRow>
                  <KvRow label="Items">{formatCount(entry.items)}</KvRow>
                  <KvRow label="User-Agent">{entry.userAgent}</KvRow>
                </tbody>
              </table>
            </Section>
            <Section title="Response">
              <table className="kv">
                <tbody>
                  <KvRow label="Outcome">
                    <span className={`badge ${statusClass(entry)}`}>{entry.outcome}</span>
                  </KvRow>
                  <KvRow label="Status">{statusText(entry)}</KvRow>
                  {entry.response?.message && (
                    <KvRow label="Message">{entry.response.message}</KvRow>
                  )}
                  <KvRow label="Fault">
                    {entry.fault ? (
                      <Link to="/faults">
                        {entry.fault.action} <span className="mono muted">{entry.fault.id}</span>
                      </Link>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </KvRow>
                  {entry.response?.partialSuccess !== undefined && (
                    <KvRow label="Partial success" mono>{JSON.stringify(entry.response.partialSuccess)}</KvRow>
                  )}
                </tbody>
              </table>
            </Section>
          </div>
          <Section title="Headers" count={Object.keys(entry.headers ?? {}).length}>
            <table className="kv">
              <tbody>
                {Object.entries(entry.headers ?? {})
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
          <Section title="Body (OTLP/JSON)">
            {detail && detail.body !== undefined ? (
              <>
                <div className="section-actions">
                  <CopyButton text={JSON.stringify(detail.body, null, 2)} label="Copy JSON" />
                </div>
                <JsonBlock value={detail.body} />
              </>
            ) : (
              <div className="muted small">
                {error ?? (detail ? 'The server did not keep the body of this request.' : 'Loading…')}
              </div>
            )}
          </Section>
        </div>
      )}
    </div>
  );
}
