// Fills a collector to its default caps with telemetry shaped like a small shop: 100,352 spans of
// web-service traces (bench/workload.js), 100,000 log records of three services tied to traces, and
// 100,000 data points of counters, gauges and histograms from two instances. Seeded: the same every run.
import { encodeRequest } from '../server/otlp/schema.js';
import { protoBody, spanRequest } from './workload.js';

export const SPAN_REQUESTS = 196;
const LOG_REQUESTS = 100;
const LOGS_PER_REQUEST = 1000;
const METRIC_EXPORTS = 500;
/** How many requests fillDefaultCaps sends. */
export const FILL_REQUESTS = LOG_REQUESTS + SPAN_REQUESTS + METRIC_EXPORTS;

const str = (/** @type {string} */ key, /** @type {string} */ value) => ({ key, value: { stringValue: value } });
const int = (/** @type {string} */ key, /** @type {number} */ value) => ({ key, value: { intValue: String(value) } });
const BASE_NS = 1768469400000000000n;
const SERVICES = ['checkout', 'cart', 'payment'];
const BODIES = ['order {id} placed', 'cart {id} updated', 'payment {id} declined: insufficient funds', 'GET /api/products/{id} 200', 'slow query on orders ({id} ms)'];

/** @param {number} n */
export function logRequest(n) {
  const service = SERVICES[n % SERVICES.length];
  // Records point at the traces of the span request with the same seed, as correlated logs do.
  const traces = spanRequest(n + 1, 64).resourceSpans[0].scopeSpans[0].spans;
  const logRecords = [];
  for (let i = 0; i < LOGS_PER_REQUEST; i++) {
    const span = traces[i % traces.length];
    const severity = i % 97 === 0 ? 17 : i % 13 === 0 ? 13 : 9;
    const id = n * LOGS_PER_REQUEST + i;
    logRecords.push({
      timeUnixNano: String(BASE_NS + BigInt(n) * 1_000_000_000n + BigInt(i) * 1_000_000n),
      observedTimeUnixNano: String(BASE_NS + BigInt(n) * 1_000_000_000n + BigInt(i) * 1_000_000n + 5000n),
      severityNumber: severity,
      severityText: severity === 17 ? 'ERROR' : severity === 13 ? 'WARN' : 'INFO',
      body: { stringValue: BODIES[i % BODIES.length].replace('{id}', String(id)) },
      attributes: [str('code.function', `handle${i % 7}`), int('app.order.id', id), str('app.tenant', `tenant-${i % 50}`)],
      traceId: span.traceId,
      spanId: span.spanId,
      flags: 1,
    });
  }
  return {
    resourceLogs: [
      {
        resource: { attributes: [str('service.name', service), str('service.instance.id', `${service}-1`), str('deployment.environment.name', 'bench')] },
        scopeLogs: [{ scope: { name: 'app.logger', version: '1.0.0' }, logRecords }],
      },
    ],
  };
}

/** The first log record sent, which a full store keeps as its oldest. */
export function oldestLogRecord() {
  const record = logRequest(0).resourceLogs[0].scopeLogs[0].logRecords[0];
  return { body: record.body.stringValue, traceId: record.traceId };
}

/** 200 points per export: 10 metrics × 5 attribute sets × 2 instances × 2 services. @param {number} n */
export function metricRequest(n) {
  const time = String(BASE_NS + BigInt(n) * 10_000_000_000n);
  const start = String(BASE_NS);
  const routes = ['/api/cart', '/api/checkout', '/api/products', '/api/ads', '/api/recommendations'];
  const resourceMetrics = [];
  for (const service of ['frontend', 'checkout']) {
    for (const instance of [1, 2]) {
      const metrics = [];
      for (let m = 0; m < 10; m++) {
        const dataPoints = routes.map((route, r) => {
          const attributes = [str('http.route', route), str('http.request.method', r % 2 ? 'POST' : 'GET')];
          if (m % 3 === 2)
            return {
              attributes,
              startTimeUnixNano: start,
              timeUnixNano: time,
              count: String(n * 10 + r),
              sum: n * 12.5 + r,
              bucketCounts: ['1', String(n), '3', '0'],
              explicitBounds: [5, 25, 100],
            };
          return { attributes, startTimeUnixNano: start, timeUnixNano: time, asInt: String(n * (r + 1) + m) };
        });
        const name = `app.metric_${m}`;
        if (m % 3 === 0) metrics.push({ name, unit: '{request}', sum: { dataPoints, aggregationTemporality: 2, isMonotonic: true } });
        else if (m % 3 === 1) metrics.push({ name, unit: 'By', gauge: { dataPoints } });
        else metrics.push({ name, unit: 'ms', histogram: { dataPoints, aggregationTemporality: 2 } });
      }
      resourceMetrics.push({
        resource: { attributes: [str('service.name', service), str('service.instance.id', `${service}-${instance}`)] },
        scopeMetrics: [{ scope: { name: 'app.meter', version: '1.0.0' }, metrics }],
      });
    }
  }
  return { resourceMetrics };
}

/** @param {string} httpUrl @param {string} path @param {Uint8Array} body */
async function post(httpUrl, path, body) {
  const res = await fetch(httpUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: /** @type {BodyInit} */ (/** @type {unknown} */ (body)),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

/**
 * Sends everything over OTLP/HTTP protobuf, a few requests in flight. Logs first, so the oldest stored log
 * records are older than the oldest spans, as in an app that logged before it was traced.
 * @param {string} httpUrl
 */
export async function fillDefaultCaps(httpUrl) {
  const jobs = [
    ...Array.from({ length: LOG_REQUESTS }, (_, n) => () => post(httpUrl, '/v1/logs', encodeRequest('logs', logRequest(n)))),
    ...Array.from({ length: SPAN_REQUESTS }, (_, n) => () => post(httpUrl, '/v1/traces', protoBody(n + 1))),
    ...Array.from({ length: METRIC_EXPORTS }, (_, n) => () => post(httpUrl, '/v1/metrics', encodeRequest('metrics', metricRequest(n)))),
  ];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < jobs.length) await jobs[next++]();
    }),
  );
}
