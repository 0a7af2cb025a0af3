import { useCallback, useState } from 'react';
import { api } from '../api';
import { Empty } from '../components/Toolbar';
import { usePoll } from '../components/usePoll';
import { useSubmit } from '../components/useSubmit';
import { formatBytes, formatCount, formatDuration, formatTime } from '../format';
import { Link } from '../router';
import type { ForwardList } from '../generated/api';

interface Form {
  url: string;
  encoding: 'received' | 'protobuf' | 'json';
  compression: 'none' | 'gzip';
  headers: string;
}

const EMPTY_FORM: Form = { url: '', encoding: 'received', compression: 'none', headers: '' };

/** `name=value` lines into a header map; the server checks names and values and says what is wrong. */
function headersOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    out[(eq < 0 ? line : line.slice(0, eq)).trim()] = eq < 0 ? '' : line.slice(eq + 1).trim();
  }
  return out;
}

/** The last call to a target that did not succeed (GET /api/forward `lastFailure`). */
interface LastFailure {
  outcome: string;
  status: number | null;
  message: string;
  time: string;
}

const lastFailureOf = (t: ForwardList['targets'][number]) => (t as { lastFailure?: LastFailure | null }).lastFailure ?? null;

function FailureLine({ f }: { f: LastFailure }) {
  return (
    <span className="small">
      <span className="badge error">last {f.outcome}</span> <span className="mono muted">{formatTime(Date.parse(f.time))}</span>
      {f.status !== null && <span className="mono"> status {f.status}</span>} <span className="error-text">{f.message || '(no message)'}</span>
    </span>
  );
}

const COUNTS = ['accepted', 'partial', 'refused', 'failed', 'timeout', 'shed', 'faulted'] as const;

export function Forward() {
  const [list, setList] = useState<ForwardList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState<Form>(EMPTY_FORM);

  const load = useCallback(async () => {
    try {
      setList(await api.forward());
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  usePoll(load);

  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((f) => ({ ...f, [k]: v }));

  const {
    busy,
    error: formError,
    submit,
  } = useSubmit(async () => {
    const target: Record<string, unknown> = { url: form.url.trim() };
    if (form.encoding !== 'received' && !grpc) target.encoding = form.encoding;
    if (form.compression !== 'none') target.compression = form.compression;
    const headers = headersOf(form.headers);
    if (Object.keys(headers).length) target.headers = headers;
    await api.addForward(target);
    setForm(EMPTY_FORM);
    await load();
  });

  const remove = async (id: string) => {
    await api.removeForward(id).catch((e: Error) => setError(e.message));
    await load();
  };

  const grpc = form.url.trim().startsWith('grpc');
  return (
    <div className="view scroll faults forward">
      <section className="card">
        <div className="card-head">
          <h2>Forward targets</h2>
          <span className="muted small">every accepted request is sent on; the primary&apos;s answer is the client&apos;s, tees get a copy</span>
        </div>
        {error && <div className="error-text">{error}</div>}
        {!list ? (
          <Empty>Loading…</Empty>
        ) : list.targets.length === 0 ? (
          <Empty>
            Not forwarding: otlp-mock answers every request itself. Add a target below to stand between your app and a collector, and break the traffic with{' '}
            <Link to="/faults">upstream-side fault rules</Link>.
          </Empty>
        ) : (
          <table className="grid-table forward-targets">
            <thead>
              <tr>
                <th>ID</th>
                <th>Role</th>
                <th>URL</th>
                <th>Sends</th>
                <th>Headers</th>
                <th className="num">In flight</th>
                {COUNTS.map((c) => (
                  <th key={c} className="num">
                    {c[0].toUpperCase() + c.slice(1)}
                  </th>
                ))}
                <th />
              </tr>
            </thead>
            <tbody>
              {list.targets.map((t) => [
                <tr key={t.id} data-target-id={t.id}>
                  <td className="mono">{t.id}</td>
                  <td>
                    <span className={`badge ${t.role === 'primary' ? 'ok' : ''}`}>{t.role}</span>
                  </td>
                  <td className="mono">{t.url}</td>
                  <td className="small">
                    <span className={`tag tag-${t.transport}`}>{t.transport}</span> {t.encoding === 'received' ? 'as received' : t.encoding}
                    {t.compression !== 'none' ? `, ${t.compression}` : ''}
                  </td>
                  <td className="small mono ellipsis">
                    {Object.entries(t.headers)
                      .map(([k, v]) => (v === '' ? `−${k}` : `${k}: ${v}`))
                      .join(', ')}
                  </td>
                  <td className="num" title={formatBytes(t.inflightBytes)}>
                    {formatCount(t.inflight)}
                  </td>
                  {COUNTS.map((c) => (
                    <td key={c} className="num" data-count={c} title={c === 'shed' && t.shedBytes ? formatBytes(t.shedBytes) : undefined}>
                      {formatCount(t[c])}
                    </td>
                  ))}
                  <td>
                    <button type="button" className="btn small" onClick={() => void remove(t.id)} aria-label={`Remove ${t.id}`}>
                      Remove
                    </button>
                  </td>
                </tr>,
                lastFailureOf(t) && (
                  <tr key={`${t.id}-failure`} className="forward-failure" data-failure-of={t.id}>
                    <td colSpan={7 + COUNTS.length}>
                      <FailureLine f={lastFailureOf(t)!} />
                    </td>
                  </tr>
                ),
              ])}
            </tbody>
          </table>
        )}
        {list && (
          <div className="muted small">
            Each target: at most {formatCount(list.maxInflight)} requests ({formatBytes(list.maxInflightBytes)}) under way, each answered within{' '}
            {formatDuration(list.timeoutMs)}; beyond that requests are shed (503 / UNAVAILABLE, retry in 1 s).
          </div>
        )}
      </section>

      <section className="card">
        <div className="card-head">
          <h2>Add a target</h2>
        </div>
        <form className="fault-form" onSubmit={(e) => void submit(e)}>
          <label className="wide">
            <span>URL</span>
            <input placeholder="grpc://127.0.0.1:4317 or http://127.0.0.1:4318" value={form.url} onChange={(e) => set('url', e.target.value)} required />
          </label>
          <label>
            <span>Encoding</span>
            <select value={grpc ? 'protobuf' : form.encoding} disabled={grpc} onChange={(e) => set('encoding', e.target.value as Form['encoding'])}>
              <option value="received">as received</option>
              <option value="protobuf">protobuf</option>
              <option value="json">json</option>
            </select>
          </label>
          <label>
            <span>Compression</span>
            <select value={form.compression} onChange={(e) => set('compression', e.target.value as Form['compression'])}>
              <option value="none">none</option>
              <option value="gzip">gzip</option>
            </select>
          </label>
          <label className="wide">
            <span>Headers</span>
            <textarea
              rows={2}
              placeholder={'authorization=Bearer …   (one name=value a line; name= drops the client\u2019s header)'}
              value={form.headers}
              onChange={(e) => set('headers', e.target.value)}
            />
          </label>
          <div className="form-actions">
            <button type="submit" className="btn primary" disabled={busy}>
              Add target
            </button>
            {formError && <span className="error-text">{formError}</span>}
          </div>
        </form>
      </section>
    </div>
  );
}
