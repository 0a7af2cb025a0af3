// What a received request keeps in memory, estimated from its uncompressed size on the wire and its item count,
// so that the store can hold its signals and the journal its bodies to byte budgets. Measured with
// `node --expose-gc`: bench/heap.js for stored items (at full caps, over bench/fill.js's realistic requests),
// and for built requests the heap grown by keeping 60 built requests of each shape (bench/fill.js's, the
// fixtures', and those of the Collector comparison's load), over their bytes. What one item of each signal
// keeps besides its bytes is in the signal table (lazyItemBytes, builtItemBytes).
import { SIGNALS } from '../otlp/signals.js';

/** @typedef {import('../otlp/signals.js').SignalName} SignalName */

/**
 * OTLP/JSON built by decodeJson (what json-proto.js does not write as protobuf; the rest is kept like protobuf):
 * compact text, as exporters send it, builds to 2.2 (logs) to 2.8 (metrics) times its bytes, measured over the
 * Collector comparison's load; indented text (the fixtures) to about its bytes.
 */
const JSON_HEAP_FACTOR = 3;
/** The store's own entry, ring slots and index places, per item decoded from OTLP/JSON. */
export const ENTRY_BYTES = 128;

/**
 * Items received in protobuf are kept as their request's bytes (held whole until its last item goes) and
 * what each item keeps besides.
 * @param {SignalName} signal @param {number} wireBytes uncompressed body
 * @param {number} items @param {boolean} json whether it was decoded from OTLP/JSON (else protobuf, kept lazily)
 * @returns {number} whole bytes
 */
export function keptBytes(signal, wireBytes, items, json) {
  if (json) return Math.ceil(wireBytes * JSON_HEAP_FACTOR + items * ENTRY_BYTES);
  return wireBytes + items * SIGNALS[signal].lazyItemBytes;
}

/**
 * The decoded (built) body the journal keeps for a request whose items were not stored: built items weigh
 * their bytes again (strings are about as long as on the wire) and their objects.
 * @param {SignalName} signal @param {number} wireBytes @param {number} items @param {boolean} json
 */
export function builtBodyBytes(signal, wireBytes, items, json) {
  return json ? Math.ceil(wireBytes * JSON_HEAP_FACTOR) : wireBytes + items * SIGNALS[signal].builtItemBytes;
}

export const MiB = 1024 * 1024;
