/**
 * A fixed-capacity FIFO: pushing into a full ring evicts the oldest item and returns it.
 * @template T
 */
export class Ring {
  /** @param {number} capacity */
  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.capacity = capacity;
    /** @type {(T|undefined)[]} */
    this.slots = new Array(capacity);
    this.head = 0;
    this.size = 0;
  }

  /** @param {T} item @returns {T|undefined} the evicted item */
  push(item) {
    const at = (this.head + this.size) % this.capacity;
    if (this.size < this.capacity) {
      this.slots[at] = item;
      this.size++;
      return undefined;
    }
    const evicted = this.slots[this.head];
    this.slots[this.head] = item;
    this.head = (this.head + 1) % this.capacity;
    return evicted;
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
    this.head = 0;
    this.size = 0;
  }
}
