// OTAP (OpenTelemetry Protocol with Apache Arrow) on the OTLP/gRPC port: the three stream methods and the signal
// each carries.
import { signalByName } from '../otlp/signals.js';
import { OtapStream } from './stream.js';

const PACKAGE = 'opentelemetry.proto.experimental.arrow.v1';

/** @type {Map<string, import('../otlp/signals.js').Signal>} */
const PATHS = new Map(
  [
    ['traces', 'ArrowTracesService/ArrowTraces'],
    ['logs', 'ArrowLogsService/ArrowLogs'],
    ['metrics', 'ArrowMetricsService/ArrowMetrics'],
  ].map(([name, method]) => [`/${PACKAGE}.${method}`, /** @type {any} */ (signalByName(name))]),
);

/**
 * Takes the stream when its path is an OTAP method: true when it did.
 * @param {import('node:http2').ServerHttp2Stream} stream @param {import('node:http2').IncomingHttpHeaders} headers
 * @param {import('../transport/receive.js').Receiver} receiver
 * @param {Set<() => void>} hanging what shutdown releases
 * @param {number} idleTimeoutMs how long a message may stall half-received
 */
export function takeOtapStream(stream, headers, receiver, hanging, idleTimeoutMs) {
  const signal = PATHS.get(String(headers[':path']));
  if (!signal) return false;
  new OtapStream(stream, headers, signal, receiver, (done) => (hanging.add(done), () => hanging.delete(done)), idleTimeoutMs);
  return true;
}
