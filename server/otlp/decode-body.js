// A request body as the receivers and the import store it: protobuf, or OTLP/JSON written into protobuf, decoded
// lazily (items checked now, built when read); OTLP/JSON the transcoder declines goes to decodeJson, the reference
// for what OTLP/JSON means, which builds every item and says what is wrong with a bad body.
import { decodeJson } from './decode-json.js';
import { decodeProto } from './items.js';
import { jsonToProto } from './json-proto.js';

const LAZY = { lazy: true };

/**
 * @param {import('./signals.js').Signal} signal @param {Buffer} body uncompressed @param {boolean} json OTLP/JSON
 * @param {Buffer|null} [transcoded] OTLP/JSON's protobuf, when it was made already (json-off-thread.js)
 * @returns {{ request: any, wire: Buffer|null }} `wire`: the protobuf the request was decoded from and its items
 *   keep; null when decodeJson decoded the JSON itself
 * @throws {import('./errors.js').DecodeError}
 */
export function decodeBody(signal, body, json, transcoded) {
  const wire = json ? (transcoded === undefined ? jsonToProto(signal, body) : transcoded) : body;
  return { request: wire ? decodeProto(signal, wire, LAZY) : decodeJson(signal, body), wire };
}
