// GET /api/export and `--print json`: stored telemetry back as OTLP/JSON lines, one Export*ServiceRequest
// per request as it was received, so the lines can be replayed into any collector.
import { rebuildRequest } from '../store/rebuild.js';
import { requestJson } from './otlp-json.js';

/**
 * @typedef {import('../otlp/signals.js').SignalName} SignalName
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {{ signal: SignalName, requestId: number, seq: number, entries: Entry[] }} StoredRequest
 */

/**
 * The stored items of one signal cut back into the requests they came in: a request's items are stored
 * together, so they sit side by side in the ring.
 * @param {import('../store/store.js').Store} store @param {SignalName} signal @returns {StoredRequest[]}
 */
function storedRequests(store, signal) {
  /** @type {StoredRequest[]} */
  const out = [];
  /** @type {StoredRequest|null} */
  let current = null;
  for (const entry of store.ring(signal)) {
    if (!current || current.requestId !== entry.ctx.requestId) {
      current = { signal, requestId: entry.ctx.requestId, seq: entry.seq, entries: [] };
      out.push(current);
    }
    current.entries.push(entry);
  }
  return out;
}

/** @param {SignalName} signal @param {Entry[]} entries @returns {string} */
export function exportLine(signal, entries) {
  return requestJson(rebuildRequest(signal, entries)) + '\n';
}

/**
 * Lines of every stored request of the given signals, in the order they were stored. What is exported is
 * fixed when this is called: requests arriving while the lines are read do not tear them.
 * @param {import('../store/store.js').Store} store @param {readonly SignalName[]} signals
 * @returns {Generator<string>}
 */
export function exportLines(store, signals) {
  const requests = signals.flatMap((signal) => storedRequests(store, signal)).sort((a, b) => a.seq - b.seq);
  return (function* lines() {
    for (const r of requests) yield exportLine(r.signal, r.entries);
  })();
}
