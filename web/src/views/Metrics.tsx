import { useMemo, useState } from 'react';
import { live, useLive, type MetricSeries } from '../live';
import { Link, href, navigate, type Route } from '../router';
import {
  attrsKey,
  formatNumber,
  formatTime,
  nsToMs,
  seriesColor,
  serviceColor,
  shortId,
  toNumber,
} from '../format';
import { BarChart, LineChart, type Bucket, type Series } from '../components/Chart';
import { AttrTable, Section } from '../components/AttrTable';
import { choices, Empty, FilterInput, Select, Toolbar } from '../components/Toolbar';
import { useListKeys } from '../keys';
import type { DataPoint } from '../types';

const TYPE_LABEL: Record<string, string> = {
  gauge: 'gauge',
  sum: 'sum',
  histogram: 'histogram',
  exponentialHistogram: 'exp. histogram',
  summary: 'summary',
};

const TEMPORALITY = ['unspecified', 'delta', 'cumulative'];

export function Metrics({ route }: { route: Route }) {
  const version = useLive();
  const q = route.query;
  const service = q.get('service') ?? '';
  const text = q.get('q') ?? '';
  const [selService, selName] = [route.segments[1] ?? '', route.segments[2] ?? ''];
  const [kbd, setKbd] = useState(-1);

  const all = useMemo(() => [...live.data.metrics.values()], [version]);
  const services = useMemo(() => [...new Set(all.map((m) => m.service))].sort(), [all]);
  const list = useMemo(() => {
    const needle = text.toLowerCase();
    return all
      .filter((m) => (!service || m.service === service) && (!needle || m.name.toLowerCase().includes(needle)))
      .sort((a, b) => a.name.localeCompare(b.name) || a.service.localeCompare(b.service));
  }, [all, service, text]);
  const selScope = q.get('scope');
  const selUnit = q.get('unit');
  const selected = all.find(
    (m) =>
      m.service === selService &&
      m.name === selName &&
      (selScope === null || m.scope.name === selScope) &&
      (selUnit === null || m.unit === selUnit),
  );
  // Service and name identify a metric in practice; scope and unit join the URL only when they must.
  const twins = (m: MetricSeries) => all.filter((o) => o.service === m.service && o.name === m.name).length > 1;
  const linkTo = (m: MetricSeries) =>
    href(`/metrics/${encodeURIComponent(m.service)}/${encodeURIComponent(m.name)}`, {
      service,
      q: text,
      ...(twins(m) ? { scope: m.scope.name, unit: m.unit } : {}),
    });
  const selIndex = selected ? list.indexOf(selected) : kbd;
  useListKeys({
    count: list.length,
    selected: selIndex,
    setSelected: (i) => {
      setKbd(i);
      navigate(linkTo(list[i]), { replace: true });
    },
    open: () => undefined,
  });

  return (
    <div className="view">
      <Toolbar right={<span className="muted">{list.length} metrics</span>}>
        <Select
          param="service"
          label="Service"
          value={service}
          options={choices('All services', services)}
        />
        <FilterInput param="q" label="Metric name" value={text} placeholder="Metric name contains…" width={220} />
      </Toolbar>
      {all.length === 0 ? (
        <Empty>
          {live.loading ? 'Loading…' : 'No metrics yet. Data points sent to /v1/metrics or MetricsService/Export appear here.'}
        </Empty>
      ) : (
        <div className="split with-list">
          <div className="metric-list" role="list" aria-label="Metrics">
            {list.map((m) => (
              <Link key={m.key} to={linkTo(m)} className={`metric-item ${m === selected ? 'selected' : ''}`}>
                <div className="metric-name ellipsis" title={m.name}>
                  {m.name}
                </div>
                <div className="metric-meta">
                  <span className="svc-dot" style={{ background: serviceColor(m.service) }} />
                  <span className="ellipsis">
                    {m.service}
                    {twins(m) && <span className="muted"> · {m.scope.name || '(no scope)'}</span>}
                  </span>
                  <span className="spacer" />
                  <span className={`type type-${m.type}`}>{TYPE_LABEL[m.type] ?? m.type}</span>
                  {m.unit && <span className="unit">{m.unit}</span>}
                </div>
              </Link>
            ))}
          </div>
          <div className="metric-detail">
            {selected ? (
              <MetricDetail metric={selected} />
            ) : (
              <Empty>{selName ? `No metric ${selName} from ${selService}.` : 'Select a metric.'}</Empty>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

interface SeriesData {
  key: string;
  attrs: DataPoint['attributes'];
  points: DataPoint[];
}

function groupSeries(points: DataPoint[]): SeriesData[] {
  const map = new Map<string, SeriesData>();
  for (const p of points) {
    const key = attrsKey(p.attributes);
    let s = map.get(key);
    if (!s) {
      s = { key, attrs: p.attributes, points: [] };
      map.set(key, s);
    }
    s.points.push(p);
  }
  for (const s of map.values()) s.points.sort((a, b) => nsToMs(a.timeUnixNano) - nsToMs(b.timeUnixNano));
  return [...map.values()];
}

function pointValue(p: DataPoint): number {
  return p.asDouble !== undefined ? toNumber(p.asDouble) : toNumber(p.asInt);
}

function MetricDetail({ metric }: { metric: MetricSeries }) {
  const [mode, setMode] = useState<'value' | 'rate'>('value');
  const [pick, setPick] = useState<string | null>(null);
  const series = groupSeries(metric.dataPoints);
  const canRate = metric.type === 'sum' && metric.aggregationTemporality === 2;
  const last = metric.dataPoints[metric.dataPoints.length - 1];
  const exemplars = metric.dataPoints
    .flatMap((p) => p.exemplars ?? [])
    .filter((e) => e.traceId)
    .slice(-50)
    .reverse();

  return (
    <div className="metric-body">
      <div className="metric-title">
        <h2>{metric.name}</h2>
        <div className="facts">
          <span className={`type type-${metric.type}`}>{TYPE_LABEL[metric.type] ?? metric.type}</span>
          {metric.unit && <span className="unit">{metric.unit}</span>}
          {metric.aggregationTemporality !== undefined && (
            <span className="muted">{TEMPORALITY[metric.aggregationTemporality] ?? metric.aggregationTemporality}</span>
          )}
          {metric.isMonotonic && <span className="muted">monotonic</span>}
          <span className="muted">
            {metric.dataPoints.length} points · {series.length} series · last {last ? formatTime(nsToMs(last.timeUnixNano)) : '—'}
          </span>
        </div>
        {metric.description && <div className="muted">{metric.description}</div>}
      </div>
      {(metric.type === 'sum' || metric.type === 'gauge') && (
        <NumberSeries series={series} unit={metric.unit} mode={canRate ? mode : 'value'} setMode={canRate ? setMode : undefined} />
      )}
      {(metric.type === 'histogram' || metric.type === 'exponentialHistogram') && (
        <HistogramView series={series} pick={pick} setPick={setPick} exponential={metric.type === 'exponentialHistogram'} />
      )}
      {metric.type === 'summary' && <SummaryView series={series} />}
      <Section title="Exemplars" count={exemplars.length}>
        {exemplars.length === 0 ? (
          <div className="muted small">none</div>
        ) : (
          <table className="grid-table">
            <thead>
              <tr>
                <th>Time</th>
                <th className="num">Value</th>
                <th>Trace</th>
              </tr>
            </thead>
            <tbody>
              {exemplars.map((e, i) => (
                <tr key={i}>
                  <td className="mono muted">{formatTime(nsToMs(e.timeUnixNano))}</td>
                  <td className="num">{formatNumber(e.asDouble !== undefined ? toNumber(e.asDouble) : toNumber(e.asInt))}</td>
                  <td>
                    <Link className="mono" to={`/traces/${e.traceId}${e.spanId ? `?span=${e.spanId}` : ''}`}>
                      {shortId(e.traceId!, 16)}
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Resource" count={Object.keys(metric.resource).length}>
        <AttrTable attrs={metric.resource} />
      </Section>
      <Section title="Scope">
        <div className="mono small">
          {metric.scope.name || <span className="muted">(unnamed)</span>} {metric.scope.version}
        </div>
      </Section>
    </div>
  );
}

function NumberSeries({
  series,
  unit,
  mode,
  setMode,
}: {
  series: SeriesData[];
  unit: string;
  mode: 'value' | 'rate';
  setMode?: (m: 'value' | 'rate') => void;
}) {
  const lines: Series[] = series.map((s, i) => {
    const pts = s.points.map((p) => ({ x: nsToMs(p.timeUnixNano), y: pointValue(p) }));
    const rated =
      mode === 'rate'
        ? pts.slice(1).map((p, j) => ({ x: p.x, y: p.x > pts[j].x ? ((p.y - pts[j].y) * 1000) / (p.x - pts[j].x) : NaN }))
        : pts;
    return { label: s.key, color: seriesColor(i), points: rated };
  });
  return (
    <>
      {setMode && (
        <div className="segmented">
          <button type="button" className={mode === 'value' ? 'on' : ''} onClick={() => setMode('value')}>
            Value
          </button>
          <button type="button" className={mode === 'rate' ? 'on' : ''} onClick={() => setMode('rate')}>
            Rate /s
          </button>
        </div>
      )}
      <LineChart series={lines} unit={mode === 'rate' ? `${unit}/s` : unit} />
      <table className="grid-table">
        <thead>
          <tr>
            <th>Series (attributes)</th>
            <th className="num">Points</th>
            <th className="num">Min</th>
            <th className="num">Max</th>
            <th className="num">Last</th>
          </tr>
        </thead>
        <tbody>
          {series.map((s, i) => {
            const values = s.points.map(pointValue).filter(Number.isFinite);
            return (
              <tr key={s.key}>
                <td>
                  <span className="swatch" style={{ background: seriesColor(i) }} />
                  {s.key || <span className="muted">(no attributes)</span>}
                </td>
                <td className="num">{s.points.length}</td>
                <td className="num">{values.length ? formatNumber(Math.min(...values)) : '—'}</td>
                <td className="num">{values.length ? formatNumber(Math.max(...values)) : '—'}</td>
                <td className="num strong">{values.length ? formatNumber(values[values.length - 1]) : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function explicitBuckets(p: DataPoint): Bucket[] {
  const bounds = (p.explicitBounds ?? []).map(toNumber);
  const counts = (p.bucketCounts ?? []).map(Number);
  return counts.map((count, i) => ({ label: i < bounds.length ? formatNumber(bounds[i]) : '+Inf', count }));
}

/** Exponential buckets: bucket i of a side covers (base^i, base^(i+1)] with base = 2^(2^-scale). */
function exponentialBuckets(p: DataPoint): Bucket[] {
  const base = 2 ** (2 ** -(p.scale ?? 0));
  const out: Bucket[] = [];
  const neg = p.negative?.bucketCounts ?? [];
  for (let i = neg.length - 1; i >= 0; i--)
    out.push({ label: `-${formatNumber(base ** ((p.negative?.offset ?? 0) + i))}`, count: Number(neg[i]) });
  if (Number(p.zeroCount ?? 0) > 0 || neg.length) out.push({ label: '0', count: Number(p.zeroCount ?? 0) });
  const pos = p.positive?.bucketCounts ?? [];
  for (let i = 0; i < pos.length; i++)
    out.push({ label: formatNumber(base ** ((p.positive?.offset ?? 0) + i + 1)), count: Number(pos[i]) });
  return out;
}

function HistogramView({
  series,
  pick,
  setPick,
  exponential,
}: {
  series: SeriesData[];
  pick: string | null;
  setPick: (k: string) => void;
  exponential: boolean;
}) {
  const current = series.find((s) => s.key === pick) ?? series[0];
  if (!current) return null;
  const p = current.points[current.points.length - 1];
  const count = Number(p.count ?? 0);
  const sum = p.sum !== undefined ? toNumber(p.sum) : NaN;
  const countLine: Series[] = series.map((s, i) => ({
    label: s.key,
    color: seriesColor(i),
    points: s.points.map((q) => ({ x: nsToMs(q.timeUnixNano), y: Number(q.count ?? 0) })),
  }));
  return (
    <>
      <div className="facts">
        <span className="muted">Latest point of</span>
        <select className="filter" aria-label="Series" value={current.key} onChange={(e) => setPick(e.target.value)}>
          {series.map((s) => (
            <option key={s.key} value={s.key}>
              {s.key || '(no attributes)'}
            </option>
          ))}
        </select>
        <span>
          count <b>{formatNumber(count)}</b>
        </span>
        {Number.isFinite(sum) && (
          <span>
            sum <b>{formatNumber(sum)}</b>
          </span>
        )}
        {count > 0 && Number.isFinite(sum) && (
          <span>
            avg <b>{formatNumber(sum / count)}</b>
          </span>
        )}
        {p.min !== undefined && (
          <span>
            min <b>{formatNumber(toNumber(p.min))}</b>
          </span>
        )}
        {p.max !== undefined && (
          <span>
            max <b>{formatNumber(toNumber(p.max))}</b>
          </span>
        )}
        {exponential && <span className="muted">scale {p.scale ?? 0}</span>}
      </div>
      <BarChart buckets={exponential ? exponentialBuckets(p) : explicitBuckets(p)} />
      <h4 className="sub">Count over time</h4>
      <LineChart series={countLine} height={160} />
    </>
  );
}

function SummaryView({ series }: { series: SeriesData[] }) {
  return (
    <table className="grid-table">
      <thead>
        <tr>
          <th>Series (attributes)</th>
          <th className="num">Count</th>
          <th className="num">Sum</th>
          <th>Quantiles (latest)</th>
        </tr>
      </thead>
      <tbody>
        {series.map((s) => {
          const p = s.points[s.points.length - 1];
          return (
            <tr key={s.key}>
              <td>{s.key || <span className="muted">(no attributes)</span>}</td>
              <td className="num">{formatNumber(Number(p.count ?? 0))}</td>
              <td className="num">{formatNumber(toNumber(p.sum))}</td>
              <td>
                {(p.quantileValues ?? []).map((qv) => (
                  <span key={qv.quantile} className="chip">
                    p{+(qv.quantile * 100).toFixed(2)} = {formatNumber(toNumber(qv.value))}
                  </span>
                ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
