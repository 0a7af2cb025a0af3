/**
 * A fixed-capacity FIFO: pushing into a full ring evicts the oldest item and returns it. Each item may carry
 * a size in bytes; the ring keeps their sum, so its owner can evict by bytes too (`shift`).
 * @template T
 */
export class Ring {
  /**
   * @param {number} capacity
   * @param {(item: T) => number} [sizeOf] an item's size, for items that know it: the ring then keeps no
   *   sizes of its own (8 bytes a slot)
   */
  constructor(capacity, sizeOf) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.capacity = capacity;
    /** @type {(T|undefined)[]} */
    this.slots = new Array(capacity);
    this.sizeOf = sizeOf;
    /** sizes beside the slots, when the items do not know theirs */
    this.sizes = sizeOf ? null : new Float64Array(capacity);
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
  }

  /** @param {T} item @param {number} [bytes] @returns {T|undefined} the evicted item */
  push(item, bytes = 0) {
    const evicted = this.size === this.capacity ? this.shift() : undefined;
    const at = (this.head + this.size) % this.capacity;
    this.bytes += bytes;
    this.slots[at] = item;
    if (this.sizes) this.sizes[at] = bytes;
    this.size++;
    return evicted;
  }

  /** Takes out the oldest item. @returns {T|undefined} */
  shift() {
    if (this.size === 0) return undefined;
    const item = /** @type {T} */ (this.slots[this.head]);
    this.bytes -= this.sizes ? this.sizes[this.head] : /** @type {(item: T) => number} */ (this.sizeOf)(item);
    this.slots[this.head] = undefined;
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
    this.sizes = this.sizeOf ? null : new Float64Array(this.capacity);
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
  }
}
