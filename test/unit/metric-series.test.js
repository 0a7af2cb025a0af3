// Metric identity and series: one metric per resource instance (every resource attribute counts), one
// series per attribute set, and a new segment wherever a cumulative series restarted, so no rate is ever
// taken across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metricKey, metricSeries, metricViews } from '../../server/query/views.js';
import { Store } from '../../server/store/store.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { SIGNALS } from '../../server/otlp/signals.js';

/** @param {Record<string, string|number>} attrs */
const kvs = (attrs) => Object.entries(attrs).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } }));

/**
 * @param {Record<string, string>} resource
 * @param {{ name?: string, type?: 'sum'|'gauge'|'histogram', temporality?: number, monotonic?: boolean, scope?: { name: string, version?: string },
 *   points: { attrs?: Record<string, string>, start?: number, time: number, value: number }[] }} metric
 */
function request(resource, { name = 'requests', type = 'sum', temporality = 2, monotonic = true, scope = { name: 'app', version: '1' }, points }) {
  const dataPoints = points.map((p) => ({
    attributes: kvs(p.attrs ?? {}),
    startTimeUnixNano: String(BigInt(p.start ?? 1) * 1_000_000_000n),
    timeUnixNano: String(BigInt(p.time) * 1_000_000_000n),
    ...(type === 'histogram' ? { count: String(p.value), sum: p.value, bucketCounts: [], explicitBounds: [] } : { asInt: String(p.value) }),
  }));
  const data =
    type === 'gauge'
      ? { gauge: { dataPoints } }
      : type === 'histogram'
        ? { histogram: { dataPoints, aggregationTemporality: temporality } }
        : { sum: { dataPoints, aggregationTemporality: temporality, isMonotonic: monotonic } };
  const json = { resourceMetrics: [{ resource: { attributes: kvs(resource) }, scopeMetrics: [{ scope, metrics: [{ name, unit: '1', ...data }] }] }] };
  return decodeJson(SIGNALS.metrics, JSON.stringify(json));
}

/** @param {any[]} requests */
function stored(...requests) {
  const store = new Store();
  requests.forEach((r, i) => store.addRequest('metrics', r, i + 1));
  return [...store.ring('metrics')];
}

/** Values of each segment of each series, for reading assertions at a glance. @param {any} metric */
const segmentValues = (metric) =>
  metric.series.map((/** @type {any} */ s) =>
    s.segments.map((/** @type {any} */ seg) => seg.points.map((/** @type {number} */ i) => Number(metric.dataPoints[i].asInt ?? metric.dataPoints[i].count))),
  );

test('two instances of one service are two metrics, each with its own points', () => {
  const a = { 'service.name': 'shop', 'service.instance.id': 'run-a' };
  const b = { 'service.name': 'shop', 'service.instance.id': 'run-b' };
  const metrics = metricViews(
    stored(request(a, { points: [{ time: 10, value: 138 }] }), request(b, { points: [{ time: 11, value: 1 }] }), request(a, { points: [{ time: 12, value: 140 }] })),
  );
  assert.equal(metrics.length, 2);
  assert.deepEqual(
    metrics.map((m) => m.resource['service.instance.id']),
    ['run-a', 'run-b'],
  );
  assert.deepEqual(
    metrics.map((m) => m.dataPoints.map((/** @type {any} */ p) => p.asInt)),
    [['138', '140'], ['1']],
  );
  assert.notEqual(metrics[0].key, metrics[1].key);
  for (const m of metrics) assert.match(m.key, /^[0-9a-f]{16}$/);
});

test('the identity is the whole resource in any attribute order, the scope name and version, name, type and unit', () => {
  const entries = stored(
    request({ 'service.name': 'shop', 'host.name': 'h1' }, { points: [{ time: 1, value: 1 }] }),
    request({ 'host.name': 'h1', 'service.name': 'shop' }, { points: [{ time: 2, value: 2 }] }),
    request({ 'service.name': 'shop', 'host.name': 'h2' }, { points: [{ time: 3, value: 3 }] }),
    request({ 'service.name': 'shop', 'host.name': 'h1' }, { scope: { name: 'app', version: '2' }, points: [{ time: 4, value: 4 }] }),
    request({ 'service.name': 'shop', 'host.name': 'h1' }, { type: 'gauge', points: [{ time: 5, value: 5 }] }),
  );
  assert.equal(metricKey(entries[0]), metricKey(entries[1]), 'attribute order does not matter');
  assert.equal(new Set(entries.map(metricKey)).size, 4);
  const keys = metricViews(entries).map((m) => m.key);
  assert.equal(keys.length, 4);
  assert.deepEqual(
    metricViews(entries.slice().reverse())
      .map((m) => m.key)
      .sort(),
    [...keys].sort(),
    'a key depends on the identity alone',
  );
});

test('metrics are sorted by name, then service', () => {
  const metrics = metricViews(
    stored(
      request({ 'service.name': 'zeta' }, { name: 'b', points: [{ time: 1, value: 1 }] }),
      request({ 'service.name': 'alpha' }, { name: 'b', points: [{ time: 1, value: 1 }] }),
      request({ 'service.name': 'zeta' }, { name: 'a', points: [{ time: 1, value: 1 }] }),
    ),
  );
  assert.deepEqual(
    metrics.map((m) => `${m.name}/${m.service}`),
    ['a/zeta', 'b/alpha', 'b/zeta'],
  );
});

test("points: 'none' lists metrics with counts and the latest time instead of points", () => {
  const r = { 'service.name': 'shop' };
  const [m] = metricViews(
    stored(
      request(r, {
        points: [
          { attrs: { region: 'eu' }, time: 30, value: 1 },
          { attrs: { region: 'us' }, time: 10, value: 1 },
        ],
      }),
      request(r, { points: [{ attrs: { region: 'eu' }, time: 20, value: 2 }] }),
    ),
    { points: 'none' },
  );
  assert.equal(m.dataPoints, undefined);
  assert.equal(m.series, undefined);
  assert.equal(m.pointCount, 3);
  assert.equal(m.seriesCount, 2);
  assert.equal(m.lastTimeUnixNano, '30000000000');
  assert.equal(m.name, 'requests');
  assert.match(m.key, /^[0-9a-f]{16}$/);
});

test("points: 'none' asked again counts what the store still holds, as the oldest request's points are evicted", () => {
  const r = { 'service.name': 'shop' };
  const store = new Store({ maxPoints: 4 });
  const add = (/** @type {number} */ id, /** @type {any} */ req) => store.addRequest('metrics', req, id);
  add(
    1,
    request(r, {
      points: [
        { attrs: { region: 'eu' }, time: 40, value: 1 },
        { attrs: { region: 'us' }, time: 10, value: 1 },
        { attrs: { region: 'ap' }, time: 15, value: 1 },
      ],
    }),
  );
  const list = () => {
    const [m] = metricViews([...store.ring('metrics')], { points: 'none' });
    return { points: m.pointCount, series: m.seriesCount, last: m.lastTimeUnixNano };
  };
  assert.deepEqual(list(), { points: 3, series: 3, last: '40000000000' });
  // Asked again with nothing changed, the same: the request's run of points is read once and kept.
  assert.deepEqual(list(), { points: 3, series: 3, last: '40000000000' });
  // The store holds four points: the fifth evicts the first request's latest point, then the next its region=us.
  add(2, request(r, { points: [{ attrs: { region: 'eu' }, time: 20, value: 2 }] }));
  assert.deepEqual(list(), { points: 4, series: 3, last: '40000000000' });
  add(3, request(r, { points: [{ attrs: { region: 'eu' }, time: 25, value: 3 }] }));
  assert.deepEqual(list(), { points: 4, series: 3, last: '25000000000' });
  add(4, request(r, { points: [{ attrs: { region: 'eu' }, time: 30, value: 4 }] }));
  assert.deepEqual(list(), { points: 4, series: 2, last: '30000000000' });
  add(5, request(r, { points: [{ attrs: { region: 'eu' }, time: 35, value: 5 }] }));
  assert.deepEqual(list(), { points: 4, series: 1, last: '35000000000' });
});

test('a series is one attribute set, in any attribute order, its points in time order', () => {
  const [m] = metricViews(
    stored(
      request(
        { 'service.name': 'shop' },
        {
          points: [
            { attrs: { region: 'eu', code: '200' }, time: 3, value: 30 },
            { attrs: { region: 'us', code: '200' }, time: 1, value: 5 },
            { attrs: { code: '200', region: 'eu' }, time: 1, value: 10 },
            { attrs: { region: 'eu', code: '200' }, time: 2, value: 20 },
          ],
        },
      ),
    ),
  );
  assert.deepEqual(
    m.series.map((/** @type {any} */ s) => s.attributes),
    [
      { region: 'eu', code: '200' },
      { region: 'us', code: '200' },
    ],
  );
  assert.deepEqual(segmentValues(m), [[[10, 20, 30]], [[5]]]);
});

test('a cumulative series restarts when its start time changes, even when its value rises', () => {
  const [m] = metricViews(
    stored(
      request(
        { 'service.name': 'shop' },
        {
          monotonic: false,
          points: [
            { start: 1, time: 2, value: 100 },
            { start: 1, time: 3, value: 50 },
            { start: 5, time: 6, value: 200 },
            { start: 5, time: 7, value: 210 },
          ],
        },
      ),
    ),
  );
  assert.deepEqual(
    segmentValues(m),
    [
      [
        [100, 50],
        [200, 210],
      ],
    ],
    'a non-monotonic sum may fall within a segment',
  );
  assert.deepEqual(
    m.series[0].segments.map((/** @type {any} */ s) => s.startTimeUnixNano),
    ['1000000000', '5000000000'],
  );
});

test('a monotonic sum whose value falls restarts even with the same start time', () => {
  const [m] = metricViews(stored(request({ 'service.name': 'shop' }, { points: [2, 3, 4, 5].map((t, i) => ({ time: t, value: [138, 140, 1, 3][i] })) })));
  assert.deepEqual(segmentValues(m), [
    [
      [138, 140],
      [1, 3],
    ],
  ]);
});

test('a cumulative histogram restarts when its count falls or its start time changes', () => {
  const points = [
    { start: 1, time: 2, value: 10 },
    { start: 1, time: 3, value: 4 },
    { start: 4, time: 5, value: 6 },
  ];
  const [m] = metricViews(stored(request({ 'service.name': 'shop' }, { type: 'histogram', points })));
  assert.deepEqual(segmentValues(m), [[[10], [4], [6]]]);
});

test('gauges and delta sums are never split: their values are not running totals', () => {
  const points = [
    { start: 1, time: 2, value: 10 },
    { start: 2, time: 3, value: 1 },
  ];
  for (const shape of /** @type {const} */ ([{ type: 'gauge' }, { type: 'sum', temporality: 1 }])) {
    const [m] = metricViews(stored(request({ 'service.name': 'shop' }, { ...shape, points })));
    assert.deepEqual(segmentValues(m), [[[10, 1]]], shape.type);
  }
});

test('metricSeries works on a metric and its canonical points alone', () => {
  const series = metricSeries({ type: 'sum', aggregationTemporality: 2, isMonotonic: true }, [
    { attributes: [], startTimeUnixNano: '1', timeUnixNano: '3', asDouble: 1.5 },
    { attributes: [], startTimeUnixNano: '1', timeUnixNano: '2', asDouble: 0.5 },
    { attributes: [], startTimeUnixNano: '1', timeUnixNano: '4', asDouble: 0.25 },
  ]);
  assert.deepEqual(series, [
    {
      attributes: {},
      segments: [
        { startTimeUnixNano: '1', points: [1, 0] },
        { startTimeUnixNano: '1', points: [2] },
      ],
    },
  ]);
});

test('what a view makes once per stored object is kept unseen: the stored resource, scope and points compare as decoded', () => {
  const entries = stored(request({ 'service.name': 'shop', 'host.name': 'h1' }, { points: [{ attrs: { route: '/a', code: '200' }, time: 1, value: 1 }] }));
  const { ctx, item } = /** @type {any} */ (entries[0]);
  const before = structuredClone({ resource: ctx.resource, scope: ctx.scope, attributes: item.attributes });
  const first = metricViews(entries);
  const identity = metricKey(entries[0]);
  assert.deepEqual({ resource: ctx.resource, scope: ctx.scope, attributes: item.attributes }, before);
  assert.equal(JSON.stringify(ctx.resource), JSON.stringify(before.resource));
  assert.equal(metricKey(entries[0]), identity, 'made once, the same each time');
  assert.deepEqual(metricViews(entries), first);
});
