import { useCallback, useState } from 'react';
import { api } from '../api';
import { AttemptTimeline, type Attempt } from '../components/AttemptTimeline';
import { Empty } from '../components/Toolbar';
import { usePoll } from '../components/usePoll';
import { useSubmit } from '../components/useSubmit';
import { GRPC_CODES } from '../format';
import { useSignals } from '../signals';
import type { FaultRule } from '../generated/api';

type Action = 'throttle' | 'unavailable' | 'reject' | 'partial' | 'delay' | 'reset' | 'hang' | 'status';
type Option = 'retryAfterMs' | 'delayMs' | 'httpStatus' | 'grpcCode' | 'rejectItems' | 'message';

/** Which options each action takes (the server validates the same table and explains any mistake). */
const ACTION_OPTIONS: Record<Action, Option[]> = {
  throttle: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
  unavailable: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
  reject: ['httpStatus', 'grpcCode', 'message'],
  status: ['httpStatus', 'grpcCode', 'retryAfterMs', 'message'],
  partial: ['rejectItems', 'message'],
  delay: ['delayMs'],
  reset: [],
  hang: [],
};

const PRESETS: { action: Action; title: string; values: Partial<Form> }[] = [
  { action: 'throttle', title: 'HTTP 429 / gRPC UNAVAILABLE with a retry delay', values: { retryAfterMs: '1000' } },
  { action: 'unavailable', title: 'HTTP 503 / gRPC UNAVAILABLE', values: {} },
  { action: 'reject', title: 'HTTP 400 / gRPC INVALID_ARGUMENT, not retryable', values: {} },
  { action: 'partial', title: 'Accept, but report some items as rejected', values: { rejectItems: '1' } },
  { action: 'delay', title: 'Answer normally after a delay', values: { delayMs: '2000' } },
  { action: 'reset', title: 'Reset the connection (TCP RST) without an answer: gRPC clients see UNAVAILABLE, HTTP clients ECONNRESET', values: {} },
  { action: 'hang', title: 'Never answer (until the exporter times out)', values: {} },
];

/** GET /api/faults/:id/report, as far as this view shows it (server/faults/report.js has the whole shape). */
interface RetryReport {
  verdict: string;
  ok: boolean;
  /** false while a batch is waiting: its exporter may still retry */
  final: boolean;
  finalAt: string | null;
  counts: Record<string, number>;
  message: string;
  chains: { verdict: string; ok: boolean; finalAt: string | null; gapsMs: number[]; waitMs: number | null; attempts: Attempt[] }[];
}

const fetchReport = (id: string) => api.faultReport<RetryReport>(id);

/** A time of day, as the journal's clock gives it. */
const clock = (iso: string) => new Date(iso).toLocaleTimeString();

/** The verdict of a rule's retry report, and the attempts and gaps it was judged on. */
function ReportRow({ id, report, columns }: { id: string; report: RetryReport; columns: number }) {
  // A batch still waiting for its retry is neither a pass nor a failure yet: no colour until it is final.
  const tone = !report.ok ? 'error' : report.verdict === 'waiting' ? '' : 'ok';
  const counts = Object.entries(report.counts);
  return (
    <tr className="retry-report" data-report-for={id}>
      <td />
      <td colSpan={columns - 1} className="small">
        <span
          className={`badge ${tone}`}
          data-verdict={report.verdict}
          title={
            report.final
              ? "judged by the OTLP specification's retry rules"
              : `not final: the exporter may still retry (its Retry-After or backoff has not passed); final at ${clock(report.finalAt ?? '')}`
          }
        >
          {report.verdict}
        </span>{' '}
        {report.chains.length > 1 && (
          <span className="muted" data-report-counts>
            {report.chains.length} batches: {counts.map(([verdict, n]) => `${n} ${verdict}`).join(' · ')}
          </span>
        )}
        {!report.final && report.finalAt && (
          <span className="muted" data-final-at={report.finalAt}>
            {' '}
            (final at {clock(report.finalAt)} unless a retry comes)
          </span>
        )}
        {report.message.split('\n').map((line) => (
          <div key={line} className="muted">
            {line}
          </div>
        ))}
        {report.chains.map((c) => (
          <AttemptTimeline key={c.attempts[0]?.id} attempts={c.attempts} waitMs={c.waitMs} />
        ))}
      </td>
    </tr>
  );
}

const OPTION_LABELS: Record<Option, string> = {
  retryAfterMs: 'Retry after (ms)',
  delayMs: 'Delay (ms)',
  httpStatus: 'HTTP status',
  grpcCode: 'gRPC code',
  rejectItems: 'Rejected items',
  message: 'Message',
};

interface Form {
  action: Action;
  side: 'client' | 'upstream';
  /** signals left unchecked: the rule matches the others (all of them by default) */
  skipSignals: string[];
  transports: string[];
  times: string;
  after: string;
  probability: string;
  service: string;
  header: string;
  retryAfterMs: string;
  delayMs: string;
  httpStatus: string;
  grpcCode: string;
  rejectItems: string;
  message: string;
}

/** The wires a rule can apply to (otap: each batch of an OTel Arrow stream). */
const TRANSPORTS = ['http', 'grpc', 'otap'];

const EMPTY_FORM: Form = {
  action: 'throttle',
  side: 'client',
  skipSignals: [],
  transports: [...TRANSPORTS],
  times: '',
  after: '',
  probability: '',
  service: '',
  header: '',
  retryAfterMs: '1000',
  delayMs: '',
  httpStatus: '',
  grpcCode: '',
  rejectItems: '',
  message: '',
};

type NumberField = 'times' | 'after' | 'probability' | Exclude<Option, 'message'>;

const FIELD_LABELS: Record<NumberField, string> = {
  times: 'Times',
  after: 'After',
  probability: 'Probability',
  retryAfterMs: OPTION_LABELS.retryAfterMs,
  delayMs: OPTION_LABELS.delayMs,
  httpStatus: OPTION_LABELS.httpStatus,
  grpcCode: OPTION_LABELS.grpcCode,
  rejectItems: OPTION_LABELS.rejectItems,
};

/** A number as JSON writes one; `Number()` alone takes "", " ", "0x1f" and "Infinity", and turns "abc" into NaN, which JSON sends as null. */
const NUMBER_TEXT = /^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$/i;
/** A gRPC code may also be given by name; the server says whether the name is one. */
const CODE_NAME = /^[a-z_]+$/i;

/** The number fields of the form, as far as the chosen action shows them. */
const numberFields = (f: Form): NumberField[] => [
  'times',
  'after',
  'probability',
  ...ACTION_OPTIONS[f.action].filter((o): o is Exclude<Option, 'message'> => o !== 'message'),
];

/**
 * What is wrong with each number field that holds something else than a number; a rule is sent only when there
 * is nothing. Ranges (times at least 1, a probability up to 1...) are the server's to check: it names the field.
 */
function fieldErrors(f: Form): Partial<Record<NumberField, string>> {
  const out: Partial<Record<NumberField, string>> = {};
  for (const k of numberFields(f)) {
    const v = f[k].trim();
    if (!v || (NUMBER_TEXT.test(v) && Number.isFinite(Number(v))) || (k === 'grpcCode' && CODE_NAME.test(v))) continue;
    out[k] = `${FIELD_LABELS[k]}: ${JSON.stringify(v)} is not a number${k === 'grpcCode' ? ' or a code name' : ''}`;
  }
  return out;
}

function toRule(f: Form, signals: string[]): Record<string, unknown> {
  const rule: Record<string, unknown> = { action: f.action };
  if (f.side === 'upstream') rule.side = 'upstream';
  if (f.skipSignals.length) rule.signals = signals.filter((s) => !f.skipSignals.includes(s));
  if (f.transports.length < TRANSPORTS.length) rule.transports = f.transports;
  if (f.times.trim()) rule.times = Number(f.times);
  if (f.after.trim()) rule.after = Number(f.after);
  if (f.probability.trim()) rule.probability = Number(f.probability);
  const match: Record<string, Record<string, string>> = {};
  if (f.service) match.resource = { 'service.name': f.service };
  if (f.header) {
    const eq = f.header.indexOf('=');
    const name = (eq < 0 ? f.header : f.header.slice(0, eq)).trim();
    match.headers = { [name]: eq < 0 ? '' : f.header.slice(eq + 1).trim() };
  }
  if (Object.keys(match).length) rule.match = match;
  for (const opt of ACTION_OPTIONS[f.action]) {
    const v = f[opt].trim();
    if (!v) continue;
    rule[opt] = opt === 'message' || (opt === 'grpcCode' && CODE_NAME.test(v)) ? v : Number(v);
  }
  return rule;
}

function describeRule(r: FaultRule): string {
  const parts: string[] = [];
  if (r.httpStatus !== undefined) parts.push(`HTTP ${String(r.httpStatus)}`);
  if (typeof r.grpcCode === 'number') parts.push(`gRPC ${GRPC_CODES[r.grpcCode] ?? r.grpcCode}`);
  if (r.retryAfterMs !== undefined && r.retryAfterMs !== null) parts.push(`retry after ${String(r.retryAfterMs)} ms`);
  if (r.delayMs !== undefined) parts.push(`${String(r.delayMs)} ms`);
  if (r.rejectItems !== undefined) parts.push(`reject ${String(r.rejectItems)}`);
  return parts.join(' · ');
}

function describeMatch(r: FaultRule): string {
  const m = (r.match ?? {}) as { resource?: Record<string, string>; headers?: Record<string, string> };
  const parts = [...Object.entries(m.resource ?? {}).map(([k, v]) => `${k}=${v}`), ...Object.entries(m.headers ?? {}).map(([k, v]) => `header ${k}=${v}`)];
  const when: string[] = [];
  if (typeof r.after === 'number' && r.after > 0) when.push(`after ${r.after}`);
  if (typeof r.probability === 'number' && r.probability < 1) when.push(`p=${r.probability}`);
  return [...parts, ...when].join(', ');
}

export function Faults() {
  const [rules, setRules] = useState<FaultRule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState<Form>(EMPTY_FORM);
  const signals = useSignals();
  const [reports, setReports] = useState<Record<string, RetryReport>>({});

  const load = useCallback(async () => {
    try {
      const { faults } = await api.faults();
      setRules(faults);
      // Only a rule that has answered something has retries to judge.
      const applied = faults.filter((r) => Number(r.applied ?? 0) > 0);
      const loaded = await Promise.all(applied.map(async (r) => [r.id, await fetchReport(r.id)] as const));
      setReports(Object.fromEntries(loaded));
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  usePoll(load);

  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((f) => ({ ...f, [k]: v }));
  const toggleIn = (k: 'skipSignals' | 'transports', v: string) => setForm((f) => ({ ...f, [k]: f[k].includes(v) ? f[k].filter((x) => x !== v) : [...f[k], v] }));

  const invalid = fieldErrors(form);
  const {
    busy,
    error: formError,
    submit,
  } = useSubmit(async () => {
    const wrong = Object.values(fieldErrors(form));
    if (wrong.length) throw new Error(`Not added: ${wrong.join('; ')}`);
    await api.addFault(
      toRule(
        form,
        signals.map((s) => s.name),
      ),
    );
    await load();
  });

  /** A number field, marked and explained (in its own caption, so the form does not move) while it holds no number. */
  const numberField = (k: NumberField, placeholder: string, inputMode: 'numeric' | 'decimal') => (
    <label key={k}>
      <span>
        {FIELD_LABELS[k]}
        {invalid[k] && (
          <b className="error-text" role="alert" data-field-error={k} title={invalid[k]}>
            {' '}
            · not a number
          </b>
        )}
      </span>
      <input
        inputMode={inputMode}
        placeholder={placeholder}
        value={form[k]}
        onChange={(e) => set(k, e.target.value)}
        aria-label={FIELD_LABELS[k]}
        aria-invalid={invalid[k] ? true : undefined}
        style={invalid[k] ? { borderColor: 'var(--error)' } : undefined}
      />
    </label>
  );

  const remove = async (id: string) => {
    await api.removeFault(id).catch((e: Error) => setError(e.message));
    await load();
  };

  const removeAll = async () => {
    await api.removeAllFaults().catch((e: Error) => setError(e.message));
    await load();
  };

  return (
    <div className="view scroll faults">
      <section className="card">
        <div className="card-head">
          <h2>Active rules</h2>
          <span className="muted small">checked in order; the first rule that matches a request decides its fault</span>
          <div className="spacer" />
          <button type="button" className="btn danger" disabled={!rules?.length} onClick={() => void removeAll()}>
            Remove all
          </button>
        </div>
        {error && <div className="error-text">{error}</div>}
        {!rules ? (
          <Empty>Loading…</Empty>
        ) : rules.length === 0 ? (
          <Empty>No fault rules: every request is answered normally. Add one below.</Empty>
        ) : (
          <table className="grid-table rules">
            <thead>
              <tr>
                <th>ID</th>
                <th>Action</th>
                <th>Answer</th>
                <th>Signals</th>
                <th>Transports</th>
                <th>Match</th>
                <th className="num">Matched</th>
                <th className="num">Applied</th>
                <th className="num">Remaining</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => [
                <tr key={r.id} className={r.spent ? 'spent' : ''} data-rule-id={r.id}>
                  <td className="mono">{r.id}</td>
                  <td>
                    <span className="badge fault">{r.action}</span>
                    {r.side === 'upstream' && (
                      <span className="muted small" title="acts on otlp-mock's call to the forward target, as if the upstream did it">
                        {' '}
                        upstream
                      </span>
                    )}
                    {r.spent ? <span className="muted small"> spent</span> : null}
                  </td>
                  <td className="small">{describeRule(r)}</td>
                  <td className="small">{(r.signals as string[] | undefined)?.join(', ')}</td>
                  <td className="small">{(r.transports as string[] | undefined)?.join(', ')}</td>
                  <td className="small ellipsis">{describeMatch(r)}</td>
                  <td className="num">{String(r.matched ?? 0)}</td>
                  <td className="num">{String(r.applied ?? 0)}</td>
                  <td className="num">{r.remaining === null || r.remaining === undefined ? '∞' : String(r.remaining)}</td>
                  <td>
                    <button type="button" className="btn small" onClick={() => void remove(r.id)} aria-label={`Remove ${r.id}`}>
                      Remove
                    </button>
                  </td>
                </tr>,
                reports[r.id] ? <ReportRow key={`${r.id}-report`} id={r.id} report={reports[r.id]} columns={10} /> : null,
              ])}
            </tbody>
          </table>
        )}
      </section>

      <section className="card">
        <div className="card-head">
          <h2>Add a rule</h2>
        </div>
        <div className="presets" role="group" aria-label="Presets">
          {PRESETS.map((p) => (
            <button
              key={p.action}
              type="button"
              title={p.title}
              className={`preset ${form.action === p.action ? 'on' : ''}`}
              onClick={() => setForm({ ...EMPTY_FORM, side: form.side, retryAfterMs: '', ...p.values, action: p.action })}
            >
              {p.action}
            </button>
          ))}
        </div>
        <form className="fault-form" onSubmit={(e) => void submit(e)}>
          <label>
            <span>Action</span>
            <select value={form.action} onChange={(e) => set('action', e.target.value as Action)}>
              {Object.keys(ACTION_OPTIONS).map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </label>
          <label title="client: the answer to the request that reached otlp-mock; upstream: otlp-mock's call to the forward target, as if the upstream failed">
            <span>Side</span>
            <select value={form.side} onChange={(e) => set('side', e.target.value as Form['side'])}>
              <option value="client">client</option>
              <option value="upstream">upstream (forward target)</option>
            </select>
          </label>
          <fieldset>
            <legend>Signals</legend>
            {signals.map(({ name }) => (
              <label key={name} className="check">
                <input type="checkbox" checked={!form.skipSignals.includes(name)} onChange={() => toggleIn('skipSignals', name)} />
                {name}
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Transports</legend>
            {TRANSPORTS.map((t) => (
              <label key={t} className="check">
                <input type="checkbox" checked={form.transports.includes(t)} onChange={() => toggleIn('transports', t)} />
                {t}
              </label>
            ))}
          </fieldset>
          {numberField('times', 'unlimited', 'numeric')}
          {numberField('after', '0', 'numeric')}
          {numberField('probability', '1', 'decimal')}
          <label>
            <span>service.name</span>
            <input placeholder="any" value={form.service} onChange={(e) => set('service', e.target.value)} />
          </label>
          <label>
            <span>Header</span>
            <input placeholder="name=value" value={form.header} onChange={(e) => set('header', e.target.value)} />
          </label>
          {ACTION_OPTIONS[form.action].map((opt) =>
            opt === 'message' ? (
              <label key={opt} className="wide">
                <span>{OPTION_LABELS.message}</span>
                <input placeholder="default" value={form.message} onChange={(e) => set('message', e.target.value)} inputMode="text" />
              </label>
            ) : (
              numberField(opt, 'default', 'numeric')
            ),
          )}
          <div className="form-actions">
            <button type="submit" className="btn primary" disabled={busy}>
              Add {form.action} rule
            </button>
            {formError && <span className="error-text">{formError}</span>}
          </div>
        </form>
      </section>
    </div>
  );
}
