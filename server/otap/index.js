// OTAP (OpenTelemetry Protocol with Apache Arrow) on the OTLP/gRPC port: the three stream methods and the signal
// each carries.
import { signalByName } from '../otlp/signals.js';
import { OtapStream } from './stream.js';
import { SERVICES } from './services.js';

const PACKAGE = 'opentelemetry.proto.experimental.arrow.v1';

/** @type {Map<string, import('./services.js').OtapService>} */
const PATHS = new Map(SERVICES.map((service) => [`/${PACKAGE}.${service.method}`, service]));

/**
 * Takes the stream when its path is an OTAP method: true when it did.
 * @param {import('../transport/h2/session.js').H2Stream} stream @param {import('../transport/h2/hpack.js').HeaderObject} headers
 * @param {import('../transport/receive.js').Receiver} receiver
 * @param {Set<() => void>} hanging what shutdown releases
 * @param {number} idleTimeoutMs how long a message may stall half-received
 * @param {Set<OtapStream>} open the streams open now, which shutdown tells why they end
 */
export function takeOtapStream(stream, headers, receiver, hanging, idleTimeoutMs, open) {
  const service = PATHS.get(String(headers[':path']));
  if (!service) return false;
  const signal = /** @type {import('../otlp/signals.js').Signal} */ (signalByName(service.signal));
  const otap = new OtapStream(stream, headers, service, signal, receiver, (done) => (hanging.add(done), () => hanging.delete(done)), idleTimeoutMs);
  open.add(otap);
  stream.once('close', () => open.delete(otap));
  return true;
}
