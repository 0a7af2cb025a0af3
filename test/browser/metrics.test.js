// Metrics from the official SDK in real headless Chromium: two runs of one app (another
// service.instance.id) stay two series with their own values, and a counter that restarts begins a new
// segment, so the Metrics view's rate never goes negative.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { createExporter } from '../helpers/exporters.js';
import { waitFor } from '../helpers/wait.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;

/**
 * One run of an app: the SDK's own MeterProvider, exporting only when the test flushes it.
 * @param {Record<string, string>} resource
 */
function appRun(resource) {
  const provider = new MeterProvider({
    resource: resourceFromAttributes(resource),
    readers: [
      new PeriodicExportingMetricReader({ exporter: createExporter('metrics', { wire: 'proto', compression: 'none' }, ui.collector.urls), exportIntervalMillis: 60_000 }),
    ],
  });
  const jobs = provider.getMeter('metrics-test', '1.0.0').createCounter('app.jobs', { unit: '{job}', description: 'jobs done' });
  return { provider, jobs };
}

/** Ends a run: shutting down exports once more, a little after the last export so a rate has a time to divide by. */
async function endRun(/** @type {MeterProvider} */ provider) {
  const before = Date.now();
  await waitFor(() => Date.now() > before + 2, { what: 'the clock to move on' });
  await provider.shutdown();
}

/** @param {string} label */
const lineOf = (label) => ui.page.locator(`.chart svg polyline[data-series="${label}"]`);

/** The values each polyline of the chart draws, by series label. */
async function chartValues() {
  return ui.page
    .locator('.chart svg polyline')
    .evaluateAll((lines) =>
      lines.map((l) => ({ series: l.getAttribute('data-series'), values: (l.getAttribute('data-values') ?? '').split(' ').filter(Boolean).map(Number) })),
    );
}

test('two runs of an app with another service.instance.id are two metrics in GET /api/metrics', { skip }, async () => {
  const a = appRun({ 'service.name': 'metrics-two-runs', 'service.instance.id': 'run-a' });
  const b = appRun({ 'service.name': 'metrics-two-runs', 'service.instance.id': 'run-b' });
  a.jobs.add(138, { queue: 'mail' });
  await a.provider.forceFlush();
  b.jobs.add(1, { queue: 'mail' });
  await b.provider.shutdown();
  a.jobs.add(2, { queue: 'mail' });
  await endRun(a.provider);

  const body = await waitFor(
    async () => {
      const r = await ui.collector.api('/api/metrics?service=metrics-two-runs&name=app.jobs');
      return r.points >= 3 && r;
    },
    { what: 'three data points' },
  );
  assert.equal(body.total, 2);
  const byRun = Object.fromEntries(body.metrics.map((/** @type {any} */ m) => [m.resource['service.instance.id'], m]));
  assert.deepEqual(
    byRun['run-a'].dataPoints.map((/** @type {any} */ p) => Number(p.asDouble ?? p.asInt)),
    [138, 140],
  );
  assert.deepEqual(
    byRun['run-b'].dataPoints.map((/** @type {any} */ p) => Number(p.asDouble ?? p.asInt)),
    [1],
  );
  assert.notEqual(byRun['run-a'].key, byRun['run-b'].key);

  const list = await ui.collector.api('/api/metrics?service=metrics-two-runs&points=none');
  assert.deepEqual(list.metrics.map((/** @type {any} */ m) => [m.resource['service.instance.id'], m.pointCount, m.seriesCount, m.dataPoints]).sort(), [
    ['run-a', 2, 1, undefined],
    ['run-b', 1, 1, undefined],
  ]);
  const one = await ui.collector.api(`/api/metrics?service=metrics-two-runs&key=${byRun['run-b'].key}`);
  assert.deepEqual(
    one.metrics.map((/** @type {any} */ m) => m.resource['service.instance.id']),
    ['run-b'],
  );
});

test('the Metrics view draws each run as its own line, labelled with its instance, with its own values', { skip }, async () => {
  await ui.page.goto(`${ui.collector.urls.ui}/metrics?service=metrics-two-runs`);
  const item = ui.page.locator('.metric-item', { hasText: 'app.jobs' });
  await item.waitFor({ timeout: 5000 });
  assert.equal(await item.getAttribute('data-instances'), '2', 'one entry for the two runs of the metric');
  assert.match(await item.innerText(), /2 instances/);
  await item.click();
  await ui.page.waitForURL(/\/metrics\/metrics-two-runs\/app\.jobs/);
  const runA = 'service.instance.id=run-a · queue=mail';
  const runB = 'service.instance.id=run-b · queue=mail';
  await lineOf(runA).waitFor({ state: 'attached', timeout: 5000 });
  assert.deepEqual(
    (await chartValues()).sort((x, y) => String(x.series).localeCompare(String(y.series))),
    [
      { series: runA, values: [138, 140] },
      { series: runB, values: [1] },
    ],
  );
  // Values carry the metric's unit, {job}.
  assert.match(await ui.page.locator(`tr[data-series="${runA}"]`).innerText(), /140 jobs$/);
  assert.match(await ui.page.locator(`tr[data-series="${runB}"]`).innerText(), /\b1 job$/);
  await ui.page.screenshot({ path: '/tmp/metrics-two-instances.png' });

  await ui.page.getByRole('button', { name: 'service.instance.id=run-b', exact: true }).click();
  await ui.page.waitForURL(/[?&]key=[0-9a-f]{16}/);
  await waitFor(async () => (await chartValues()).length === 1, { what: 'the chart to show one instance' });
  assert.deepEqual(await chartValues(), [{ series: runB, values: [1] }]);

  await ui.page.reload();
  await lineOf(runB).waitFor({ state: 'attached', timeout: 5000 });
  assert.equal((await chartValues()).length, 1, 'the instance shown is in the URL');
  assert.deepEqual(ui.pageErrors, []);
});

test('a counter restarted by its app begins a new segment: its rate never goes negative', { skip }, async () => {
  const resource = { 'service.name': 'metrics-restart', 'service.instance.id': 'only-run' };
  await ui.page.goto(`${ui.collector.urls.ui}/metrics/metrics-restart/app.jobs`);

  const first = appRun(resource);
  first.jobs.add(50);
  await first.provider.forceFlush();
  first.jobs.add(30);
  await endRun(first.provider);
  // The app starts again: a new start time, and the count begins anew near zero.
  const second = appRun(resource);
  second.jobs.add(2);
  await second.provider.forceFlush();
  second.jobs.add(3);
  await endRun(second.provider);

  // The view was open before the metric existed: the points come in live.
  await waitFor(async () => (await chartValues()).flatMap((l) => l.values).length === 4, { what: 'four points drawn' });
  assert.deepEqual(
    (await chartValues()).map((l) => l.values),
    [
      [50, 80],
      [2, 5],
    ],
    'one series in two segments',
  );
  assert.match(await ui.page.locator('.series-table tbody tr').innerText(), /^\(no attributes\)\s+4\s+1\b/, '4 points, 1 restart');

  await ui.page.getByRole('button', { name: 'Rate /s' }).click();
  await waitFor(async () => (await chartValues()).every((l) => l.values.length === 1), { what: 'the rates to be drawn' });
  const rates = (await chartValues()).flatMap((l) => l.values);
  assert.equal(rates.length, 2, 'a rate within each segment, none across the restart');
  for (const r of rates) assert.ok(r > 0, `rate ${r} /s`);
  await ui.page.screenshot({ path: '/tmp/metrics-restart-rate.png' });
  await ui.page.getByRole('button', { name: 'Value', exact: true }).click();
  await ui.page.screenshot({ path: '/tmp/metrics-restart-value.png' });
  assert.deepEqual(ui.pageErrors, []);
});
