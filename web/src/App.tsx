import { useEffect } from 'react';
import { Icon } from './components/Icon';
import { live, useLive } from './live';
import { Link, navigate, useRoute } from './router';
import { formatCount } from './format';
import { useKeys } from './keys';
import { useServiceColors } from './serviceColors';
import { Traces } from './views/Traces';
import { TraceView } from './views/TraceView';
import { Logs } from './views/Logs';
import { Metrics } from './views/Metrics';
import { RequestDetail, Requests } from './views/Requests';
import { Faults } from './views/Faults';
import { Forward } from './views/Forward';
import { Resources } from './views/Resources';
import { Profiles } from './views/Profiles';
import { Clients } from './views/Clients';
import { ServiceMap } from './views/ServiceMap';
import { shownOrder, useSignals } from './signals';
import type { SignalInfo } from './generated/api';

/** The tabs after the signals' own, which the server's signal table names (GET /api/signals). */
const MORE_TABS = [
  { path: '/requests', label: 'Requests' },
  { path: '/faults', label: 'Faults' },
  { path: '/forward', label: 'Forward' },
  { path: '/resources', label: 'Resources' },
  { path: '/clients', label: 'Clients' },
  { path: '/map', label: 'Service map' },
];

export function App() {
  useLive();
  const shown = shownOrder(useSignals());
  const tabs = [...shown.map((s) => ({ path: `/${s.name}`, label: s.label })), ...MORE_TABS];
  // Every view draws services in the server's colours: draw again when they arrive or change.
  useServiceColors();
  const route = useRoute();
  const [section, id] = route.segments;

  useEffect(() => {
    if (!section) navigate('/traces', { replace: true });
  }, [section]);

  const title = tabs.find((t) => t.path === `/${section}`)?.label;
  useEffect(() => {
    document.title = title ? `${title} · otlp-mock` : 'otlp-mock';
  }, [title]);

  useKeys((e) => {
    const n = Number(e.key);
    if (n >= 1 && n <= tabs.length) navigate(tabs[n - 1].path);
    else if (e.key === '/') {
      const input = document.querySelector<HTMLInputElement>('input.filter');
      if (!input) return;
      input.focus();
    } else if (e.key === 'p') {
      if (live.paused) live.resume();
      else live.pause();
    } else return;
    e.preventDefault();
  });

  let view;
  if (section === 'traces' && id) view = <TraceView traceId={id} route={route} />;
  else if (section === 'traces') view = <Traces route={route} />;
  else if (section === 'logs') view = <Logs route={route} />;
  else if (section === 'metrics') view = <Metrics route={route} />;
  else if (section === 'profiles') view = <Profiles route={route} />;
  else if (section === 'requests' && id) view = <RequestDetail id={id} />;
  else if (section === 'requests') view = <Requests route={route} />;
  else if (section === 'faults') view = <Faults />;
  else if (section === 'forward') view = <Forward />;
  else if (section === 'resources') view = <Resources />;
  else if (section === 'clients') view = <Clients />;
  else if (section === 'map') view = <ServiceMap route={route} />;
  else if (section) view = <div className="empty">Nothing at {route.path}.</div>;

  return (
    <div className="app">
      <header className="topbar">
        <Link to="/traces" className="brand">
          <span className="brand-dot" />
          otlp-mock
        </Link>
        <nav className="tabs">
          {tabs.map((t, i) => (
            <Link key={t.path} to={t.path} className={`tab ${`/${section}` === t.path ? 'active' : ''}`} title={`${t.label} (${i + 1})`}>
              {t.label}
            </Link>
          ))}
        </nav>
        <div className="spacer" />
        <Counts signals={shown} />
        <LiveControls />
      </header>
      {live.error && <div className="banner error">{live.error}</div>}
      <main className="main">{view}</main>
    </div>
  );
}

function Counts({ signals }: { signals: SignalInfo[] }) {
  const s = live.stats?.signals;
  return (
    <div className="counts" aria-label="Stored telemetry">
      {signals.map(({ name: signal, short: label }) => {
        const st = s?.[signal];
        const evicted = Number(st?.evicted ?? 0);
        return (
          <span key={signal} className="count-item" data-signal={signal}>
            <b>{formatCount(Number(st?.stored ?? 0))}</b> {label}
            {evicted > 0 && (
              <span className="evicted" title="Evicted: the oldest items were dropped to stay within the store's bounds">
                {' '}
                −{formatCount(evicted)}
              </span>
            )}
          </span>
        );
      })}
    </div>
  );
}

function LiveControls() {
  const status = live.status;
  return (
    <div className="live-controls">
      <span className={`status status-${status}`} title="Live feed" data-status={status}>
        <span className="status-dot" />
        {status === 'live' ? 'Live' : status === 'paused' ? 'Paused' : status === 'offline' ? 'Reconnecting' : 'Connecting'}
      </span>
      <button type="button" className="btn" onClick={() => (live.paused ? live.resume() : live.pause())} title="Pause or resume live updates (p)">
        {live.paused ? (
          <>
            <Icon name="play" /> Resume
          </>
        ) : (
          <>
            <Icon name="pause" /> Pause
          </>
        )}
      </button>
      <button
        type="button"
        className="btn danger"
        onClick={() => {
          if (confirm('Delete all stored spans, logs, metrics and requests?')) void live.clear();
        }}
        title="Delete all stored telemetry on the server"
      >
        Clear
      </button>
    </div>
  );
}
