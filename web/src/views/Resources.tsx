import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { useWatchAll } from '../live';
import { shownOrder, useSignals } from '../signals';
import { href, Link } from '../router';
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
  const last = useRef(0);

  useEffect(() => {
    let current = true;
    const wait = Math.max(0, last.current + REFRESH_MS - Date.now());
    const timer = setTimeout(() => {
      last.current = Date.now();
      api
        .resources()
        .then((r) => current && (setRows(r.resources), setError(null)))
        .catch((e: Error) => current && setError(e.message));
    }, wait);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [version]);

  return (
    <div className="view scroll">
      <Toolbar right={<Total total={rows?.length ?? null} noun="instances" />}>
        <span className="muted">Each service instance that sent something, told apart by its full resource.</span>
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
              return [
                <tr key={r.key} className={`resource-row ${isOpen ? 'open' : ''}`} data-resource={r.key} onClick={() => setOpen(isOpen ? null : r.key)}>
                  <td>
                    <span className="muted">{isOpen ? '▾' : '▸'} </span>
                    <ServiceDot service={r.service} />
                    <b>{r.service || '(no service.name)'}</b>
                  </td>
                  <td className="mono small">
                    {attr ?? (
                      <span className="muted">
                        {found === 'only' ? 'the only instance' : 'no attribute of its own (see its resource)'}
                      </span>
                    )}
                  </td>
                  <td>
                    {r.sdk ? (
                      `${r.sdk.name || 'SDK'} ${r.sdk.language} ${r.sdk.version}`.trim()
                    ) : (
                      <span className="muted">not named</span>
                    )}
                  </td>
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
                    <td colSpan={5 + signals.length}>
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
