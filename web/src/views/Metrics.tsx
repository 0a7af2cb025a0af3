import { markBidi } from '../text';
import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { useWatch } from '../live';
import { Link, href, navigate, setQueryParam, type Route } from '../router';
import { attrsKey, formatNumber, formatTime, formatUnit, formatValue, nsToMs, seriesColor, shortId, toNumber } from '../format';
import { BarChart, LineChart, type Bucket, type ChartPoint, type Marker, type Series } from '../components/Chart';
import { ServiceDot } from '../components/Service';
import { TimeRange } from '../components/TimeRange';
import { percentiles } from '../components/percentiles';
import { attrQuery } from '../components/attrFilter';
import { AttrTable, Section } from '../components/AttrTable';
import { Empty, FilterInput, ListEmpty, Toolbar } from '../components/Toolbar';
import { ServiceSelect } from '../components/ServiceSelect';
import { useListKeys } from '../keys';
import type { Attributes, DataPoint, Exemplar, Metric, MetricListItem } from '../generated/api';
import type { MetricInfo } from '../types';

const TYPE_LABEL: Record<string, string> = {
  gauge: 'gauge',
  sum: 'sum',
  histogram: 'histogram',
  exponentialHistogram: 'exp. histogram',
  summary: 'summary',
};

const TEMPORALITY = ['unspecified', 'delta', 'cumulative'];

/** Every metric the server holds fits: a list entry without its points is a few hundred bytes. */
const LIST_LIMIT = 10_000;

/**
 * A list entry: one metric name of one service, scope, type and unit. Each run of the service (another
 * `service.instance.id`, host or pid) is a metric of its own on the server; here they share one entry and
 * one chart, a line per instance and attribute set, as a dashboard shows them.
 */
interface MetricGroup {
  id: string;
  name: string;
  service: string;
  type: string;
  unit: string;
  scope: MetricInfo['scope'];
  instances: MetricListItem[];
}

const groupId = (m: MetricInfo) => [m.service, m.scope.name, m.name, m.type, m.unit].join('\u0000');

/** The server sorts by name, then service: the instances of one group arrive next to each other. */
function groupMetrics(metrics: MetricListItem[]): MetricGroup[] {
  const groups = new Map<string, MetricGroup>();
  for (const m of metrics) {
    const id = groupId(m);
    let g = groups.get(id);
    if (!g) {
      g = { id, name: m.name, service: m.service, type: m.type, unit: m.unit, scope: m.scope, instances: [] };
      groups.set(id, g);
    }
    g.instances.push(m);
  }
  return [...groups.values()];
}

interface Loaded<T> {
  query: string | null;
  data: T | null;
  error: string | null;
}

/**
 * The server's answer to `query`, fetched again whenever `version` changes. One request at a time: a change
 * notice during a fetch fetches once more after it, so a slow answer is never abandoned for a newer one.
 */
function useServerData<T>(query: string | null, version: number, load: (query: string, signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ query: null, data: null, error: null });
  const run = useRef<{ query: string; abort: AbortController; busy: boolean; again: boolean } | null>(null);
  useEffect(() => {
    if (query === null) return;
    let current = run.current;
    if (current?.query === query && current.busy) {
      current.again = true;
      return;
    }
    if (current?.query !== query) {
      current?.abort.abort();
      current = { query, abort: new AbortController(), busy: false, again: false };
      run.current = current;
    }
    const mine = current!;
    const go = (): void => {
      mine.busy = true;
      mine.again = false;
      load(query, mine.abort.signal)
        .then(
          (data) => run.current === mine && setState({ query, data, error: null }),
          (err: Error) => run.current === mine && !mine.abort.signal.aborted && setState((s) => ({ ...s, query, error: err.message })),
        )
        .finally(() => {
          mine.busy = false;
          if (mine.again && run.current === mine) go();
        });
    };
    go();
    // Callers pass a new `load` every render: query and version say when to fetch, load only how.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- load is read, not watched
  }, [query, version]);
  useEffect(() => () => run.current?.abort.abort(), []);
  return state;
}

/** The filters of a metrics query, and the view's attribute filter (`attr=key=value`) as the server's `attr.<key>`. */
const queryOf = (params: Record<string, string>, attr: string | null) => {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== ''));
  attrQuery(attr, query);
  return query.toString();
};

export function Metrics({ route }: { route: Route }) {
  const q = route.query;
  const service = q.get('service') ?? '';
  const text = q.get('q') ?? '';
  const [selService, selName] = [route.segments[1] ?? '', route.segments[2] ?? ''];
  const selScope = q.get('scope');
  const selUnit = q.get('unit');
  const selKey = q.get('key');
  const [kbd, setKbd] = useState(-1);

  const from = q.get('from') ?? '';
  const to = q.get('to') ?? '';
  const attr = q.get('attr') ?? '';
  const listQuery = queryOf({ service, nameContains: text, from, to }, attr);
  // The list names metrics, not their points: a point of a metric already listed changes nothing in it, unless
  // the list is of points in a time range or with some attributes, which a new point may bring a metric into.
  const listVersion = useWatch('metrics', listQuery, from || to || attr ? 'items' : 'metrics');
  const list = useServerData(`${listQuery}&limit=${LIST_LIMIT}`, listVersion, api.metricList);
  const groups = groupMetrics(list.data?.metrics ?? []);
  const instanceCount = list.data?.metrics.length ?? 0;

  const detailQuery = selName ? queryOf({ service: selService, name: selName, from, to }, attr) : null;
  const detailVersion = useWatch('metrics', detailQuery ?? listQuery);
  const detail = useServerData(detailQuery, detailVersion, api.metricPoints);
  const detailMetrics = detail.query === detailQuery ? (detail.data?.metrics ?? null) : null;
  const inGroup = (detailMetrics ?? []).filter((m) => (selScope === null || m.scope.name === selScope) && (selUnit === null || m.unit === selUnit));
  // Twins (same service and name, another scope or unit) are told apart by `scope` and `unit` in the URL.
  const selectedMetrics = inGroup.filter((m) => groupId(m) === groupId(inGroup[0]));

  const isSelected = (g: MetricGroup) =>
    g.service === selService && g.name === selName && (selScope === null || g.scope.name === selScope) && (selUnit === null || g.unit === selUnit);
  const twins = (g: MetricGroup) => groups.filter((o) => o.service === g.service && o.name === g.name).length > 1;
  const linkTo = (g: MetricGroup) =>
    href(`/metrics/${encodeURIComponent(g.service)}/${encodeURIComponent(g.name)}`, {
      service,
      q: text,
      from,
      to,
      attr,
      ...(twins(g) ? { scope: g.scope.name, unit: g.unit } : {}),
    });
  const selIndex = groups.findIndex(isSelected);
  useListKeys({
    count: groups.length,
    selected: selIndex >= 0 ? selIndex : kbd,
    setSelected: (i) => {
      setKbd(i);
      navigate(linkTo(groups[i]), { replace: true });
    },
    open: () => undefined,
  });

  const total = list.data?.total ?? null;
  return (
    <div className="view">
      <Toolbar
        right={
          <span className="muted" data-total={total ?? ''}>
            {total === null
              ? '…'
              : `${groups.length} ${groups.length === 1 ? 'metric' : 'metrics'}${instanceCount > groups.length ? ` · ${instanceCount} instances` : ''}${total > instanceCount ? ` (first ${instanceCount} of ${total})` : ''}`}
          </span>
        }
      >
        <ServiceSelect value={service} what="points" />
        <FilterInput param="q" label="Metric name" value={text} placeholder="Metric name contains…" width={220} />
        <FilterInput param="attr" label="Attributes (several: separated by ;)" value={attr} placeholder="key=value; key2=value2" width={220} />
        <TimeRange from={q.get('from')} to={q.get('to')} />
      </Toolbar>
      {groups.length === 0 && !selName ? (
        <ListEmpty
          list={{ loading: list.query === null, error: list.error, total }}
          filtered={Boolean(service || text || from || to || attr)}
          nothingStored="No metrics yet. Data points sent to /v1/metrics or MetricsService/Export appear here."
          noMatch="No metric matches these filters."
        />
      ) : (
        <div className="split with-list">
          <div className="metric-list" role="list" aria-label="Metrics">
            {groups.map((g) => (
              <Link key={g.id} to={linkTo(g)} className={`metric-item ${isSelected(g) ? 'selected' : ''}`} data-instances={g.instances.length}>
                <div className="metric-name ellipsis" title={g.name}>
                  {markBidi(g.name)}
                </div>
                <div className="metric-meta">
                  <ServiceDot service={g.service} />
                  <span className="ellipsis">{g.service}</span>
                  {g.instances.length > 1 && (
                    <span className="badge" title="Instances of the service (resources) that sent this metric">
                      {g.instances.length} instances
                    </span>
                  )}
                  <span className="spacer" />
                  <span className={`type type-${g.type}`}>{TYPE_LABEL[g.type] ?? g.type}</span>
                  {g.unit && <span className="unit">{g.unit}</span>}
                </div>
                {twins(g) && (
                  <div className="metric-scope mono small" data-scope={g.scope.name} title="The instrumentation scope: what tells this entry from its twin">
                    {g.scope.name || '(no scope)'}
                    {g.scope.version && <span className="muted"> {g.scope.version}</span>}
                  </div>
                )}
              </Link>
            ))}
          </div>
          <div className="metric-detail">
            {!selName ? (
              <Empty>Select a metric.</Empty>
            ) : detailMetrics === null ? (
              <Empty>{detail.error ?? 'Loading…'}</Empty>
            ) : selectedMetrics.length === 0 ? (
              <Empty>{`No metric ${selName} from ${selService}.`}</Empty>
            ) : (
              <MetricDetail metrics={selectedMetrics} focus={selKey} route={route} />
            )}
          </div>
        </div>
      )}
    </div>
  );
}

/**
 * What tells the instances of a metric apart: `service.instance.id` when they differ in it, else every
 * resource attribute they differ in, else their scope version. Nothing when there is one.
 */
function instanceLabels(metrics: MetricInfo[]): Map<string, string> {
  const labels = new Map<string, string>();
  if (metrics.length < 2) {
    for (const m of metrics) labels.set(m.key, '');
    return labels;
  }
  const keys = [...new Set(metrics.flatMap((m) => Object.keys(m.resource)))].sort();
  const differing = keys.filter((k) => new Set(metrics.map((m) => JSON.stringify(m.resource[k] ?? null))).size > 1);
  const shown = differing.includes('service.instance.id') ? ['service.instance.id'] : differing;
  for (const m of metrics) {
    const label = shown.length
      ? shown.map((k) => `${k}=${k in m.resource ? formatValue(m.resource[k]) : '(none)'}`).join(', ')
      : `scope ${m.scope.version || '(no version)'}`;
    labels.set(m.key, label);
  }
  return labels;
}

/** One line of a chart: one attribute set of one instance, its points split where the series restarted. */
interface Line {
  id: string;
  /** The metric (instance) the line is of. */
  key: string;
  label: string;
  color: string;
  attrs: Attributes;
  segments: DataPoint[][];
  /** Every point of the line, oldest first. */
  points: DataPoint[];
}

/** Lines in label order, each with its colour for good: showing one instance leaves the others' colours as they were. */
function linesOf(metrics: Metric[], labels: Map<string, string>): Line[] {
  const lines = metrics.flatMap((m) =>
    m.series.map((s) => {
      const segments = s.segments.map((seg) => seg.points.map((i) => m.dataPoints[i]));
      const attrs = attrsKey(s.attributes);
      return {
        id: `${m.key} ${attrs}`,
        key: m.key,
        label: [labels.get(m.key), attrs].filter(Boolean).join(' · '),
        color: '',
        attrs: s.attributes,
        segments,
        points: segments.flat(),
      };
    }),
  );
  lines.sort((a, b) => byLabel(a.label, b.label));
  lines.forEach((line, i) => (line.color = seriesColor(i)));
  return lines;
}

const byLabel = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true });

function pointValue(p: DataPoint): number {
  return p.asDouble !== undefined ? toNumber(p.asDouble) : toNumber(p.asInt);
}

const isCumulative = (m: MetricInfo) => m.type === 'summary' || (m.type !== 'gauge' && m.aggregationTemporality === 2);

function MetricDetail({ metrics: instances, focus, route }: { metrics: Metric[]; focus: string | null; route: Route }) {
  // The mode and the histogram's series are in the URL: a reload or a shared link shows the same chart.
  const mode = route.query.get('mode') === 'rate' ? 'rate' : 'value';
  const setMode = (m: 'value' | 'rate') => setQueryParam('mode', m === 'rate' ? m : undefined);
  const picked = route.query.getAll('series');
  const labels = instanceLabels(instances);
  const focused = instances.filter((m) => m.key === focus);
  const metrics = focused.length ? focused : instances;
  const metric = metrics[0];
  const lines = linesOf(instances, labels).filter((line) => metrics.some((m) => m.key === line.key));
  const instanceOrder = [...instances].sort((a, b) => byLabel(labels.get(a.key)!, labels.get(b.key)!));
  const pointCount = metrics.reduce((n, m) => n + m.dataPoints.length, 0);
  const lastNs = metrics.flatMap((m) => m.dataPoints.map((p) => p.timeUnixNano)).reduce((a, b) => (a.length > b.length || (a.length === b.length && a > b) ? a : b), '0');
  const canRate = metric.type === 'sum' && metric.aggregationTemporality === 2;
  const exemplars = metrics
    .flatMap((m) => m.dataPoints.flatMap((p) => p.exemplars ?? []))
    .filter((e) => e.traceId)
    .slice(-50)
    .reverse();
  const focusLink = (key: string | null) => {
    const query: Record<string, string> = Object.fromEntries(route.query);
    delete query.key;
    return href(route.path, { ...query, key });
  };

  return (
    <div className="metric-body">
      <div className="metric-title">
        <h2>{markBidi(metric.name)}</h2>
        <div className="facts">
          <span className={`type type-${metric.type}`}>{TYPE_LABEL[metric.type] ?? metric.type}</span>
          {metric.unit && <span className="unit">{metric.unit}</span>}
          {metric.aggregationTemporality !== undefined && <span className="muted">{TEMPORALITY[metric.aggregationTemporality] ?? metric.aggregationTemporality}</span>}
          {metric.isMonotonic && <span className="muted">monotonic</span>}
          <span className="muted">
            {pointCount} points · {lines.length} series
            {instances.length > 1 ? ` · ${metrics.length} of ${instances.length} instances` : ''} · last {lastNs !== '0' ? formatTime(nsToMs(lastNs)) : '—'}
          </span>
        </div>
        {metric.description && <div className="muted">{metric.description}</div>}
        {instances.length > 1 && (
          <div className="facts instances" aria-label="Instances">
            <span className="muted">Instances</span>
            <div className="segmented">
              <button type="button" className={focused.length ? '' : 'on'} onClick={() => navigate(focusLink(null))}>
                All
              </button>
              {instanceOrder.map((m) => (
                <button key={m.key} type="button" className={focus === m.key ? 'on' : ''} data-key={m.key} onClick={() => navigate(focusLink(m.key))}>
                  {labels.get(m.key)}
                </button>
              ))}
            </div>
          </div>
        )}
      </div>
      {(metric.type === 'sum' || metric.type === 'gauge') && (
        <NumberSeries
          lines={lines}
          unit={metric.unit}
          markers={metric.type === 'gauge' ? exemplarMarkers(lines) : []}
          cumulative={isCumulative(metric)}
          mode={canRate ? mode : 'value'}
          setMode={canRate ? setMode : undefined}
        />
      )}
      {(metric.type === 'histogram' || metric.type === 'exponentialHistogram') && (
        <HistogramView lines={lines} picked={picked} exponential={metric.type === 'exponentialHistogram'} unit={metric.unit} cumulative={isCumulative(metric)} />
      )}
      {metric.type === 'summary' && <SummaryView lines={lines} />}
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
                  <td className="num">{formatUnit(exemplarValue(e), metric.unit)}</td>
                  <td>
                    <Link className="mono" to={exemplarLink(e)}>
                      {shortId(e.traceId!, 16)}
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      {instanceOrder
        .filter((m) => metrics.includes(m))
        .map((m) => (
          <Section key={m.key} title={labels.get(m.key) ? `Resource · ${labels.get(m.key)}` : 'Resource'} count={Object.keys(m.resource).length}>
            <AttrTable attrs={m.resource} />
          </Section>
        ))}
      <Section title="Scope">
        <div className="mono small">
          {metric.scope.name || <span className="muted">(unnamed)</span>} {metric.scope.version}
        </div>
      </Section>
    </div>
  );
}

const exemplarValue = (e: Exemplar) => (e.asDouble !== undefined ? toNumber(e.asDouble) : toNumber(e.asInt));
const exemplarLink = (e: Exemplar) => `/traces/${e.traceId}${e.spanId ? `?span=${e.spanId}` : ''}`;

/** The exemplars with a trace of these lines, drawn on the chart in their line's colour and linked to their trace. */
function exemplarMarkers(lines: Line[]): Marker[] {
  return lines.flatMap((line) =>
    line.points.flatMap((p) =>
      (p.exemplars ?? [])
        .filter((e) => e.traceId)
        .map((e) => ({
          x: nsToMs(e.timeUnixNano),
          y: exemplarValue(e),
          color: line.color,
          title: `Exemplar ${formatNumber(exemplarValue(e))} · trace ${shortId(e.traceId!)} (click to open)`,
          to: exemplarLink(e),
        })),
    ),
  );
}

/** Per second between neighbouring points of one segment: never across a restart. */
function rates(segment: ChartPoint[]): ChartPoint[] {
  const out: ChartPoint[] = [];
  for (let i = 1; i < segment.length; i++) {
    const [a, b] = [segment[i - 1], segment[i]];
    if (b.x > a.x) out.push({ x: b.x, y: ((b.y - a.y) * 1000) / (b.x - a.x) });
  }
  return out;
}

function NumberSeries({
  lines,
  unit,
  markers,
  cumulative,
  mode,
  setMode,
}: {
  lines: Line[];
  unit: string;
  markers: Marker[];
  cumulative: boolean;
  mode: 'value' | 'rate';
  setMode?: (m: 'value' | 'rate') => void;
}) {
  const chart: Series[] = lines.map((line) => {
    const segments = line.segments.map((seg) => seg.map((p) => ({ x: nsToMs(p.timeUnixNano), y: pointValue(p) })));
    return { label: line.label, color: line.color, segments: mode === 'rate' ? segments.map(rates) : segments };
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
      <LineChart series={chart} unit={mode === 'rate' ? `${unit}/s` : unit} markers={mode === 'value' ? markers : []} />
      <table className="grid-table series-table">
        <thead>
          <tr>
            <th>Series</th>
            <th className="num">Points</th>
            {cumulative && (
              <th className="num" title="Times the series started counting anew (a new start time, or a fall in a monotonic sum)">
                Restarts
              </th>
            )}
            <th className="num">Min</th>
            <th className="num">Max</th>
            <th className="num">Last</th>
          </tr>
        </thead>
        <tbody>
          {lines.map((line) => {
            const values = line.points.map(pointValue).filter(Number.isFinite);
            return (
              <tr key={line.id} data-series={line.label}>
                <td>
                  <span className="swatch" style={{ background: line.color }} />
                  {line.label || <span className="muted">(no attributes)</span>}
                </td>
                <td className="num">{line.points.length}</td>
                {cumulative && <td className="num">{line.segments.length - 1}</td>}
                <td className="num">{values.length ? formatUnit(Math.min(...values), unit) : '—'}</td>
                <td className="num">{values.length ? formatUnit(Math.max(...values), unit) : '—'}</td>
                <td className="num strong">{values.length ? formatUnit(values[values.length - 1], unit) : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function explicitBuckets(p: DataPoint, unit: string): Bucket[] {
  const bounds = (p.explicitBounds ?? []).map(toNumber);
  const counts = (p.bucketCounts ?? []).map(Number);
  return counts.map((count, i) => ({ label: i < bounds.length ? formatUnit(bounds[i], unit, true) : '+Inf', count }));
}

/** Exponential buckets: bucket i of a side covers (base^i, base^(i+1)] with base = 2^(2^-scale). */
function exponentialBuckets(p: DataPoint, unit: string): Bucket[] {
  const base = 2 ** (2 ** -(p.scale ?? 0));
  const out: Bucket[] = [];
  const neg = p.negative?.bucketCounts ?? [];
  for (let i = neg.length - 1; i >= 0; i--) out.push({ label: `-${formatUnit(base ** ((p.negative?.offset ?? 0) + i), unit, true)}`, count: Number(neg[i]) });
  if (Number(p.zeroCount ?? 0) > 0 || neg.length) out.push({ label: '0', count: Number(p.zeroCount ?? 0) });
  const pos = p.positive?.bucketCounts ?? [];
  for (let i = 0; i < pos.length; i++) out.push({ label: formatUnit(base ** ((p.positive?.offset ?? 0) + i + 1), unit, true), count: Number(pos[i]) });
  return out;
}

const QUANTILES = [
  { q: 0.5, label: 'P50', dash: undefined },
  { q: 0.9, label: 'P90', dash: '6 3' },
  { q: 0.99, label: 'P99', dash: '2 3' },
];

/** Replaces the URL's `series` parameters (one per chosen series) without a history entry. */
function setSeries(ids: string[]): void {
  const url = new URL(location.href);
  url.searchParams.delete('series');
  for (const id of ids) url.searchParams.append('series', id);
  navigate(url.pathname + url.search, { replace: true });
}

const lastMs = (line: Line) => nsToMs(line.points[line.points.length - 1]?.timeUnixNano ?? '0');

/**
 * The series still being sent: those whose last point is within one and a half export intervals of the
 * newest one (an instance that stopped keeps its old series, which a chart should not open on).
 */
function liveLines(lines: Line[]): Line[] {
  const newest = lines.reduce((a, l) => (lastMs(l) > lastMs(a) ? l : a), lines[0]);
  const times = newest.points.map((p) => nsToMs(p.timeUnixNano));
  const gaps = times
    .slice(1)
    .map((t, i) => t - times[i])
    .sort((a, b) => a - b);
  const interval = gaps.length ? gaps[gaps.length >> 1] : 60_000;
  return lines.filter((l) => lastMs(l) >= lastMs(newest) - 1.5 * interval);
}

function HistogramView({ lines, picked, exponential, unit, cumulative }: { lines: Line[]; picked: string[]; exponential: boolean; unit: string; cumulative: boolean }) {
  const live = lines.length ? liveLines(lines) : [];
  const chosen = lines.filter((l) => picked.includes(l.id));
  const shown = chosen.length ? chosen : live.slice(0, 1);
  const current = shown[0];
  if (!current) return null;
  const p = current.points[current.points.length - 1];
  const count = Number(p.count ?? 0);
  const sum = p.sum !== undefined ? toNumber(p.sum) : NaN;
  const countLine: Series[] = lines.map((line) => ({
    label: line.label,
    color: line.color,
    segments: line.segments.map((seg) => seg.map((q) => ({ x: nsToMs(q.timeUnixNano), y: Number(q.count ?? 0) }))),
  }));
  // One series: a colour per percentile. Several overlaid: each series in its colour, a dash per percentile.
  const percentileLines: Series[] = shown.flatMap((line) => {
    const bySegment = line.segments.map((seg) =>
      percentiles(
        seg,
        cumulative,
        QUANTILES.map((x) => x.q),
      ),
    );
    return QUANTILES.map((x, i) => ({
      label: shown.length > 1 ? `${line.label || '(no attributes)'} ${x.label}` : x.label,
      color: shown.length > 1 ? line.color : seriesColor(i),
      dash: x.dash,
      segments: bySegment.map((seg) => seg.map((pt) => ({ x: pt.x, y: pt.ys[i] }))),
    }));
  });
  const toggle = (id: string) => {
    const ids = shown.map((l) => l.id);
    setSeries(ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id]);
  };
  const fact = (label: string, v: number) =>
    Number.isFinite(v) && (
      <span>
        {label} <b>{formatUnit(v, unit)}</b>
      </span>
    );
  return (
    <>
      <div className="facts">
        <span className="muted">Series</span>
        <div className="segmented histogram-series" aria-label="Series">
          {lines.map((l) => (
            <button
              key={l.id}
              type="button"
              className={shown.includes(l) ? 'on' : ''}
              data-line={l.id}
              data-live={live.includes(l) || undefined}
              onClick={() => toggle(l.id)}
              title={shown.includes(l) ? 'Hide this series' : 'Overlay this series'}
            >
              <span className="swatch" style={{ background: l.color }} />
              {l.label || '(no attributes)'}
            </button>
          ))}
        </div>
        {shown.length > 1 && <span className="muted">(figures of {current.label || 'the first'})</span>}
        <span>
          count <b>{formatNumber(count)}</b>
        </span>
        {fact('sum', sum)}
        {count > 0 && fact('avg', sum / count)}
        {p.min !== undefined && fact('min', toNumber(p.min))}
        {p.max !== undefined && fact('max', toNumber(p.max))}
        {exponential && <span className="muted">scale {p.scale ?? 0}</span>}
      </div>
      <h4 className="sub">Percentiles over time{cumulative ? ' (of the values recorded between points)' : ''}, with exemplars</h4>
      <div data-chart="percentiles">
        <LineChart series={percentileLines} unit={unit} markers={exemplarMarkers(shown)} />
      </div>
      <h4 className="sub">Buckets of the latest point</h4>
      <BarChart buckets={exponential ? exponentialBuckets(p, unit) : explicitBuckets(p, unit)} />
      <h4 className="sub">Count over time</h4>
      <div data-chart="count">
        <LineChart series={countLine} height={160} />
      </div>
    </>
  );
}

function SummaryView({ lines }: { lines: Line[] }) {
  return (
    <table className="grid-table">
      <thead>
        <tr>
          <th>Series</th>
          <th className="num">Count</th>
          <th className="num">Sum</th>
          <th>Quantiles (latest)</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line) => {
          const p = line.points[line.points.length - 1];
          return (
            <tr key={line.id}>
              <td>{line.label || <span className="muted">(no attributes)</span>}</td>
              <td className="num">{formatNumber(Number(p.count ?? 0))}</td>
              <td className="num">{formatNumber(toNumber(p.sum))}</td>
              <td>
                {(p.quantileValues ?? []).map((qv) => (
                  <span key={qv.quantile} className="chip">
                    p{+(toNumber(qv.quantile) * 100).toFixed(2)} = {formatNumber(toNumber(qv.value))}
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
