import { useState } from 'react';
import { navigate } from '../router';

/** Windows back from now; choosing one writes its start into the URL, so the link names the same times later. */
const LOOKBACK: { label: string; ms: number }[] = [
  { label: 'Last 5 minutes', ms: 5 * 60_000 },
  { label: 'Last 15 minutes', ms: 15 * 60_000 },
  { label: 'Last hour', ms: 3_600_000 },
  { label: 'Last 6 hours', ms: 6 * 3_600_000 },
  { label: 'Last 24 hours', ms: 86_400_000 },
];

const pad = (n: number) => String(n).padStart(2, '0');

/** Unix milliseconds as a datetime-local input's value (local time, to the second). */
function toInput(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** What the URL holds (unix milliseconds, as the server takes them) as a number, NaN when unset. */
export function timeParam(v: string | null): number {
  return v && /^\d{1,13}$/.test(v) ? Number(v) : NaN;
}

function setParams(patch: Record<string, string | undefined>): void {
  const url = new URL(location.href);
  for (const [k, v] of Object.entries(patch)) {
    if (v) url.searchParams.set(k, v);
    else url.searchParams.delete(k);
  }
  navigate(url.pathname + url.search, { replace: true });
}

/**
 * A time range kept in the URL as `from` and `to` (unix milliseconds, both optional), which the lists
 * pass to the server as they are: a lookback from now, or any start and end.
 */
export function TimeRange({ from, to }: { from: string | null; to: string | null }) {
  const f = timeParam(from);
  const t = timeParam(to);
  const [custom, setCustom] = useState(false);
  const set = Number.isFinite(f) || Number.isFinite(t);
  return (
    <span className="time-range">
      <select
        className="filter"
        aria-label="Time range"
        value=""
        onChange={(e) => {
          const v = e.target.value;
          if (v === 'custom') setCustom(true);
          else if (v === 'all') {
            setCustom(false);
            setParams({ from: undefined, to: undefined });
          } else if (v) setParams({ from: String(Date.now() - Number(v)), to: undefined });
        }}
      >
        <option value="">{set ? 'Time range…' : 'Any time'}</option>
        {LOOKBACK.map((l) => (
          <option key={l.ms} value={l.ms}>
            {l.label}
          </option>
        ))}
        <option value="custom">From … to …</option>
        {set && <option value="all">Any time</option>}
      </select>
      {(set || custom) && (
        <>
          <input
            type="datetime-local"
            step={1}
            className="filter"
            aria-label="From"
            data-filter="from"
            value={toInput(f)}
            onChange={(e) => setParams({ from: e.target.value ? String(new Date(e.target.value).getTime()) : undefined })}
          />
          <span className="muted">–</span>
          <input
            type="datetime-local"
            step={1}
            className="filter"
            aria-label="To"
            data-filter="to"
            value={toInput(t)}
            onChange={(e) => setParams({ to: e.target.value ? String(new Date(e.target.value).getTime()) : undefined })}
          />
        </>
      )}
    </span>
  );
}
