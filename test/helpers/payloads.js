import { readFileSync } from 'node:fs';
import { encodeOtlpRequest } from './otlp-pb.js';

/** @typedef {'traces'|'metrics'|'logs'} SignalName */

/** @type {SignalName[]} */
export const SIGNAL_NAMES = ['traces', 'metrics', 'logs'];

/** What the REST API calls each signal's items, and the OTLP/HTTP path. */
export const API_KIND = /** @type {const} */ ({ traces: 'spans', metrics: 'metrics', logs: 'logs' });
export const HTTP_PATH = /** @type {const} */ ({ traces: '/v1/traces', metrics: '/v1/metrics', logs: '/v1/logs' });
export const GRPC_SERVICE = /** @type {const} */ ({
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
});

const FIXTURES = new URL('../../fixtures/', import.meta.url);

/** @param {SignalName} signal */
export function fixtureJson(signal) {
  return readFileSync(new URL(`${signal}.json`, FIXTURES), 'utf8');
}

/** @param {SignalName} signal */
export function fixturePb(signal) {
  return new Uint8Array(readFileSync(new URL(`${signal}.pb`, FIXTURES)));
}

/** @param {string} key @param {any} value */
const kv = (key, value) => ({ key, value });

/**
 * A small OTLP/JSON Export*ServiceRequest for a signal with one item, tagged so tests can find exactly it
 * (service name = `service`). `encodePb` turns the same object into protobuf bytes.
 * @param {SignalName} signal
 * @param {{ service: string, traceId?: string, spanId?: string, name?: string, timeUnixNano?: string }} options
 * @returns {Record<string, any>} the signal's request, for tests to change
 */
export function sampleRequest(
  signal,
  { service, traceId = '5b8efff798038103d269b633813fc60c', spanId = 'eee19b7ec3c1b174', name = 'op', timeUnixNano = '1700000000123456789' },
) {
  const resource = { attributes: [kv('service.name', { stringValue: service })] };
  const scope = { name: 'conformance', version: '1.0.0' };
  const attributes = [
    kv('str', { stringValue: 'v' }),
    kv('int', { intValue: '-42' }),
    kv('big', { intValue: '9223372036854775807' }),
    kv('dbl', { doubleValue: 2.5 }),
    kv('flag', { boolValue: true }),
    kv('raw', { bytesValue: 'AAEC/w==' }),
    kv('list', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }] } }),
    kv('map', { kvlistValue: { values: [kv('inner', { stringValue: 'x' })] } }),
  ];
  if (signal === 'traces') {
    const end = (BigInt(timeUnixNano) + 1_000_000n).toString();
    return {
      resourceSpans: [
        {
          resource,
          scopeSpans: [
            {
              scope,
              spans: [
                {
                  traceId,
                  spanId,
                  name,
                  kind: 2,
                  startTimeUnixNano: timeUnixNano,
                  endTimeUnixNano: end,
                  attributes,
                  events: [{ timeUnixNano, name: 'evt', attributes: [kv('e', { stringValue: '1' })] }],
                  status: { code: 2, message: 'bad' },
                },
              ],
            },
          ],
        },
      ],
    };
  }
  if (signal === 'logs') {
    return {
      resourceLogs: [
        {
          resource,
          scopeLogs: [
            {
              scope,
              logRecords: [
                {
                  timeUnixNano,
                  observedTimeUnixNano: timeUnixNano,
                  severityNumber: 13,
                  severityText: 'WARN',
                  body: { stringValue: `${name} happened` },
                  attributes,
                  traceId,
                  spanId,
                  flags: 1,
                  eventName: name,
                },
              ],
            },
          ],
        },
      ],
    };
  }
  return {
    resourceMetrics: [
      {
        resource,
        scopeMetrics: [
          {
            scope,
            metrics: [
              {
                name,
                description: 'd',
                unit: '1',
                sum: {
                  aggregationTemporality: 1,
                  isMonotonic: true,
                  dataPoints: [{ attributes, startTimeUnixNano: '1700000000000000000', timeUnixNano, asInt: '9007199254740993' }],
                },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** @param {SignalName} signal @param {any} json */
export function encodePb(signal, json) {
  return encodeOtlpRequest(signal, json);
}

/**
 * Rewrites every object key of an OTLP/JSON document to snake_case (OTLP/JSON attribute keys are values, not
 * object keys, so this only renames fields).
 * @param {any} value
 * @returns {any}
 */
export function toSnakeCase(value) {
  if (Array.isArray(value)) return value.map(toSnakeCase);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()), toSnakeCase(v)]));
  return value;
}

/** Strips what differs between two requests carrying the same content. @param {any[]} items */
export function withoutRequestIds(items) {
  return items.map(({ requestId, ...rest }) => rest);
}
