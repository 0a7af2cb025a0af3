import { useEffect, useRef, useState } from 'react';
import { Icon } from '../components/Icon';
import { api } from '../api';
import { useWatchAll } from '../live';
import { shownOrder, useSignals } from '../signals';
import { href, Link, setQueryParam, useRoute } from '../router';
import { formatCount, formatTime, formatValue } from '../format';
import { AttrTable } from '../components/AttrTable';
import { ServiceDot } from '../components/Service';
import { Empty, Toolbar, Total } from '../components/Toolbar';
import type { ResourceInfo } from '../generated/api';

/** How many of a signal's items the store holds of an instance: the field named by the signal's short word. */
const countOf = (r: ResourceInfo, short: string) => Number((r as unknown as Record<string, unknown>)[short] ?? 0);

const title = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** A full scan of the store answers this page: while data streams in, it is asked again at most this often. */
const REFRESH_MS = 3_000;

/** How long an instance may stay silent and still count as live: a metrics exporter sends every 60 s by default. */
const SILENCE: { label: string; s: number }[] = [
  { label: '10 seconds', s: 10 },
  { label: '1 minute', s: 60 },
  { label: '2 minutes', s: 120 },
  { label: '5 minutes', s: 300 },
  { label: '15 minutes', s: 900 },
];
const DEFAULT_SILENCE_S = 120;

/** The state column is a function of the clock too: it is drawn again this often with nothing new arriving. */
const TICK_MS = 5_000;

/** Live when the instance sent something within the last `silenceS` seconds; null when the journal no longer knows. */
function isLive(r: ResourceInfo, now: number, silenceS: number): boolean | null {
  const last = Date.parse(r.lastSeen);
  return Number.isFinite(last) ? now - last <= silenceS * 1000 : null;
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

/** Attributes that usually name an instance, tried first when telling instances of a service apart. */
const INSTANCE_KEYS = ['service.instance.id', 'host.name', 'k8s.pod.name', 'container.id', 'process.pid'];

/**
 * The attribute that tells this instance from the other instances of its service, as the `attr` filter
 * of the other views (`key=value`): 'only' when the service has one instance, whose service filter is
 * enough, null when no attribute of its own tells it apart.
 */
function instanceFilter(r: ResourceInfo, all: ResourceInfo[]): string | 'only' | null {
  const others = all.filter((o) => o.service === r.service && o !== r);
  if (others.length === 0) return 'only';
  const keys = [...INSTANCE_KEYS, ...Object.keys(r.attributes).sort()];
  for (const k of keys) {
    if (!(k in r.attributes)) continue;
    const v = formatValue(r.attributes[k]);
    if (others.every((o) => !(k in o.attributes) || formatValue(o.attributes[k]) !== v)) return `${k}=${v}`;
  }
  return null;
}

/** One row per service instance: what it is, what sent it, when, and what the store holds of it. */
export function Resources() {
  const signals = shownOrder(useSignals());
  const version = useWatchAll(
    signals.map((s) => s.name),
    '',
  );
  const [rows, setRows] = useState<ResourceInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const within = Number(useRoute().query.get('silence'));
  const silenceS = SILENCE.some((o) => o.s === within) ? within : DEFAULT_SILENCE_S;
  const now = useNow(TICK_MS);
  const last = useRef(0);
  const asked = useRef(0);
  const shown = useRef(0);
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  // A notice does not make an answer in flight stale: each answer is shown unless a later-asked one already was.
  // (Dropping it when the live feed first confirms the watch left the page empty until the next refresh.)
  useEffect(() => {
    const wait = Math.max(0, last.current + REFRESH_MS - Date.now());
    const timer = setTimeout(() => {
      last.current = Date.now();
      const n = ++asked.current;
      const fresh = () => mounted.current && n > shown.current;
      api
        .resources()
        .then((r) => {
          if (!fresh()) return;
          shown.current = n;
          setRows(r.resources);
          setError(null);
        })
        .catch((e: Error) => fresh() && setError(e.message));
    }, wait);
    return () => clearTimeout(timer);
  }, [version]);

  return (
    <div className="view scroll">
      <Toolbar right={<Total total={rows?.length ?? null} noun="instances" />}>
        <span className="muted">Each service instance that sent something, told apart by its full resource.</span>
        <label className="muted small">
          Live when heard from within{' '}
          <select
            className="filter"
            aria-label="Live when heard from within"
            value={silenceS}
            onChange={(e) => setQueryParam('silence', e.target.value === String(DEFAULT_SILENCE_S) ? undefined : e.target.value)}
          >
            {SILENCE.map((o) => (
              <option key={o.s} value={o.s}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
      </Toolbar>
      {error && <div className="banner error">{error}</div>}
      {!rows ? (
        <Empty>Loading…</Empty>
      ) : rows.length === 0 ? (
        <Empty>Nothing stored yet: every service instance that sends telemetry gets a row here.</Empty>
      ) : (
        <table className="grid-table resources" aria-label="Resources">
          <thead>
            <tr>
              <th>Service</th>
              <th>Instance</th>
              <th>State</th>
              <th>SDK</th>
              <th>First seen</th>
              <th>Last seen</th>
              {signals.map((s) => (
                <th key={s.name} className="num">
                  {title(s.short)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const found = instanceFilter(r, rows);
              const attr = found === 'only' ? null : found;
              const query = { service: r.service, attr: attr ?? undefined };
              const isOpen = open === r.key;
              const state = isLive(r, now, silenceS);
              return [
                <tr key={r.key} className={`resource-row ${isOpen ? 'open' : ''}`} data-resource={r.key} onClick={() => setOpen(isOpen ? null : r.key)}>
                  <td>
                    <span className="muted">
                      <Icon name={isOpen ? 'open' : 'right'} />{' '}
                    </span>
                    <ServiceDot service={r.service} />
                    <b>{r.service || '(no service.name)'}</b>
                  </td>
                  <td className="mono small">
                    {attr ?? <span className="muted">{found === 'only' ? 'the only instance' : 'no attribute of its own (see its resource)'}</span>}
                  </td>
                  <td data-state={state === null ? 'unknown' : state ? 'live' : 'stopped'}>
                    {state === null ? (
                      <span className="muted" title="The journal no longer holds its requests">
                        unknown
                      </span>
                    ) : state ? (
                      <span className="badge ok" title={`Last heard from ${ago(now - Date.parse(r.lastSeen))}`}>
                        live
                      </span>
                    ) : (
                      <span className="badge warn" title={`Nothing from it within ${SILENCE.find((o) => o.s === silenceS)?.label}`}>
                        stopped {ago(now - Date.parse(r.lastSeen))}
                      </span>
                    )}
                  </td>
                  <td>{r.sdk ? `${r.sdk.name || 'SDK'} ${r.sdk.language} ${r.sdk.version}`.trim() : <span className="muted">not named</span>}</td>
                  <td className="mono small">{r.firstSeen ? formatTime(Date.parse(r.firstSeen)) : '—'}</td>
                  <td className="mono small">{r.lastSeen ? formatTime(Date.parse(r.lastSeen)) : '—'}</td>
                  {signals.map((s) => (
                    <td key={s.name} className="num" onClick={(e) => e.stopPropagation()}>
                      {countOf(r, s.short) ? (
                        <Link to={href(`/${s.name}`, query)} data-link={s.name}>
                          {formatCount(countOf(r, s.short))}
                        </Link>
                      ) : (
                        '—'
                      )}
                    </td>
                  ))}
                </tr>,
                isOpen && (
                  <tr key={`${r.key}-detail`} className="resource-detail">
                    <td colSpan={6 + signals.length}>
                      <div className="detail-cols">
                        <div>
                          <h3 className="sub">Resource attributes</h3>
                          <AttrTable attrs={r.attributes} />
                        </div>
                        <div>
                          <h3 className="sub">Sent by</h3>
                          {r.userAgents.length ? (
                            r.userAgents.map((ua) => (
                              <div key={ua} className="mono small" data-user-agent={ua}>
                                {ua}
                              </div>
                            ))
                          ) : (
                            <div className="muted small">The journal no longer holds its requests.</div>
                          )}
                          <div className="section-actions resource-links">
                            {signals.map((s) => (
                              <Link key={s.name} className="btn small" to={href(`/${s.name}`, query)}>
                                {s.label}
                              </Link>
                            ))}
                          </div>
                        </div>
                      </div>
                    </td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
