// A bounded queue in front of a writable stream: whoever enqueues never waits for the stream. Work is
// formatted only when the stream can take it; when the queue is full, new work is dropped, and a line in
// its place says how much.

class Gap {
  constructor() {
    this.count = 1;
  }
}

/**
 * @template T
 */
export class OutputQueue {
  /**
   * @param {NodeJS.WritableStream} out
   * @param {(item: T) => string|Promise<string|Buffer>} format turns queued work into text, when it is about to be
   *   written; a promise (text made in slices) holds the queue until it settles, so lines keep their order
   * @param {{ maxItems?: number, weigh?: (item: T) => number, maxWeight?: number, batch?: number }} [options]
   *   `weigh`/`maxWeight`: a second bound, on what queued items hold on to (stored spans, which the store
   *   may already have evicted); `batch`: most items written per turn of the event loop, so that a stream
   *   that writes synchronously (a file, a terminal) cannot hold the loop long
   */
  constructor(out, format, { maxItems = 1000, weigh = () => 1, maxWeight = Infinity, batch = 64 } = {}) {
    this.out = out;
    this.format = format;
    this.maxItems = maxItems;
    this.weigh = weigh;
    this.maxWeight = maxWeight;
    this.batch = batch;
    /** @type {(T|Gap)[]} */
    this.items = [];
    this.head = 0;
    this.weight = 0;
    this.dropped = 0;
    this.scheduled = false;
    /** a flush is under way, waiting for text made in slices */
    this.flushing = false;
    this.waitingForDrain = false;
    this.closed = false;
    this.onDrain = () => {
      this.waitingForDrain = false;
      this.schedule();
    };
  }

  get length() {
    return this.items.length - this.head;
  }

  /** @param {T} item */
  push(item) {
    if (this.closed) return;
    const weight = this.weigh(item);
    // An empty queue takes anything, so that one large request is still printed.
    if (this.length === 0 || (this.length < this.maxItems && this.weight + weight <= this.maxWeight)) {
      this.items.push(item);
      this.weight += weight;
      this.schedule();
      return;
    }
    this.dropped++;
    const last = this.items[this.items.length - 1];
    // The gap may take the one slot past the limit, so that it is reported where it happened.
    if (last instanceof Gap) last.count++;
    else this.items.push(new Gap());
  }

  schedule() {
    if (this.scheduled || this.flushing || this.waitingForDrain || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  async flush() {
    this.flushing = true;
    try {
      await this.write();
    } finally {
      this.flushing = false;
    }
    if (this.length > 0) this.schedule();
  }

  /** Writes up to a batch of items, stopping early when the stream must drain first. */
  async write() {
    for (let n = 0; n < this.batch; n++) {
      if (this.closed || this.length === 0) return;
      const item = this.items[this.head];
      this.items[this.head++] = /** @type {any} */ (undefined);
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      let text;
      if (item instanceof Gap) {
        text = `otlp-mock: ${item.count} request${item.count === 1 ? '' : 's'} not printed: the output could not keep up\n`;
      } else {
        this.weight -= this.weigh(item);
        const formatted = this.format(item);
        // A line that could not be made is left out; the others are not held up by it.
        text = typeof formatted === 'string' ? formatted : await formatted.catch(() => '');
        if (this.closed) return;
      }
      if (text && !this.out.write(text)) {
        this.waitingForDrain = true;
        this.out.once('drain', this.onDrain);
        return;
      }
    }
  }

  close() {
    this.closed = true;
    this.out.off('drain', this.onDrain);
    this.items = [];
    this.head = 0;
    this.weight = 0;
  }
}
