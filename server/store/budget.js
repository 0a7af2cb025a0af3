// What a received request keeps in memory, estimated from its uncompressed size on the wire, so that the store
// can hold its signals and the journal its bodies to byte budgets. The factors were measured with
// `node --expose-gc` over the fixtures (heap and external memory after decoding 300 copies, over their bytes).

/** A LazySpan keeps its request's bytes (shared by the request's spans) and ~480 heap bytes of its own. */
const LAZY_SPAN_BYTES = 512;
/** Decoded protobuf: objects and strings weigh ~3.3 times the bytes they came from. */
const PROTO_HEAP_FACTOR = 3.5;
/** Decoded OTLP/JSON weighs about what its text did: hex ids and field names shrink, objects grow. */
const JSON_HEAP_FACTOR = 1.25;
/** The store's own entry, ring slots and index places, per item. */
export const ENTRY_BYTES = 128;

/**
 * @param {'traces'|'metrics'|'logs'} signal @param {number} wireBytes uncompressed body
 * @param {number} items @param {boolean} json whether it was OTLP/JSON (else protobuf, with spans kept lazily)
 * @returns {number} whole bytes
 */
export function keptBytes(signal, wireBytes, items, json) {
  const perItem = ENTRY_BYTES + (!json && signal === 'traces' ? LAZY_SPAN_BYTES : 0);
  const body = json ? wireBytes * JSON_HEAP_FACTOR : signal === 'traces' ? wireBytes : wireBytes * PROTO_HEAP_FACTOR;
  return Math.ceil(body + items * perItem);
}

/** The decoded (built) body the journal keeps for a request whose items were not stored. @param {number} wireBytes @param {boolean} json */
export function builtBodyBytes(wireBytes, json) {
  return Math.ceil(wireBytes * (json ? JSON_HEAP_FACTOR : PROTO_HEAP_FACTOR));
}

/** 512 MiB in all by default: the process then stays under 1 GiB RSS, whatever arrives. */
export const MiB = 1024 * 1024;
