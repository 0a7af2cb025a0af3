// The worker thread of json-off-thread.js: transcodes each OTLP/JSON body it is sent and sends back the protobuf,
// its buffer moved rather than copied, or null for a text the transcoder declines.
import { parentPort } from 'node:worker_threads';
import { jsonToProto } from './json-proto.js';
import { SIGNALS } from './signals.js';

/** @param {{ id: number, signal: import('./signals.js').SignalName, body: Uint8Array }} job */
function transcode({ id, signal, body }) {
  let wire;
  try {
    wire = jsonToProto(SIGNALS[signal], Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  // An empty body's protobuf is a constant of the transcoder's, which must stay usable here.
  if (wire === null || wire.length === 0) parentPort?.postMessage({ id, wire: wire && new Uint8Array(0) });
  else parentPort?.postMessage({ id, wire }, [/** @type {ArrayBuffer} */ (wire.buffer)]);
}

parentPort?.on('message', transcode);
