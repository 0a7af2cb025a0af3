// The live feed's census of stored metrics (server/query/metric-census.js): counted in slices when a metrics view
// opens, while points arrive and are evicted, it ends where a census counted at once would, and says meanwhile
// that nothing changed, then once that something may have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetricCensus } from '../../server/query/metric-census.js';
import { Store } from '../../server/store/store.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { SIGNALS } from '../../server/otlp/signals.js';

/** A request of one gauge of `points` points. @param {string} name @param {number} points */
const gauge = (name, points) =>
  decodeJson(
    SIGNALS.metrics,
    JSON.stringify({
      resourceMetrics: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
          scopeMetrics: [
            { scope: { name: 'm' }, metrics: [{ name, gauge: { dataPoints: Array.from({ length: points }, (_, i) => ({ timeUnixNano: String(i + 1), asInt: '1' })) } }] },
          ],
        },
      ],
    }),
  );

/** @param {MetricCensus} census */
const tallies = (census) => [...census.points].sort(([a], [b]) => (a < b ? -1 : 1));

test('a census counted while points arrive and are evicted ends where one counted at once would', async () => {
  const store = new Store({ maxPoints: 2000 });
  let id = 0;
  for (let i = 0; i < 20; i++) store.addRequest('metrics', gauge(`m${i}`, 100), ++id);
  /** @type {boolean|null} */
  let counted = null;
  const census = new MetricCensus(store.ring('metrics'), (moved) => (counted = moved));
  /** @type {number[]} */
  const told = [];
  store.subscribe(({ entries, evicted }) => told.push(census.apply(entries, evicted)));
  // Before a point is counted: five metrics are evicted whole and one appears.
  store.addRequest('metrics', gauge('late', 500), ++id);
  assert.deepEqual(told, [0], 'no change of metric is told while the stored points are counted');
  await census.ready;
  assert.equal(counted, true, 'once counted, the census says something may have changed meanwhile');
  const atOnce = new MetricCensus(store.ring('metrics'));
  await atOnce.ready;
  assert.deepEqual(tallies(census), tallies(atOnce));
  assert.equal(census.points.size, 16);
  assert.ok(
    [...census.points.values()].every((n) => n > 0),
    'no metric is left with a tally of zero or less',
  );
  // From here on every change is told: one metric appears, one (m5) goes.
  store.addRequest('metrics', gauge('later', 100), id + 1);
  assert.equal(told.at(-1), 2);
});

test('a census with nothing moving while it counts says so, and one cleared meanwhile starts empty', async () => {
  const store = new Store({ maxPoints: 1000 });
  store.addRequest('metrics', gauge('a', 10), 1);
  /** @type {boolean|null} */
  let counted = null;
  const still = new MetricCensus(store.ring('metrics'), (moved) => (counted = moved));
  await still.ready;
  assert.equal(counted, false);
  assert.equal(still.points.size, 1);

  const cleared = new MetricCensus(store.ring('metrics'), () => assert.fail('a cleared census reports nothing'));
  cleared.clear();
  await cleared.ready;
  assert.equal(cleared.points.size, 0);
  assert.equal(cleared.apply([...store.ring('metrics')], []), 1, 'counted from the clearing on, what arrives is told');
});
