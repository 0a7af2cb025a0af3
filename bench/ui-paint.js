// The first paint of each UI view over a full store: 100 000 spans, 100 000 log records and 100 000
// metric data points (the default caps), sent over OTLP/HTTP protobuf to an in-process collector. Each
// view is opened 5 times in a fresh headless Chromium context (nothing cached), timed from navigation
// until its rows are visible, with every byte the page fetched counted (documents, the JS bundle, API
// answers, as sent on the wire). Target: each view within 1 s and 300 KB. Exits 1 when one misses it.
//
//   node bench/ui-paint.js [--runs 5] [--json]
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import { encodeRequest } from '../server/otlp/schema.js';
import { protoBody, random } from './workload.js';
import { CHROMIUM_PATH, launchChromium } from '../scripts/chromium.js';

const TARGET_MS = 1000;
const TARGET_BYTES = 300 * 1024;

const SERVICES = [
  { name: 'frontend', instances: ['frontend-7d9f8b6c5-x2k4q', 'frontend-7d9f8b6c5-p8m2z'] },
  { name: 'checkout', instances: ['checkout-5c6b7d8f9-a1b2c'] },
  { name: 'payment', instances: ['payment-6f7e8d9c0-q9w8e', 'payment-6f7e8d9c0-r5t6y'] },
  { name: 'cart', instances: ['cart-84b5c6d7e-z1x2c'] },
  { name: 'recommendation', instances: ['recommendation-9a8b7c6d5-m3n4b'] },
];
const ROUTES = ['/api/products', '/api/products/{id}', '/api/cart', '/api/checkout', '/api/recommendations'];

const str = (/** @type {string} */ key, /** @type {string} */ value) => ({ key, value: { stringValue: value } });
const int = (/** @type {string} */ key, /** @type {number} */ value) => ({ key, value: { intValue: String(value) } });

/** @param {number} seed */
function instanceOf(seed) {
  const service = SERVICES[seed % SERVICES.length];
  const instance = service.instances[Math.floor(seed / SERVICES.length) % service.instances.length];
  return {
    service: service.name,
    resource: {
      attributes: [
        str('service.name', service.name),
        str('service.version', '2.4.1'),
        str('service.instance.id', instance),
        str('deployment.environment.name', 'bench'),
        str('telemetry.sdk.language', 'nodejs'),
      ],
    },
  };
}

/**
 * A request of `count` log records as an application's logger sends them: one service instance, request
 * logs with their trace, some warnings and errors. `body(i)` overrides a record's body.
 * @param {number} seed @param {number} count
 * @param {{ traceId?: string, body?: (i: number) => string | undefined, service?: string }} [options]
 * @returns {Buffer} ExportLogsServiceRequest in protobuf
 */
export function logBody(seed, count, options = {}) {
  const next = random(seed * 7919);
  const hex = (/** @type {number} */ bytes) => {
    let s = '';
    for (let i = 0; i < bytes; i++)
      s += Math.floor(next() * 256)
        .toString(16)
        .padStart(2, '0');
    return s;
  };
  const { resource } = instanceOf(seed);
  if (options.service) resource.attributes[0] = str('service.name', options.service);
  const now = BigInt(Date.now()) * 1_000_000n;
  const records = [];
  for (let i = 0; i < count; i++) {
    const route = ROUTES[Math.floor(next() * ROUTES.length)];
    const roll = next();
    const severity = roll < 0.03 ? 17 : roll < 0.12 ? 13 : roll < 0.3 ? 5 : 9;
    const ms = Math.floor(next() * 300);
    const status = severity >= 17 ? 500 : severity >= 13 ? 429 : 200;
    const text =
      options.body?.(i) ??
      (severity >= 17
        ? `request failed: upstream ${route} answered ${status} after ${ms} ms`
        : severity >= 13
          ? `slow request ${route}: ${ms} ms, retrying`
          : `handled ${route} ${status} in ${ms} ms`);
    const t = String(now - BigInt(count - i) * 1_000_000n);
    records.push({
      timeUnixNano: t,
      observedTimeUnixNano: t,
      severityNumber: severity,
      severityText: ['DEBUG', 'INFO', 'WARN', 'ERROR'][[5, 9, 13, 17].indexOf(severity)],
      body: { stringValue: text },
      attributes: [str('http.route', route), int('http.response.status_code', status), str('app.tenant', `tenant-${Math.floor(next() * 50)}`)],
      traceId: options.traceId ?? hex(16),
      spanId: hex(8),
      flags: 1,
    });
  }
  const request = { resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'app.logger', version: '1.0.0' }, logRecords: records }] }] };
  const bytes = encodeRequest('logs', request);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A metrics export of one service instance: request duration histograms per route, a request counter,
 * active requests and CPU gauges, `intervals` collection intervals of 10 s each.
 * @param {number} seed @param {number} intervals
 * @returns {{ body: Buffer, points: number }} ExportMetricsServiceRequest in protobuf and its data point count
 */
export function metricBody(seed, intervals) {
  const next = random(seed * 104729);
  const { resource } = instanceOf(seed);
  const end = BigInt(Date.now()) * 1_000_000n;
  const start = end - BigInt(intervals) * 10_000_000_000n;
  const times = Array.from({ length: intervals }, (_, i) => String(start + BigInt(i + 1) * 10_000_000_000n));
  const bounds = [5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000];
  let points = 0;
  const histograms = [];
  const counters = [];
  for (const route of ROUTES) {
    let total = 0;
    for (const t of times) {
      const counts = bounds.map(() => Math.floor(next() * 40));
      counts.push(Math.floor(next() * 3));
      const count = counts.reduce((a, b) => a + b, 0);
      total += count;
      const attributes = [str('http.route', route), str('http.request.method', 'GET'), int('http.response.status_code', 200)];
      histograms.push({
        attributes,
        startTimeUnixNano: String(start),
        timeUnixNano: t,
        count: String(count),
        sum: count * 42.5,
        bucketCounts: counts.map(String),
        explicitBounds: bounds,
      });
      counters.push({ attributes, startTimeUnixNano: String(start), timeUnixNano: t, asInt: String(total) });
      points += 2;
    }
  }
  const gauges = times.map((t) => ({ attributes: [str('cpu.mode', 'user')], timeUnixNano: t, asDouble: next() }));
  const active = times.map((t) => ({ attributes: [], startTimeUnixNano: String(start), timeUnixNano: t, asInt: String(Math.floor(next() * 30)) }));
  points += gauges.length + active.length;
  const request = {
    resourceMetrics: [
      {
        resource,
        scopeMetrics: [
          {
            scope: { name: '@opentelemetry/instrumentation-http', version: '0.208.0' },
            metrics: [
              {
                name: 'http.server.request.duration',
                unit: 'ms',
                description: 'Duration of HTTP server requests.',
                histogram: { aggregationTemporality: 2, dataPoints: histograms },
              },
              {
                name: 'http.server.requests',
                unit: '{request}',
                description: 'HTTP server requests.',
                sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: counters },
              },
              {
                name: 'http.server.active_requests',
                unit: '{request}',
                description: 'Requests in flight.',
                sum: { aggregationTemporality: 2, isMonotonic: false, dataPoints: active },
              },
              { name: 'process.cpu.utilization', unit: '1', description: 'CPU utilization.', gauge: { dataPoints: gauges } },
            ],
          },
        ],
      },
    ],
  };
  const bytes = encodeRequest('metrics', request);
  return { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), points };
}

/**
 * POSTs OTLP/HTTP protobuf and fails on anything but 200.
 * @param {string} baseUrl @param {'traces'|'logs'|'metrics'} signal @param {Buffer} body
 */
export function post(baseUrl, signal, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(`/v1/${signal}`, baseUrl),
      { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(undefined) : reject(new Error(`POST /v1/${signal} answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Fills a collector with realistic web-service telemetry.
 * @param {string} httpUrl @param {{ spans?: number, logs?: number, points?: number }} [amounts]
 */
export async function fill(httpUrl, { spans = 100_000, logs = 100_000, points = 100_000 } = {}) {
  for (let seed = 1; seed * 512 - 512 < spans; seed++) await post(httpUrl, 'traces', protoBody(seed));
  for (let seed = 1; (seed - 1) * 1000 < logs; seed++) await post(httpUrl, 'logs', logBody(seed, Math.min(1000, logs - (seed - 1) * 1000)));
  let sent = 0;
  for (let seed = 1; sent < points; seed++) {
    const m = metricBody(seed, 50);
    await post(httpUrl, 'metrics', m.body);
    sent += m.points;
  }
}

/**
 * Opens `url` in a fresh context and measures until `selector` is visible.
 * @param {import('playwright-core').Browser} browser @param {string} url @param {string} selector
 * @returns {Promise<{ ms: number, bytes: number }>}
 */
export async function firstPaint(browser, url, selector) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (e) => {
    bytes += e.encodedDataLength;
  });
  const started = performance.now();
  await page.goto(url);
  await page.locator(selector).first().waitFor({ state: 'visible', timeout: 30_000 });
  const ms = performance.now() - started;
  // Answers the page asked for before its rows showed are part of the first paint, even if they end later.
  await page.waitForLoadState('networkidle').catch(() => {});
  await context.close();
  return { ms, bytes };
}

/** The rows each view shows once its data is there. */
export const VIEWS = [
  { name: 'Traces', path: '/traces', rows: '[data-trace-id]' },
  { name: 'Logs', path: '/logs', rows: '.log-grid.tr:not(.placeholder)' },
  { name: 'Metrics', path: '/metrics', rows: '.metric-item' },
  { name: 'Requests', path: '/requests', rows: '[data-request-id]' },
  { name: 'A trace', path: '/traces/', rows: '.span-row' },
  { name: 'Resources', path: '/resources', rows: '.resource-row' },
  { name: 'Service map', path: '/map', rows: '.map-edge, .service-map-view .empty' },
];

/** @param {number[]} values */
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } } });
  const runs = Number(values.runs);
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install chromium, or set CHROMIUM_PATH`);
  const { buildWeb } = await import('../scripts/build-web.js');
  await buildWeb({ log: () => {} });
  const { startCollector } = await import('../server/collector.js');
  const collector = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0, print: 'none' });
  const browser = await launchChromium();
  try {
    const filled = performance.now();
    await fill(collector.urls.http);
    const stats = await (await fetch(`${collector.urls.ui}/api/stats`)).json();
    const stored = Object.fromEntries(Object.entries(stats.signals).map(([k, v]) => [k, /** @type {any} */ (v).stored]));
    if (!values.json) console.log(`stored ${JSON.stringify(stored)} in ${((performance.now() - filled) / 1000).toFixed(1)} s`);
    const newest = await (await fetch(`${collector.urls.ui}/api/traces?limit=1&order=desc`)).json();
    const rows = [];
    for (const view of VIEWS) {
      const path = view.path === '/traces/' ? `/traces/${newest.traces[0].traceId}` : view.path;
      const samples = [];
      for (let i = 0; i < runs; i++) samples.push(await firstPaint(browser, collector.urls.ui + path, view.rows));
      const ms = median(samples.map((s) => s.ms));
      const kb = median(samples.map((s) => s.bytes)) / 1024;
      rows.push({ view: view.name, path, ms: Math.round(ms), kb: Math.round(kb * 10) / 10, ok: ms <= TARGET_MS && kb * 1024 <= TARGET_BYTES });
    }
    if (values.json) console.log(JSON.stringify({ stored, rows }));
    else {
      console.log(`\nfirst paint, median of ${runs} (target ≤ ${TARGET_MS} ms and ≤ ${TARGET_BYTES / 1024} KB)`);
      console.log('| view | first paint ms | KB transferred | |\n|---|---|---|---|');
      for (const r of rows) console.log(`| ${r.view} | ${r.ms} | ${r.kb} | ${r.ok ? 'ok' : 'MISSED'} |`);
    }
    process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
  } finally {
    await browser.close();
    await collector.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
