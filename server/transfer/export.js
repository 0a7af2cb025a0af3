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

/** Where an item's JSON goes in the frame of its request. */
class ItemSlot {
  /** @param {number} index */
  constructor(index) {
    this.index = index;
  }
}

/**
 * One OTLP/JSON line of a stored request, as bytes: each item's JSON written a slice at a time, then the request's
 * frame around them. One line of a request of 20,000 spans, built and written at once, held the event loop 243-363
 * ms, and joined as one string of 12 MB (then encoded to be written) 100-190 ms. The frame is rebuilt with a slot in
 * each item's place (`rebuildRequest` puts items back without reading them), so every signal is framed as its
 * request was. `escape` is applied to each piece: it must map characters one by one (terminalJson does).
 * @param {SignalName} signal @param {Entry[]} entries @param {import('../query/scan.js').Slicer} slicer
 * @param {(text: string) => string} [escape]
 * @returns {Promise<Buffer>}
 */
export async function exportLineInSlices(signal, entries, slicer, escape = (text) => text) {
  /** @type {Buffer[]} */
  const parts = [];
  const slots = [];
  for (const entry of entries) {
    slots.push({ item: new ItemSlot(parts.length), ctx: entry.ctx });
    parts.push(Buffer.from(escape(requestJson(entry.item))));
    if (slicer.due()) await slicer.pause();
  }
  /** @type {Buffer[]} */
  const pieces = [];
  frame(rebuildRequest(signal, /** @type {any[]} */ (slots)), parts, escape, pieces);
  pieces.push(NEWLINE);
  return Buffer.concat(pieces);
}

const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT, COMMA, NULL, NEWLINE] = ['[', ']', '{', '}', ',', 'null', '\n'].map((t) => Buffer.from(t));

/**
 * Puts the bytes of JSON.stringify's text of the frame (with OTLP/JSON's non-finite numbers) into `out`, each slot
 * as its item's part.
 * @param {unknown} value @param {Buffer[]} parts @param {(text: string) => string} escape @param {Buffer[]} out
 */
function frame(value, parts, escape, out) {
  if (value instanceof ItemSlot) {
    out.push(parts[value.index]);
  } else if (Array.isArray(value)) {
    out.push(OPEN_ARRAY);
    value.forEach((v, i) => {
      if (i > 0) out.push(COMMA);
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') out.push(NULL);
      else frame(v, parts, escape, out);
    });
    out.push(CLOSE_ARRAY);
  } else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    out.push(OPEN_OBJECT);
    let first = true;
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      out.push(Buffer.from(`${first ? '' : ','}${escape(JSON.stringify(key))}:`));
      first = false;
      frame(v, parts, escape, out);
    }
    out.push(CLOSE_OBJECT);
  } else {
    out.push(Buffer.from(escape(requestJson(value))));
  }
}

/**
 * Lines of every stored request of the given signals, in the order they were stored, each written in `slicer`'s
 * slices. What is exported is fixed when this is called: requests arriving while the lines are read do not tear them.
 * @param {import('../store/store.js').Store} store @param {readonly SignalName[]} signals
 * @param {import('../query/scan.js').Slicer} slicer
 * @returns {AsyncGenerator<Buffer>}
 */
export function exportLines(store, signals, slicer) {
  const requests = signals.flatMap((signal) => storedRequests(store, signal)).sort((a, b) => a.seq - b.seq);
  return (async function* lines() {
    for (const r of requests) {
      yield await exportLineInSlices(r.signal, r.entries, slicer);
      if (slicer.due()) await slicer.pause();
    }
  })();
}
