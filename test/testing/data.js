// OTLP/JSON requests for the testing suites, and the small steps every one of them takes.
import { waitFor } from '../helpers/wait.js';

/** @param {string} key @param {any} value */
const kv = (key, value) => ({ key, value });

let nextSpan = 1;
/** @param {number} n */
const hex = (n, width = 16) => n.toString(16).padStart(width, '0');

/**
 * One request with a span per name, all of one service; the first span is the parent of the others.
 * @param {string} service @param {string[]} names @returns {any} for tests to add fields to
 */
export function spans(service, names) {
  const traceId = hex(nextSpan, 32);
  const ids = names.map(() => hex(nextSpan++));
  return {
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', { stringValue: service })] },
        scopeSpans: [
          {
            scope: { name: 'testing', version: '1' },
            spans: names.map((name, i) => ({
              traceId,
              spanId: ids[i],
              parentSpanId: i === 0 ? '' : ids[0],
              name,
              kind: i === 0 ? 2 : 3,
              startTimeUnixNano: String(1768469400000000000n + BigInt(i) * 1000000n),
              endTimeUnixNano: String(1768469400000000000n + BigInt(i) * 1000000n + 2500000n),
              status: { code: name.includes('fail') ? 2 : 0 },
            })),
          },
        ],
      },
    ],
  };
}

/** @param {string} service @param {string[]} bodies */
export function logs(service, bodies) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [kv('service.name', { stringValue: service })] },
        scopeLogs: [
          {
            scope: { name: 'testing' },
            logRecords: bodies.map((body, i) => ({
              timeUnixNano: String(1768469400000000000n + BigInt(i)),
              severityNumber: 9,
              severityText: 'INFO',
              body: { stringValue: body },
            })),
          },
        ],
      },
    ],
  };
}

/** A gauge with one data point per value. @param {string} service @param {string} name @param {number[]} values */
export function gauge(service, name, values) {
  return {
    resourceMetrics: [
      {
        resource: { attributes: [kv('service.name', { stringValue: service })] },
        scopeMetrics: [
          {
            scope: { name: 'testing' },
            metrics: [
              {
                name,
                unit: '1',
                gauge: { dataPoints: values.map((v, i) => ({ timeUnixNano: String(1768469400000000000n + BigInt(i)), asDouble: v })) },
              },
            ],
          },
        ],
      },
    ],
  };
}

const PATHS = { traces: '/v1/traces', metrics: '/v1/metrics', logs: '/v1/logs' };

/**
 * POSTs one OTLP/JSON request to a collector's OTLP/HTTP receiver.
 * @param {{ urls: { http: string } }} collector @param {'traces'|'metrics'|'logs'} signal @param {unknown} body
 */
export async function send(collector, signal, body) {
  const res = await fetch(collector.urls.http + PATHS[signal], {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** @param {{ urls: { ui: string } }} collector */
export async function waiterCount(collector) {
  const res = await fetch(collector.urls.ui + '/api/stats');
  return (await res.json()).waiters;
}

/**
 * Resolves once the collector has exactly `n` waiting queries: the point where data sent next must wake them.
 * @param {{ urls: { ui: string } }} collector @param {number} n
 */
export function waitersReach(collector, n) {
  return waitFor(async () => (await waiterCount(collector)) === n, { what: `${n} waiting queries` });
}
