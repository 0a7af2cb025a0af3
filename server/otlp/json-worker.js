// The worker thread of json-off-thread.js: transcodes each OTLP/JSON body it is sent and sends back the protobuf,
// its buffer moved rather than copied. A text the transcoder declines (a field given twice, a lone surrogate, ...)
// is read here by the reference decoder (decode-json.js) and its request encoded as protobuf, so that no large body
// is read on the event loop; one the reference decoder refuses is sent back as `invalid`, with its words. A job
// `to: 'json'` goes the other way: the OTLP/JSON of a protobuf request, for a forward target that takes JSON.
import { parentPort } from 'node:worker_threads';
import { decodeJson } from './decode-json.js';
import { DecodeError } from './errors.js';
import { jsonToProto } from './json-proto.js';
import { builtRequest, decodeProto } from './items.js';
import { encodeRequest } from './schema.js';
import { SIGNALS } from './signals.js';
import { requestJson } from '../transfer/otlp-json.js';

/**
 * A decoded request with each string made well formed: protobuf strings are UTF-8, which cannot carry a lone
 * surrogate (JSON's `\ud800`); it becomes U+FFFD, as UTF-8 decoders read it.
 * @param {unknown} value @returns {any}
 */
export function wellFormed(value) {
  if (typeof value === 'string') return /** @type {any} */ (value).toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value === null || typeof value !== 'object') return value;
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, v] of Object.entries(value)) out[key] = wellFormed(v);
  return out;
}

/**
 * The protobuf of an OTLP/JSON body, by the transcoder or, for a text it declines, by the reference decoder.
 * @param {import('./signals.js').SignalName} name @param {Buffer} text @returns {Uint8Array}
 */
export function protobufOf(name, text) {
  const signal = SIGNALS[name];
  const wire = jsonToProto(signal, text);
  if (wire !== null) return wire;
  return encodeRequest(name, wellFormed(decodeJson(signal, text)));
}

/**
 * The OTLP/JSON of a protobuf request, as the forwarder writes it from the request it decoded.
 * @param {import('./signals.js').SignalName} name @param {Buffer} wire @returns {Uint8Array}
 */
export function jsonOf(name, wire) {
  const signal = SIGNALS[name];
  return Buffer.from(requestJson(builtRequest(signal, decodeProto(signal, wire))));
}

/** @param {{ id: number, signal: import('./signals.js').SignalName, body: Uint8Array, to?: 'json' }} job */
function transcode({ id, signal, body, to }) {
  let wire;
  try {
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    wire = to === 'json' ? jsonOf(signal, bytes) : protobufOf(signal, bytes);
  } catch (err) {
    if (err instanceof DecodeError) parentPort?.postMessage({ id, invalid: err.message });
    else parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  // An empty body's protobuf is a constant of the transcoder's, which must stay usable here; protobufjs's writer
  // may hand back a view into a larger buffer, which is copied so that only its bytes are moved.
  const own = wire.length === 0 || wire.byteOffset !== 0 || wire.buffer.byteLength !== wire.length ? Uint8Array.prototype.slice.call(wire) : wire;
  parentPort?.postMessage({ id, wire: own }, own.length ? [/** @type {ArrayBuffer} */ (own.buffer)] : []);
}

parentPort?.on('message', transcode);
