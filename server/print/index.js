// Console output of what arrives (`--print`): it follows the store's and journal's feeds through a bounded
// queue, so a slow or stuck stdout costs dropped lines, never a slower receiver.
import { OutputQueue } from './queue.js';
import { summaryText } from './summary.js';
import { LineRate, Rollup } from './rollup.js';
import { exportLineInSlices } from '../transfer/export.js';
import { Slicer } from '../query/scan.js';
import { terminalJson } from './escape.js';

/**
 * @typedef {import('../config.js').PrintMode} PrintMode
 * @typedef {import('./summary.js').Received} Received
 * @typedef {{ mode: PrintMode, queued: number, dropped: number }} PrintStats  `dropped`: requests not printed
 *   because the output could not keep up, since start
 * @typedef {{ queue: OutputQueue<any>|null, stats: () => PrintStats, stop: () => void }} Printer
 */

/** Stored requests still waiting for their journal entry (a delayed answer comes later); bounds a leak. */
const MAX_PENDING = 10_000;
/**
 * Requests printed in full each second. Past that, one line a second counts the rest: nobody reads a terminal
 * scrolling thousands of lines a second, and formatting them would take the receivers' CPU.
 */
const FULL_PER_SECOND = 20;
/** Bytes of stored items and bodies that queued lines may hold on to beyond the store's budget, while the output is stuck. */
const MAX_QUEUED_BYTES = 32 * 1024 * 1024;

/**
 * Follows the store's feed a request at a time: the parts of a large request, each a batch of the store's, are
 * passed on together, as one batch, once its last part is stored.
 * @param {import('../store/store.js').Store} store @param {(batch: import('../store/store.js').StoredBatch) => void} listener
 * @returns {() => void} unsubscribe
 */
function wholeRequests(store, listener) {
  /** @type {Map<number, import('../store/store.js').StoredBatch[]>} the parts stored so far, by request */
  const parts = new Map();
  return store.subscribe((batch) => {
    const earlier = parts.get(batch.requestId);
    if (batch.more) {
      if (earlier) earlier.push(batch);
      else parts.set(batch.requestId, [batch]);
      return;
    }
    if (!earlier) return listener(batch);
    parts.delete(batch.requestId);
    const all = [...earlier, batch];
    listener({
      ...batch,
      entries: all.flatMap((b) => b.entries),
      evicted: {
        length: all.reduce((sum, b) => sum + b.evicted.length, 0),
        *[Symbol.iterator]() {
          for (const b of all) yield* b.evicted;
        },
      },
      bytes: all.reduce((sum, b) => sum + b.bytes, 0),
    });
  });
}

/**
 * @param {{ mode: PrintMode, store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
 *   out?: NodeJS.WritableStream, maxQueue?: number, fullPerSecond?: number }} options
 *   `fullPerSecond`: requests printed in full each second before the rest are counted on one line
 * @returns {Printer}
 */
export function startPrinter({ mode, store, journal, out = process.stdout, maxQueue = 1000, fullPerSecond = FULL_PER_SECOND }) {
  if (mode === 'none') return { queue: null, stats: () => ({ mode, queued: 0, dropped: 0 }), stop: () => {} };
  /** @param {OutputQueue<any>} queue @returns {() => PrintStats} */
  const statsOf = (queue) => () => ({ mode, queued: queue.length, dropped: queue.dropped });

  if (mode === 'json') {
    /** @type {OutputQueue<import('../store/store.js').StoredBatch>} */
    // A request of 20,000 spans written at once held the event loop 286-454 ms: written in slices, the queue waits.
    const queue = new OutputQueue(out, (batch) => exportLineInSlices(batch.signal, batch.entries, new Slicer(), terminalJson), {
      maxItems: maxQueue,
      weigh: (batch) => batch.bytes,
      maxWeight: MAX_QUEUED_BYTES,
    });
    const unsubscribe = wholeRequests(store, (batch) => queue.push(batch));
    return {
      queue,
      stats: statsOf(queue),
      stop: () => {
        unsubscribe();
        queue.close();
      },
    };
  }

  /** @type {OutputQueue<Received|Rollup>} */
  const queue = new OutputQueue(out, (item) => (item instanceof Rollup ? item.text() : summaryText(item)), {
    maxItems: maxQueue,
    weigh: (item) => (item instanceof Rollup ? 1 : item.bytes),
    maxWeight: MAX_QUEUED_BYTES,
  });
  const rate = new LineRate(fullPerSecond, (rollup) => queue.push(rollup));
  /** @type {Map<number, import('../store/store.js').StoredBatch>} */
  const pending = new Map();
  const unsubscribeStore = wholeRequests(store, (batch) => {
    pending.set(batch.requestId, batch);
    if (pending.size > MAX_PENDING) pending.delete(/** @type {number} */ (pending.keys().next().value));
  });
  const unsubscribeJournal = journal.subscribe((entry) => {
    const batch = pending.get(entry.id);
    pending.delete(entry.id);
    if (!rate.full(entry)) return;
    if (batch) queue.push({ entry, stored: batch.entries, body: null, bytes: batch.bytes });
    else queue.push({ entry, stored: null, body: journal.unstoredBodies.get(entry.id) ?? null, bytes: journal.bodySizes.get(entry.id) ?? 1 });
  });
  return {
    queue,
    stats: statsOf(queue),
    stop: () => {
      unsubscribeStore();
      unsubscribeJournal();
      rate.stop();
      queue.close();
      pending.clear();
    },
  };
}
