// Which of the client's headers travel on to the upstream: the end-to-end ones (authorization and custom headers
// included, so that otlp-mock can stand in front of a backend that checks them), not the ones that describe one
// connection or one encoding, which the upstream call sets for itself. A value the upstream's wire cannot carry (a
// byte past ASCII from an HTTP client, for gRPC metadata) is left out, as binary metadata is for HTTP: sent, it would
// fail the whole call.
import { headerValueFits } from '../otlp/text.js';

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'expect',
  'content-length',
  'content-type',
  'content-encoding',
  'accept-encoding',
]);

/**
 * @param {Readonly<Record<string, unknown>>} received the client's headers or gRPC metadata, names in lower case
 * @param {'grpc'|'http'} to the upstream's wire
 * @param {Readonly<Record<string, string>>} set the target's own headers; an empty value removes one
 * @returns {Record<string, string|Buffer>}
 */
export function upstreamHeaders(received, to, set) {
  /** @type {Record<string, string|Buffer>} */
  const out = {};
  for (const [name, value] of Object.entries(received)) {
    if (value === undefined || name.startsWith(':') || name.startsWith('grpc-') || HOP_BY_HOP.has(name)) continue;
    // grpc-js writes its own user-agent; binary metadata has no OTLP/HTTP form.
    if (to === 'grpc' && name === 'user-agent') continue;
    if (Buffer.isBuffer(value)) {
      if (to === 'grpc') out[name] = value;
      continue;
    }
    if (to === 'http' && name.endsWith('-bin')) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    if (headerValueFits(text, to)) out[name] = text;
  }
  for (const [name, value] of Object.entries(set)) {
    if (value === '') delete out[name];
    else out[name] = value;
  }
  return out;
}
