import { Link } from '../router';
import { formatDuration } from '../format';
import { FAULTED } from '../outcome';
import type { JournalEntry } from '../generated/api';

/** One attempt of a batch, as GET /api/faults/:id/report and GET /api/requests/:id/attempts give it. */
export interface Attempt {
  id: number;
  time: string;
  /** null when nothing was sent back (outcome reset or hang) */
  status: number | null;
  outcome: JournalEntry['outcome'];
  fault: string | null;
  durationMs: number;
  gapMs: number | null;
}

/**
 * A batch's attempts on one time axis: each attempt's answer as a bar, the waits between them, and where
 * the server asked the exporter to wait (Retry-After / RetryInfo), so a retry that came too soon shows.
 */
export function AttemptTimeline({ attempts, waitMs = null, current }: { attempts: Attempt[]; waitMs?: number | null; current?: number }) {
  if (attempts.length === 0) return null;
  const start = (a: Attempt) => Date.parse(a.time);
  const t0 = start(attempts[0]);
  const last = attempts[attempts.length - 1];
  const asked = waitMs ?? 0;
  const end = Math.max(start(last) + last.durationMs, ...attempts.map((a) => (FAULTED.has(a.outcome) ? start(a) + a.durationMs + asked : 0)));
  const span = Math.max(1, end - t0);
  const pct = (ms: number) => `${(100 * ms) / span}%`;
  return (
    <div className="attempts" data-attempts={attempts.length} aria-label="Attempts of this batch">
      <div className="attempts-track">
        {attempts.map((a) => {
          const at = start(a) - t0;
          return (
            <div key={a.id}>
              {FAULTED.has(a.outcome) && asked > 0 && (
                <span className="attempt-wait" style={{ left: pct(at + a.durationMs), width: pct(asked) }} title={`asked to wait ${formatDuration(asked)}`} />
              )}
              <Link
                to={`/requests/${a.id}`}
                className={`attempt attempt-${a.outcome} ${a.id === current ? 'current' : ''}`}
                style={{ left: pct(at), width: `max(6px, ${pct(a.durationMs)})` }}
                title={`request ${a.id}: ${a.status ?? 'no answer'} ${a.outcome} after ${formatDuration(a.durationMs)}`}
                data-attempt={a.id}
              />
            </div>
          );
        })}
      </div>
      <div className="attempts-axis muted">
        <span>0</span>
        <span>{formatDuration(span)}</span>
      </div>
      <ol className="attempts-legend">
        {attempts.map((a, i) => (
          <li key={a.id} className={a.id === current ? 'current' : ''}>
            {a.gapMs !== null && <span className="muted">waited {formatDuration(a.gapMs)} → </span>}
            <Link to={`/requests/${a.id}`}>
              #{i + 1} {a.status ?? 'no answer'} {a.outcome}
            </Link>
          </li>
        ))}
      </ol>
    </div>
  );
}
