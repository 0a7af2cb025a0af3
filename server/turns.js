// Work that would hold the event loop for long (decoding a large body, scanning a full store for a query, building
// a large answer) runs in slices: it asks `due()` between small steps and, once its slice is spent, waits for its
// turn again. Turns are handed out one slice at a time, in arrival order, over everything sliced: decoders, queries,
// verify, snapshot. While telemetry arrives and other requests ran between two slices, sliced work together takes
// at most BUSY_SHARE of the time, so a client that sends bombs or asks for a hundred thousand items slows its own
// answers, not everyone else's; otherwise a turn follows straight on, so an idle server runs such work at full speed.
import { performance } from 'node:perf_hooks';

/** How long one slice may run before it gives way. */
export const SLICE_MS = 1;
/** The share of the event loop's time that sliced work may take while other work is waiting. */
export const BUSY_SHARE = 0.1;
/**
 * A turn that comes back within this long found nothing else to do in between. Lower, a garbage collection or
 * the process being descheduled passes for other work, and an idle server waits for nothing (measured: 0.1 ms
 * halved the speed of framed snappy on an idle two-core machine; 0.25 ms cost 15 %).
 */
const IDLE_GAP_MS = 0.25;
/**
 * The longest a slice that ran long makes the next turn wait. A slice is long when one step took long, or when the
 * process was descheduled or collecting garbage in the middle of it: paid back in full, a loaded machine's pauses of
 * 100 ms held a verify's next turn back for over a second (measured: 1,080 ms).
 */
const MAX_OWED_MS = 50;

/**
 * How recent the last stored telemetry must be for the server to count as receiving. A gap between two slices alone
 * does not say that others were served: on a loaded machine the process is descheduled for longer than IDLE_GAP_MS,
 * and an idle server's export then took seven times as long.
 */
const RECEIVING_WITHIN_MS = 100;
let lastArrival = -Infinity;

/** Called as telemetry is stored: while it arrives, sliced work takes its share only. */
export function noteArrival() {
  lastArrival = performance.now();
}

/** @type {(() => void)[]} */
const waiting = [];
let scheduled = false;
/** When the last slice gave way (its pause), and how long it had run from its turn. */
let lastEnd = 0;
let lastLength = 0;
/** When the latest turn began: a slice is never counted from before it (work may hold a slicer across other awaits). */
let turnBegan = 0;

function nextTurn() {
  const now = performance.now();
  const gap = now - lastEnd;
  // Others ran between the last slice and now while telemetry arrives: they get their share before the next one.
  const owed = gap > IDLE_GAP_MS && now - lastArrival < RECEIVING_WITHIN_MS ? Math.min(MAX_OWED_MS, (lastLength * (1 - BUSY_SHARE)) / BUSY_SHARE) - gap : 0;
  if (owed >= 1) {
    setTimeout(runNext, owed);
    return;
  }
  runNext();
}

function runNext() {
  scheduled = false;
  const resume = waiting.shift();
  // Scheduled from inside this turn, the next one comes in a later iteration of the event loop.
  if (waiting.length) schedule();
  resume?.();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(nextTurn);
}

/** The time a piece of sliced work has left in its current slice. */
export class Turn {
  constructor() {
    this.started = performance.now();
    /** Until its first turn a piece of work has done nothing, and owes nothing. */
    this.begun = false;
  }

  /** Whether the slice is spent: the caller should `await pause()` before its next step. */
  spent() {
    return performance.now() - this.started >= SLICE_MS;
  }

  /**
   * Waits for the next turn, which starts a fresh slice. Work starts by waiting for its first turn, so that what
   * is already being worked on, and the requests already waiting, go first.
   */
  async pause() {
    // A slice is counted from its turn to the pause that ends it, waits for the thread pool included: zlib's work
    // is done there, and counting only the checks in between let two gzip bombs take half the loop (measured).
    if (this.begun) {
      lastEnd = performance.now();
      lastLength = lastEnd - Math.max(this.started, turnBegan);
    }
    this.begun = true;
    await new Promise((resolve) => {
      waiting.push(() => resolve(undefined));
      schedule();
    });
    this.started = turnBegan = performance.now();
  }
}
