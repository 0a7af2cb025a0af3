import { useCallback, useState } from 'react';
import { api } from '../api';
import { formatBytes, formatCount, formatDuration, formatTime, seriesColor } from '../format';
import { LineChart, type Series } from '../components/Chart';
import { ServiceDot } from '../components/Service';
import { Empty, Toolbar, Total } from '../components/Toolbar';
import { usePoll } from '../components/usePoll';
import type { paths } from '../generated/api';

/** GET /api/clients's answer and one of its rows, as server/api/clients.js's schema declares them. */
type ClientList = paths['/api/clients']['get']['responses'][200]['content']['application/json'];
type ClientRow = ClientList['clients'][number];

/** Figures move with every request and the live feed does not announce them: asked again this often. */
const REFRESH_MS = 2_000;

/** A duration with its unit even when it is zero: answers often take under a millisecond. */
const duration = (ms: number) => (ms === 0 ? '0 ms' : formatDuration(ms));

/** One line per series, over the seconds the window holds. */
function seriesOf(row: ClientRow, lines: { label: string; value: (p: ClientRow['series'][number]) => number }[]): Series[] {
  return lines.map((line, i) => ({
    label: line.label,
    color: seriesColor(i),
    segments: [row.series.map((p) => ({ x: p.t, y: line.value(p) }))],
  }));
}

function Figure({ label, value, title }: { label: string; value: string; title?: string }) {
  return (
    <div className="client-figure" title={title} data-figure={label}>
      <div className="muted small">{label}</div>
      <div className="mono">{value}</div>
    </div>
  );
}

function ClientCard({ row }: { row: ClientRow }) {
  const encodings = Object.entries(row.compression.encodings)
    .map(([name, n]) => `${name} ×${n}`)
    .join(', ');
  return (
    <section className="client-card" data-client={row.key} aria-label={`Client ${row.service} ${row.instance}`}>
      <header className="client-head">
        <ServiceDot service={row.service} />
        <b>{row.service || '(no service.name)'}</b>
        {row.instance && <span className="mono small">{row.instance}</span>}
        <span className="muted small">{row.userAgent || '(no user agent)'}</span>
        <span className="spacer" />
        <span className="muted small">
          {row.wires.join(', ')} · {row.signals.join(', ')} · {formatTime(Date.parse(row.firstSeen))} – {formatTime(Date.parse(row.lastSeen))}
        </span>
      </header>
      {!row.window.complete && <div className="banner small">More requests than the last ones kept per client: medians and charts read the most recent ones.</div>}
      <div className="client-figures">
        <Figure label="requests" value={formatCount(row.requests)} />
        <Figure label="items" value={formatCount(row.items)} />
        <Figure label="bytes on the wire" value={formatBytes(row.bytes.wire)} />
        <Figure label="bytes decoded" value={formatBytes(row.bytes.decoded)} />
        <Figure label="bytes per item" value={row.bytes.perItem.toFixed(1)} />
        <Figure label="compression" value={`${encodings || '—'} · ${row.compression.ratio.toFixed(2)}×`} title="decoded bytes per wire byte" />
        <Figure label="batch min / median / max" value={`${row.batch.min} / ${row.batch.median} / ${row.batch.max}`} />
        <Figure label="export interval" value={duration(row.intervalMs)} title="median gap between requests of one signal" />
        <Figure label="concurrency" value={String(row.concurrency)} title="most requests in flight at once" />
        <Figure label="our answer median / p99" value={`${duration(row.answerMs.median)} / ${duration(row.answerMs.p99)}`} />
        <Figure label="faults / retries" value={`${row.faults} / ${row.retries}`} />
      </div>
      <div className="client-charts">
        <div>
          <div className="muted small">requests and items per second</div>
          <LineChart
            height={120}
            series={seriesOf(row, [
              { label: 'requests', value: (p) => p.requests },
              { label: 'items', value: (p) => p.items },
              { label: 'faults', value: (p) => p.faults },
            ])}
          />
        </div>
        <div>
          <div className="muted small">bytes per second</div>
          <LineChart
            height={120}
            unit="By"
            series={seriesOf(row, [
              { label: 'wire', value: (p) => p.bytes },
              { label: 'decoded', value: (p) => p.decoded },
            ])}
          />
        </div>
      </div>
    </section>
  );
}

/** What each client sends and how: one card per user agent and service instance, with its figures and charts. */
export function Clients() {
  const [list, setList] = useState<ClientList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [since, setSince] = useState<string | null>(null);
  const load = useCallback(
    () =>
      api
        .clients<ClientList>(since ? `since=${encodeURIComponent(since)}` : '')
        .then((l) => (setList(l), setError(null)))
        .catch((e: Error) => setError(e.message)),
    [since],
  );
  usePoll(load, REFRESH_MS);
  return (
    <div className="view scroll">
      <Toolbar right={<Total total={list?.total ?? null} noun="clients" />}>
        <span className="muted">Each client (user agent, service and instance): what it sends, and how.</span>
        <button type="button" data-action="window" onClick={() => setSince(new Date().toISOString())}>
          Start a window now
        </button>
        {since && (
          <button type="button" data-action="all" onClick={() => setSince(null)}>
            Everything (window from {formatTime(Date.parse(since))})
          </button>
        )}
        {list && list.evicted > 0 && (
          <span className="muted small">
            {list.evicted} clients no longer followed (at most {list.maxClients}; the least recently seen go first)
          </span>
        )}
      </Toolbar>
      {error && <div className="banner error">{error}</div>}
      {!list ? (
        <Empty>Loading…</Empty>
      ) : list.clients.length === 0 ? (
        <Empty>{since ? 'Nothing sent since the window started.' : 'Nothing received yet: every client that sends telemetry gets a card here.'}</Empty>
      ) : (
        <div className="clients" aria-label="Clients">
          {list.clients.map((row) => (
            <ClientCard key={row.key} row={row} />
          ))}
        </div>
      )}
    </div>
  );
}
