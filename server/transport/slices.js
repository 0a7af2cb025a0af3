// Decoders written in JavaScript run on the event loop, so a body that expands to the request limit would hold
// every other client for the whole decode. They work in slices instead: a decoder asks `due()` between small
// steps and, once its slice is spent, waits for its turn again. Turns are handed out one slice per event-loop
// iteration, in arrival order, so however many bodies are being decoded they add at most one slice to an
// iteration, and the requests that arrive meanwhile are served between slices.
import { performance } from 'node:perf_hooks';

/** How long one slice may run before it gives way. */
export const SLICE_MS = 1;

/** @type {(() => void)[]} */
const waiting = [];
let scheduled = false;

function nextTurn() {
  scheduled = false;
  const resume = waiting.shift();
  // Scheduled from inside this iteration's check phase, the next turn comes in the next iteration.
  if (waiting.length) schedule();
  resume?.();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(nextTurn);
}

/** The time a decoder has left in its current slice. */
export class Slicer {
  constructor() {
    this.started = performance.now();
  }

  /** Whether the slice is spent: the caller should `await pause()` before its next step. */
  due() {
    return performance.now() - this.started >= SLICE_MS;
  }

  /** Waits for this decoder's next turn, which starts a fresh slice. */
  async pause() {
    await new Promise((resolve) => {
      waiting.push(() => resolve(undefined));
      schedule();
    });
    this.started = performance.now();
  }
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
