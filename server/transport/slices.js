// Decoders written in JavaScript run on the event loop, so a body that expands to the request limit would hold
// every other client for the whole decode; zlib's run in the thread pool, but on a small machine they take the
// cores the other clients' requests need. So every decoder works in slices that take turns with all other sliced
// work (../turns.js): while other requests are being served, a client that sends bombs slows its own answers, not
// everyone else's.
import { performance } from 'node:perf_hooks';
import { SLICE_MS, Turn } from '../turns.js';

/** A body whose client went away while it waited or was decoded: nobody is left to answer. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away before its body was decoded');
  }
}

/** A decoder's output would take more of the in-flight budget than is left: the request is refused, to retry later. */
export class NoRoom extends Error {
  constructor() {
    super('otlp-mock has too many bytes in flight; retry later (--max-inflight-bytes)');
  }
}

/**
 * Room in the server's in-flight budget (--max-inflight-bytes) for what a decoder allocates: `take` is asked
 * before each allocation and says whether it fits, `give` returns bytes no longer held.
 * @typedef {{ take: (n: number) => boolean, give: (n: number) => void }} Room
 */

/** @type {Room} */
const UNBOUNDED = { take: () => true, give: () => {} };

/** The time a decoder has left in its current slice, and the room its output takes. */
export class Slicer extends Turn {
  /**
   * @param {() => boolean} [gone] whether the client has gone away: its body is then no longer decoded
   * @param {Room} [room] where the output's bytes are reserved before they are allocated
   */
  constructor(gone = () => false, room = UNBOUNDED) {
    super();
    this.gone = gone;
    this.room = room;
    /** bytes reserved through `take` and not given back */
    this.taken = 0;
  }

  /** Reserves `n` bytes of output before they are allocated; throws NoRoom when the budget has no room. @param {number} n */
  take(n) {
    if (!this.room.take(n)) throw new NoRoom();
    this.taken += n;
  }

  /** Gives back `n` bytes taken before (output dropped, or a reservation larger than what was used). @param {number} n */
  give(n) {
    this.room.give(n);
    this.taken -= n;
  }

  /** Whether the slice is spent: the caller should `await pause()` before its next step. */
  due() {
    return this.spent();
  }

  /** Waits for this decoder's next turn, which starts a fresh slice; throws ClientGone if the client has left. */
  async pause() {
    await super.pause();
    if (this.gone()) throw new ClientGone();
  }
}

/** @type {(() => unknown)[]} */
const chores = [];
let choresDone = 0;

/**
 * Runs `job` soon, a slice's worth of such jobs per turn of the event loop: what is left to do for clients that
 * went away. A thousand connections that close at once arrive in one turn, and the request each leaves behind
 * (refused, journaled, counted) held the loop for tens of milliseconds per hundred when done there and then.
 * A job that settles a promise returns it, and the next job waits for it: the awaits that promise resumes (the
 * journaling of the refused request) run within the job's slice rather than all together after it.
 * @param {() => unknown} job
 */
export function soon(job) {
  if (chores.push(job) === 1) setImmediate(runChores);
}

async function runChores() {
  const end = performance.now() + SLICE_MS;
  while (choresDone < chores.length && performance.now() < end) {
    const settled = chores[choresDone++]();
    if (settled instanceof Promise) await settled.catch(ignore);
  }
  chores.splice(0, choresDone);
  choresDone = 0;
  if (chores.length) setImmediate(runChores);
}

function ignore() {
  // A chore's promise is settled for its own waiters, who see how; it is awaited here only for its timing.
}

/** Bytes copied between two looks at the clock when pieces of output are joined. */
const COPY_STEP = 1 << 20;
/** A body received in pieces and larger than this is joined in slices; a smaller one at once, in well under 1 ms. */
export const JOIN_AT_ONCE = 1 << 20;

/**
 * Joins the pieces of a decoded body into one buffer of exactly its size, filling its memory alone (one that can be
 * moved to a worker), a slice at a time: the copy of a body
 * of tens of MiB into fresh memory (page faults included) would otherwise hold the event loop for tens of
 * milliseconds. The store keeps the body it is given, so a piece that is a view into a larger allocation (zlib's
 * output buffer, a 1 MiB piece) is copied rather than handed on.
 * @param {Uint8Array[]} parts @param {number} size their total length @param {Slicer} slicer
 * @param {boolean} [share] a lone piece that fills its memory may be handed on as it is (not a slab that is reused)
 * @returns {Promise<Buffer>}
 */
export async function joinInSlices(parts, size, slicer, share = true) {
  const [only] = parts;
  if (share && parts.length === 1 && only.byteOffset === 0 && only.buffer.byteLength === size) return Buffer.from(only.buffer, 0, size);
  // Not taken from the in-flight budget: the pieces, which were, are dropped as soon as they are joined.
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) {
    for (let p = 0; p < part.length; p += COPY_STEP) {
      const piece = part.subarray(p, Math.min(part.length, p + COPY_STEP));
      out.set(piece, at);
      at += piece.length;
      if (slicer.due()) await slicer.pause();
    }
  }
  return out;
}

/**
 * At most `size` holders at a time; the others wait in arrival order. Each decompression may hold up to the
 * request limit, so this bounds the memory they take together.
 */
export class Slots {
  /** @param {number} size */
  constructor(size) {
    this.size = size;
    this.used = 0;
    /** @type {(() => void)[]} */
    this.queue = [];
  }

  /**
   * Runs `work` once a slot is free.
   * @template T @param {() => Promise<T>} work @returns {Promise<T>}
   */
  async run(work) {
    if (this.used < this.size) this.used++;
    else await new Promise((resolve) => this.queue.push(() => resolve(undefined)));
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      // The slot passes straight to the next waiter, so `used` stays as it is.
      if (next) next();
      else this.used--;
    }
  }
}
