// Refusals a client can loop on, answered no faster than a set pace: failed admin token checks (401) on the UI port
// and refused compressed bodies (413/400) on the OTLP ports. A client that loops them from new connections cost the
// server a connection's setup, a request's parse and an answer each time, as fast as it was answered (four such
// loops of 401s took half of the event loop); paced, it waits for its answers instead. A burst is answered at once,
// so a client that is refused now and then never waits, and the pace is kept per kind of refusal over all clients,
// which also bounds how fast a token can be guessed.

/**
 * Failed token checks answered a second over all clients, once a burst of as many is spent. The test suites walk
 * every spelling of every admin route without the token, a couple of thousand refusals in a row, at this pace. At
 * 200, four clients looping admin routes spelt around the check (each from a new connection) left normal ingest at
 * 0.81-0.90 of its rate (three soak runs); at 100, 0.92.
 */
export const TOKEN_REFUSALS_PER_SECOND = 100;
/**
 * Refused bodies answered a second, once a burst of as many is spent. On both OTLP ports: compressed bodies refused,
 * requests of more items than a store keeps or past a byte budget, and OTAP batches refused for their compressed
 * buffers or their rows (the `paced` answers of faults/wire.js). On the UI port: bodies over a route's limit. At 20,
 * a client looping verifies of 20,000 expectations left normal ingest at 0.86-0.89 of its rate (four soak runs); at
 * 10, 0.92.
 */
export const BODY_REFUSALS_PER_SECOND = 10;
/**
 * Bodies declared over 1 MiB refused for want of in-flight room, answered a second over both OTLP ports once a burst
 * of as many is spent. Twenty-two senders of 60 MB bodies, each sending again 200 ms after its refusal, had the
 * server take 100 new connections a second.
 */
export const BUSY_REFUSALS_PER_SECOND = 20;
/** A refusal that would wait longer is not answered: its connection or stream is closed instead. */
export const MAX_WAIT_MS = 5_000;

/**
 * Something that says when its client has gone (a socket, an HTTP/2 stream).
 * @typedef {{ once: (event: 'close', listener: () => void) => unknown, off: (event: 'close', listener: () => void) => unknown, destroyed: boolean }} Leaving
 */

/** Milliseconds on a clock every thread of the process reads alike: performance.now() starts again in each worker. */
const clock = () => performance.timeOrigin + performance.now();

export class Pacer {
  #interval;
  #burst;
  /**
   * When the next refusal would be due, were there no burst (a generic cell rate: the theoretical arrival time), in
   * microseconds of `clock`. It may be shared with a worker thread that answers refusals of the same kind, so that
   * the pace holds over both.
   */
  #due;
  /** answers being held */
  held = 0;

  /**
   * @param {number} perSecond refusals answered a second once the burst is spent, and the burst's size
   * @param {BigInt64Array} [due] the state of another Pacer (its `due`), in memory shared with its thread
   */
  constructor(perSecond, due = new BigInt64Array(new SharedArrayBuffer(8))) {
    if (!(perSecond > 0)) throw new TypeError(`a pace must be a positive rate, got ${perSecond}`);
    this.#interval = 1000 / perSecond;
    this.#burst = perSecond;
    this.#due = due;
  }

  /** This pace's state, for a Pacer in another thread to share. */
  get due() {
    return this.#due;
  }

  /**
   * How long the next refusal waits for its answer: 0 within the burst; -1 past MAX_WAIT_MS (close it unanswered),
   * which takes nothing of the pace. @param {number} [now]
   */
  wait(now = clock()) {
    for (;;) {
      const seen = Atomics.load(this.#due, 0);
      const due = Math.max(Number(seen) / 1000, now);
      const wait = Math.max(0, due - now - (this.#burst - 1) * this.#interval);
      if (wait > MAX_WAIT_MS) return -1;
      // Another thread that took a turn since the load makes this one look again.
      if (Atomics.compareExchange(this.#due, 0, seen, BigInt(Math.round((due + this.#interval) * 1000))) === seen) return wait;
    }
  }

  /**
   * Resolves true once the refusal may be answered (at once within the burst), false when its client left while it
   * waited or it would wait too long: then nothing is sent, and a client still there should be closed.
   * @param {Leaving} client @returns {Promise<boolean>}
   */
  turn(client) {
    const wait = this.wait();
    if (wait === 0) return Promise.resolve(true);
    if (wait < 0) return Promise.resolve(false);
    this.held++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => end(true), wait);
      /** @param {boolean} due */
      const end = (due) => {
        this.held--;
        clearTimeout(timer);
        client.off('close', gone);
        resolve(due && !client.destroyed);
      };
      const gone = () => end(false);
      client.once('close', gone);
    });
  }
}
