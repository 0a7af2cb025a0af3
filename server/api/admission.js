// How much of the event loop the admin API may take: ingest comes first. The API's queries scan in slices that take
// turns with all other sliced work (../turns.js), but each query under way also does work outside its slices, so two
// clients looping queries took twice what one did. Queries therefore take turns: at most `concurrency` are worked on at once, the
// rest wait in arrival order. A query that waits for data (minCount, a verify's
// timeoutMs) does not hold a turn while it waits, and a turn ends once the answer starts to go out, so a client
// that reads its answer slowly holds no one up. Each client (by address) also has a budget of requests a second;
// past it, 429 with Retry-After.

/**
 * @typedef {{ concurrency: number, rate: number, queue?: number }} AdmissionOptions
 *   `concurrency`: admin requests worked on at once; `rate`: requests a second per client address, 0 for no limit;
 *   `queue`: requests that may wait for a turn, past which they are refused with 503
 * @typedef {{ status: number, message: string, headers: Record<string, string>, grpcCode: number }} Turned
 */

const QUEUE = 1024;
/** Addresses whose budget is full again are forgotten, so the table stays as small as the clients of the moment. */
const SWEEP_EVERY_MS = 10_000;

export class Admission {
  #concurrency;
  #rate;
  #queueLimit;
  #busy = 0;
  /** @type {(() => void)[]} */
  #queue = [];
  /** @type {Map<string, { tokens: number, at: number }>} */
  #budgets = new Map();
  #swept = 0;

  /** @param {AdmissionOptions} options */
  constructor({ concurrency, rate, queue = QUEUE }) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a whole number of at least 1, got ${concurrency}`);
    if (!Number.isInteger(rate) || rate < 0) throw new TypeError(`rate must be a whole number, got ${rate}`);
    this.#concurrency = concurrency;
    this.#rate = rate;
    this.#queueLimit = queue;
  }

  /** Requests worked on now, and waiting for a turn. */
  get stats() {
    return { working: this.#busy, waiting: this.#queue.length };
  }

  /**
   * Takes one request from the client's budget: null while there is budget left, else the refusal.
   * @param {string} client its address @param {number} [now] @returns {Turned|null}
   */
  charge(client, now = performance.now()) {
    if (this.#rate === 0) return null;
    if (now - this.#swept > SWEEP_EVERY_MS) this.#sweep(now);
    const budget = this.#budgets.get(client) ?? { tokens: this.#rate, at: now };
    budget.tokens = Math.min(this.#rate, budget.tokens + ((now - budget.at) / 1000) * this.#rate);
    budget.at = now;
    this.#budgets.set(client, budget);
    if (budget.tokens >= 1) {
      budget.tokens--;
      return null;
    }
    const seconds = Math.max(1, Math.ceil((1 - budget.tokens) / this.#rate));
    return {
      status: 429,
      grpcCode: 8,
      message: `more than ${this.#rate} admin API requests a second from ${client} (--admin-rate): retry after ${seconds} s`,
      headers: { 'retry-after': String(seconds) },
    };
  }

  /** @param {number} now */
  #sweep(now) {
    this.#swept = now;
    for (const [client, budget] of this.#budgets) {
      if (budget.tokens + ((now - budget.at) / 1000) * this.#rate >= this.#rate) this.#budgets.delete(client);
    }
  }

  /**
   * Waits for a turn. Resolves with the function that ends the turn (call it once, or more: later calls do nothing),
   * or with a refusal when too many are waiting already.
   * @returns {Promise<(() => void)|Turned>}
   */
  async turn() {
    if (this.#busy < this.#concurrency) this.#busy++;
    else if (this.#queue.length >= this.#queueLimit)
      return { status: 503, grpcCode: 14, message: `${this.#queueLimit} admin API requests are waiting already: retry in a second`, headers: { 'retry-after': '1' } };
    else await new Promise((resolve) => this.#queue.push(() => resolve(undefined)));
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = this.#queue.shift();
      // The turn passes straight to the next in line, so `busy` stays as it is.
      if (next) next();
      else this.#busy--;
    };
  }
}
