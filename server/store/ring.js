/**
 * A fixed-capacity FIFO: pushing into a full ring evicts the oldest item and returns it. Each item may carry
 * a size in bytes; the ring keeps their sum, so its owner can evict by bytes too (`shift`).
 * @template T
 */
export class Ring {
  /** @param {number} capacity */
  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.capacity = capacity;
    /** @type {(T|undefined)[]} */
    this.slots = new Array(capacity);
    /** sizes beside the slots, not on the items: a LazySpan is the decoder's object and carries only what it reads */
    this.sizes = new Float64Array(capacity);
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
  }

  /** @param {T} item @param {number} [bytes] @returns {T|undefined} the evicted item */
  push(item, bytes = 0) {
    const at = (this.head + this.size) % this.capacity;
    this.bytes += bytes;
    if (this.size < this.capacity) {
      this.slots[at] = item;
      this.sizes[at] = bytes;
      this.size++;
      return undefined;
    }
    const evicted = this.slots[this.head];
    this.bytes -= this.sizes[this.head];
    this.slots[this.head] = item;
    this.sizes[this.head] = bytes;
    this.head = (this.head + 1) % this.capacity;
    return evicted;
  }

  /** Takes out the oldest item. @returns {T|undefined} */
  shift() {
    if (this.size === 0) return undefined;
    const item = this.slots[this.head];
    this.bytes -= this.sizes[this.head];
    this.slots[this.head] = undefined;
    this.sizes[this.head] = 0;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return item;
  }

  /** The i-th item, oldest first. @param {number} i @returns {T} */
  at(i) {
    return /** @type {T} */ (this.slots[(this.head + i) % this.capacity]);
  }

  /** Oldest first. @returns {Generator<T>} */
  *[Symbol.iterator]() {
    for (let i = 0; i < this.size; i++) yield /** @type {T} */ (this.slots[(this.head + i) % this.capacity]);
  }

  /** Newest first. @returns {Generator<T>} */
  *newestFirst() {
    for (let i = this.size - 1; i >= 0; i--) yield /** @type {T} */ (this.slots[(this.head + i) % this.capacity]);
  }

  clear() {
    this.slots = new Array(this.capacity);
    this.sizes = new Float64Array(this.capacity);
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
  }
}
