import { LazyItem } from '../otlp/items.js';

/** The place of a slot whose holder is a decoded entry rather than a context. */
const NO_PLACE = 0xffffffff;
const NO_SLOTS = new Uint32Array(0);
/** How many holders a ring has room for at first (a power of two). */
const FIRST_HELD = 1024;

/** Each slot's sort key, with the sequence number of the item it is the key of (-1: none yet). */
export class SortKeys {
  /** @param {number} capacity */
  constructor(capacity) {
    this.keys = new Float64Array(capacity);
    this.seqs = new Float64Array(capacity).fill(-1);
  }
}

/**
 * The items a request pushed out of a PlaceRing, made only when read: most readers want only how many there were.
 * @template T
 */
export class Evicted {
  /** @param {(ctx: any, place: number, seq: number) => T} placedItem */
  constructor(placedItem) {
    this.placedItem = placedItem;
    /** @type {any[]} each item's holder */
    this.holders = [];
    /** @type {number[]} each item's place, NO_PLACE for a decoded entry */
    this.places = [];
    /** @type {number[]} each item's slot number since its ring was last cleared, which with its batch's seq0 makes its sequence number */
    this.slots = [];
  }

  get length() {
    return this.holders.length;
  }

  /** What the i-th item shares with the rest of its scope of its request, without making the item. @param {number} i */
  contextAt(i) {
    return this.places[i] === NO_PLACE ? this.holders[i].ctx : this.holders[i];
  }

  /** Oldest first. @returns {Generator<T>} */
  *[Symbol.iterator]() {
    for (let i = 0; i < this.holders.length; i++) {
      const holder = this.holders[i];
      const place = this.places[i];
      yield place === NO_PLACE ? holder : this.placedItem(holder, place, holder.batch.seq0 + this.slots[i]);
    }
  }
}

/**
 * Ring's counterpart for log records and data points, which are many and small. A slot keeps the number
 * of its item's holder and the item's place in its request's bytes, 8 bytes, where the smallest object per
 * item would cost 48 and its slot 8 more; each read makes the item again from these (`placedItem`:
 * LazyLogRecord.placed, LazyPoint.placed), an object that dies young. A holder is the context of the items
 * pushed one after another with it (the items of one scope of a request, or one metric of it), or for an
 * item stored decoded (from OTLP/JSON) its entry. Holders are numbered as they come, so the slots' numbers
 * never decrease from oldest to newest, and the holders the oldest slot's precedes are no longer held.
 * An item's sequence number follows from its slot (`ctx.batch.seq0`): a request's items are pushed one
 * after another, numbered one after another.
 * @template T
 */
export class PlaceRing {
  // The state of an empty ring, which clear() returns to; the constructor gives the slots their capacity.
  /** the number of each slot's holder */
  holders = NO_SLOTS;
  places = NO_SLOTS;
  /**
   * @type {any[]} holders by number, in a ring of their own: holder `h` is at `h & heldMask`. Its size is a power
   * of two, so that numbers may wrap around at 32 bits, and it doubles when full, so it grows a few times in a ring's
   * life and is never cut down: each slot adds at most one holder, so the holders still held never outnumber the
   * slots. A request whose metrics alternate (one point of each in turn) adds a holder per point, and a list that
   * grew at one end and was cut at the other reallocated a 100,000-slot array every few hundred such requests.
   */
  held = [];
  heldMask = 0;
  /** the number the next holder gets, and the oldest one still held; both wrap around at 32 bits */
  nextHolder = 0;
  oldestHeld = 0;
  /** @type {any} the newest holder: the items pushed one after another with it share its number */
  lastHolder = null;
  /** the sort key (its time as a number) of each slot's item: a log record's from when it was checked, another's once a query has read it (LazyTimedItem) */
  sortKeys = new SortKeys(0);
  head = 0;
  size = 0;
  bytes = 0;
  /** items ever taken out: the oldest slot's number since the ring was last cleared */
  dropped = 0;

  /**
   * @param {number} capacity
   * @param {(ctx: any, place: number, seq: number, sortKeys?: SortKeys, slot?: number) => T} placedItem
   * @param {(ctx: any) => number} sizeOf an item's part of the bytes the store keeps for its request, from its context
   */
  constructor(capacity, placedItem, sizeOf) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.capacity = capacity;
    this.placedItem = placedItem;
    this.sizeOf = sizeOf;
    this.clear();
  }

  /**
   * @param {any} entry a LazyItem or a decoded entry, with its `ctx` and `seq` @param {number} bytes
   * @param {Evicted<T>} evicted told of the oldest item when the ring is full and it goes
   */
  push(entry, bytes, evicted) {
    if (this.size === this.capacity) this.evictInto(evicted);
    const at = (this.head + this.size) % this.capacity;
    if (entry instanceof LazyItem) {
      const ctx = entry.ctx;
      if (ctx !== this.lastHolder) {
        this.hold(ctx);
        ctx.batch.seq0 = entry.seq - (this.dropped + this.size);
      }
      this.places[at] = entry.place;
      const key = /** @type {{ checkedKey?: number }} */ (entry).checkedKey;
      if (key !== undefined && !Number.isNaN(key)) {
        this.sortKeys.keys[at] = key;
        this.sortKeys.seqs[at] = entry.seq;
      }
    } else {
      this.hold(entry);
      this.places[at] = NO_PLACE;
    }
    this.holders[at] = (this.nextHolder - 1) >>> 0;
    this.size++;
    this.bytes += bytes;
  }

  /** Numbers a new holder. @param {any} holder */
  hold(holder) {
    if ((this.nextHolder - this.oldestHeld) >>> 0 > this.heldMask) this.growHeld();
    this.held[this.nextHolder & this.heldMask] = holder;
    this.nextHolder = (this.nextHolder + 1) >>> 0;
    this.lastHolder = holder;
  }

  /** Takes out the oldest item. @returns {T|undefined} */
  shift() {
    if (this.size === 0) return undefined;
    const item = this.at(0);
    this.dropOldest();
    return item;
  }

  /** Takes out the oldest item, telling `evicted` what makes it instead of making it. @param {Evicted<T>} evicted */
  evictInto(evicted) {
    evicted.places.push(this.places[this.head]);
    evicted.slots.push(this.dropped);
    evicted.holders.push(this.dropOldest());
  }

  /** Takes out the oldest slot. @returns {any} its holder: the item's context, or the decoded entry itself */
  dropOldest() {
    const holder = this.held[this.holders[this.head] & this.heldMask];
    this.bytes -= this.sizeOf(this.places[this.head] === NO_PLACE ? holder.ctx : holder);
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    this.dropped++;
    this.release(this.size > 0 ? this.holders[this.head] : this.nextHolder);
    return holder;
  }

  growHeld() {
    const mask = this.heldMask * 2 + 1;
    const held = new Array(mask + 1);
    for (let h = this.oldestHeld; h !== this.nextHolder; h = (h + 1) >>> 0) held[h & mask] = this.held[h & this.heldMask];
    this.held = held;
    this.heldMask = mask;
  }

  /** Lets go of the holders numbered before `until`. @param {number} until */
  release(until) {
    for (let h = this.oldestHeld; h !== until; h = (h + 1) >>> 0) this.held[h & this.heldMask] = undefined;
    this.oldestHeld = until;
    if (this.size === 0) this.lastHolder = null;
  }

  /** What the i-th item (oldest first) shares with the rest of its scope of its request, without making the item. @param {number} i */
  contextAt(i) {
    const slot = (this.head + i) % this.capacity;
    const holder = this.held[this.holders[slot] & this.heldMask];
    return this.places[slot] === NO_PLACE ? holder.ctx : holder;
  }

  /** The i-th item, oldest first. @param {number} i @returns {T} */
  at(i) {
    const slot = (this.head + i) % this.capacity;
    const holder = this.held[this.holders[slot] & this.heldMask];
    const place = this.places[slot];
    return place === NO_PLACE ? holder : this.placedItem(holder, place, holder.batch.seq0 + this.dropped + i, this.sortKeys, slot);
  }

  /** Oldest first. @returns {Generator<T>} */
  *[Symbol.iterator]() {
    for (let i = 0; i < this.size; i++) yield this.at(i);
  }

  /** Newest first. @returns {Generator<T>} */
  *newestFirst() {
    for (let i = this.size - 1; i >= 0; i--) yield this.at(i);
  }

  clear() {
    this.holders = new Uint32Array(this.capacity);
    this.places = new Uint32Array(this.capacity);
    this.sortKeys = new SortKeys(this.capacity);
    this.held = new Array(FIRST_HELD);
    this.heldMask = FIRST_HELD - 1;
    this.nextHolder = 0;
    this.oldestHeld = 0;
    this.lastHolder = null;
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
    this.dropped = 0;
  }
}
