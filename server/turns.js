// Work that would hold the event loop for long (decoding a large body, scanning a full store for a query, building
// a large answer) runs in slices: it asks `due()` between small steps and, once its slice is spent, waits for its
// turn again. Turns are handed out one slice at a time, in arrival order, over everything sliced: decoders, queries,
// verify, snapshot. While telemetry arrives and other requests ran between two slices, each slice is followed by a
// rest, so that decoders take at most BUSY_SHARE of the time and the admin API's scans ADMIN_SHARE: a client that
// sends bombs or asks for a hundred thousand items slows its own answers, not everyone else's; otherwise a turn
// follows straight on, so an idle server runs such work at full speed.
import { performance } from 'node:perf_hooks';

/** How long one slice may run before it gives way. */
export const SLICE_MS = 1;
/** The share of the event loop's time that decoders' sliced work may take while other work is waiting. */
export const BUSY_SHARE = 0.1;
/**
 * The share the admin API's scans may take meanwhile (queries, waiters, verify, snapshot, export): at a tenth, a
 * client looping verify with a backtracking pattern, snapshots, 100,000-item pages or a waiter left normal ingest at
 * 0.82-0.89 of its rate (a full `npm run soak`, five rows), as a tenth of the loop and the requests' own handling add
 * up to. At a twentieth, with normal ingest keeping the loop busy, a looped verify with a backtracking pattern still
 * left it at 0.81-0.89 (three soak runs); at a fortieth, 0.96, and snapshots, pages and a waiter 0.93-0.98. Its slices
 * are 1 ms all the same: a large answer takes longer only while telemetry arrives. Each request on the UI port takes
 * a turn of BUSY_SHARE, so that pages and small calls are still answered a hundred a second.
 */
export const ADMIN_SHARE = 0.025;
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
/** When the last slice gave way (its pause), how long it had run from its turn, and the share of its work. */
let lastEnd = 0;
let lastLength = 0;
let lastShare = BUSY_SHARE;
/** When the latest turn began: a slice is never counted from before it (work may hold a slicer across other awaits). */
let turnBegan = 0;
/**
 * The work whose turn it is, until it pauses or the callbacks that its turn ran have returned (`closeTurn`). Work
 * that ends without a last pause (a scan that finished, a decoder done) still ran its last slice: left uncounted,
 * a looped snapshot whose scan fit in one slice took 24-42 % of the loop while telemetry arrived, not a tenth.
 * @type {Turn|null}
 */
let holder = null;

/** The holder, when its slice can be counted now: not one that goes on while another thread works. */
const openSlice = () => (holder !== null && !holder.acrossWaits ? holder : null);

/** @param {number} now @param {number} from @param {number} share */
function charge(now, from, share) {
  lastEnd = now;
  lastLength = now - from;
  lastShare = share;
}

/**
 * Runs right after the callbacks of a turn, before any I/O: whatever its work did up to here without pausing counts
 * as its slice. A slice that goes on after that (waiting for the thread pool) counts the rest at its pause.
 */
function closeTurn() {
  const open = openSlice();
  if (open === null) return;
  const now = performance.now();
  charge(now, turnBegan, open.share);
  open.chargedUntil = now;
  holder = null;
}

function nextTurn() {
  const now = performance.now();
  const gap = now - lastEnd;
  // Others ran between the last slice and now while telemetry arrives: they get their share before the next one.
  // Telemetry stored in between says so for certain: one small request takes less than IDLE_GAP_MS, and a client
  // that waits for each answer would otherwise find a slice under way at almost every request (measured: a looped
  // verify took 36 % of the loop, and such a client's ingest fell to 0.52-0.88).
  const othersRan = gap > IDLE_GAP_MS || lastArrival > lastEnd;
  const owed = othersRan && now - lastArrival < RECEIVING_WITHIN_MS ? Math.min(MAX_OWED_MS, (lastLength * (1 - lastShare)) / lastShare) - gap : 0;
  if (owed >= 1) {
    setTimeout(runNext, owed);
    setTimeout(closeTurn, owed);
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
  // Queued together, the two run in one pass of the loop, with the turn's callbacks (microtasks) in between.
  setImmediate(nextTurn);
  setImmediate(closeTurn);
}

/** The time a piece of sliced work has left in its current slice. */
export class Turn {
  /** @param {number} [share] of the loop's time while telemetry arrives: BUSY_SHARE or ADMIN_SHARE */
  constructor(share = BUSY_SHARE) {
    this.share = share;
    this.started = performance.now();
    /** Until its first turn a piece of work has done nothing, and owes nothing. */
    this.begun = false;
    /** How far its current slice was counted when the callbacks of its turn returned. */
    this.chargedUntil = 0;
    /**
     * Set by work whose slice goes on while it waits for another thread (zlib's pool): its slice is counted at its
     * pause only. Closed when its callbacks returned, such a slice would count only the piece before its first wait,
     * and the next turn would owe as little.
     */
    this.acrossWaits = false;
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
    const now = performance.now();
    if (holder === this || openSlice() !== null) {
      // Its own slice, or one of the work it is part of (a snapshot's scan, before the snapshot's own first pause).
      charge(now, turnBegan, (holder ?? this).share);
      holder = null;
    } else if (this.begun) charge(now, Math.max(this.started, turnBegan, this.chargedUntil), this.share);
    this.begun = true;
    await new Promise((resolve) => {
      waiting.push(() => resolve(undefined));
      schedule();
    });
    this.started = turnBegan = performance.now();
    holder = this;
  }
}

/**
 * What a request on the UI port is counted as at least, besides its handler's own time: a connection's setup, the
 * request's parse and routing, and writing the answer (measured: 0.1 ms for /api/health and 0.25 ms for a small
 * snapshot over a new connection, 0.03-0.1 ms over a kept one).
 */
export const REQUEST_COST_MS = 1;

/**
 * Waits for a turn for one request on the UI port. Clients may loop the API's requests (or pages, or refusals) as
 * fast as they are answered; while telemetry arrives, such requests take their turns with sliced work, so together
 * they take about BUSY_SHARE of the loop, and otherwise they are answered at once. Resolves with the function that
 * ends the turn once the answer is on its way (later calls do nothing).
 * @returns {Promise<() => void>}
 */
export async function requestTurn() {
  const turn = new Turn();
  await turn.pause();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const now = performance.now();
    // A handler that worked in slices counted them itself, but for a slice still under way; one that did not, what it
    // did since its turn began (and was not counted when that turn's callbacks returned) counts too.
    const from = openSlice() !== null ? turnBegan : turnBegan === turn.started ? Math.max(turn.started, turn.chargedUntil) : now;
    holder = null;
    charge(now, from - REQUEST_COST_MS, BUSY_SHARE);
  };
}
