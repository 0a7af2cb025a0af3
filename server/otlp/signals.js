import { pointsOf } from './metric.js';

/**
 * The one table both transports are built from: a row per OTLP signal.
 * @typedef {'traces'|'metrics'|'logs'} SignalName
 * @typedef {{
 *   name: SignalName,
 *   httpPath: string,
 *   grpcService: string,
 *   grpcMethod: string,
 *   requestType: string,
 *   responseType: string,
 *   rootField: 'resourceSpans'|'resourceMetrics'|'resourceLogs',
 *   scopeField: 'scopeSpans'|'scopeMetrics'|'scopeLogs',
 *   itemField: 'spans'|'metrics'|'logRecords',
 *   itemNoun: string,
 *   rejectedField: 'rejectedSpans'|'rejectedDataPoints'|'rejectedLogRecords',
 *   countItems: (request: any) => number,
 * }} Signal
 */

/** @param {any} request @param {string} rootField @param {string} scopeField @param {string} itemField */
function countNested(request, rootField, scopeField, itemField) {
  let n = 0;
  for (const r of request[rootField]) for (const s of r[scopeField]) n += s[itemField].length;
  return n;
}

/** @param {any} request */
function countDataPoints(request) {
  let n = 0;
  for (const r of request.resourceMetrics)
    for (const s of r.scopeMetrics)
      for (const m of s.metrics) n += pointsOf(m).length;
  return n;
}

/** @type {Signal[]} */
export const SIGNALS = [
  {
    name: 'traces',
    httpPath: '/v1/traces',
    grpcService: 'opentelemetry.proto.collector.trace.v1.TraceService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
    responseType: 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
    rootField: 'resourceSpans',
    scopeField: 'scopeSpans',
    itemField: 'spans',
    itemNoun: 'spans',
    rejectedField: 'rejectedSpans',
    countItems: (request) => countNested(request, 'resourceSpans', 'scopeSpans', 'spans'),
  },
  {
    name: 'metrics',
    httpPath: '/v1/metrics',
    grpcService: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
    responseType: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse',
    rootField: 'resourceMetrics',
    scopeField: 'scopeMetrics',
    itemField: 'metrics',
    itemNoun: 'data points',
    rejectedField: 'rejectedDataPoints',
    countItems: countDataPoints,
  },
  {
    name: 'logs',
    httpPath: '/v1/logs',
    grpcService: 'opentelemetry.proto.collector.logs.v1.LogsService',
    grpcMethod: 'Export',
    requestType: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
    responseType: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
    rootField: 'resourceLogs',
    scopeField: 'scopeLogs',
    itemField: 'logRecords',
    itemNoun: 'log records',
    rejectedField: 'rejectedLogRecords',
    countItems: (request) => countNested(request, 'resourceLogs', 'scopeLogs', 'logRecords'),
  },
];

/** @param {string} name @returns {Signal|undefined} */
export function signalByName(name) {
  return SIGNALS.find((s) => s.name === name);
}
