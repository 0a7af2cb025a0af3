import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { ExportResultCode } from '@opentelemetry/core';

/**
 * The three OTLP wires of the official exporters: gRPC, HTTP protobuf, HTTP JSON.
 * @typedef {'grpc'|'proto'|'json'} Wire
 * @typedef {'gzip'|'none'} Compression
 * @typedef {{ wire: Wire, compression: Compression }} WireConfig
 */

/** @type {Wire[]} */
export const WIRES = ['grpc', 'proto', 'json'];

/** Every wire with and without gzip. @type {WireConfig[]} */
export const WIRE_CONFIGS = WIRES.flatMap((wire) => /** @type {Compression[]} */ (['none', 'gzip']).map((compression) => ({ wire, compression })));

const CLASSES = {
  traces: { grpc: GrpcTraceExporter, proto: ProtoTraceExporter, json: JsonTraceExporter },
  metrics: { grpc: GrpcMetricExporter, proto: ProtoMetricExporter, json: JsonMetricExporter },
  logs: { grpc: GrpcLogExporter, proto: ProtoLogExporter, json: JsonLogExporter },
};

const PATHS = { traces: '/v1/traces', metrics: '/v1/metrics', logs: '/v1/logs' };

/**
 * Builds an official exporter for a signal and wire pointed at a collector.
 * @param {'traces'|'metrics'|'logs'} signal
 * @param {WireConfig} config
 * @param {{ grpc: string, http: string }} urls the collector's urls
 * @returns {any} the exporter (OTLPTraceExporter | OTLPMetricExporter | OTLPLogExporter)
 */
export function createExporter(signal, { wire, compression }, urls) {
  // The nine classes take different config types; all of them accept these fields.
  const Exporter = /** @type {new (config: Record<string, unknown>) => any} */ (CLASSES[signal][wire]);
  const url = wire === 'grpc' ? urls.grpc : urls.http + PATHS[signal];
  // `compression` is typed as the exporters' own string enum, whose values are these same strings.
  return new Exporter({ url, compression, timeoutMillis: 10000 });
}

/**
 * Calls `exporter.export(items)` and resolves with the result, failing on anything but SUCCESS.
 * @param {{ export: (items: any, done: (result: { code: number, error?: Error }) => void) => void }} exporter
 * @param {any} items ReadableSpan[] | ResourceMetrics | ReadableLogRecord[]
 */
export function exportOrThrow(exporter, items) {
  return new Promise((resolve, reject) => {
    exporter.export(items, (result) => {
      if (result.code === ExportResultCode.SUCCESS) resolve(result);
      else reject(result.error ?? new Error(`export failed with code ${result.code}`));
    });
  });
}

/** @param {WireConfig} c */
export const describeWire = (c) => `${c.wire}${c.compression === 'gzip' ? '+gzip' : ''}`;
