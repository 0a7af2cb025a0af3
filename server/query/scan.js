// Scanning everything stored without stalling ingestion: a scan runs in slices that take turns with all other
// sliced work (../turns.js), and it finds its place again by sequence number, so items that arrive or are evicted
// meanwhile never make it skip or repeat one. A scan starts by waiting for its turn, so that a client looping cheap
// queries (each one slice) takes no larger share than one long query.
import { ADMIN_SHARE, Turn } from '../turns.js';

const CHECK_EVERY = 32;

/** Counts work and says when a slice has used its time. */
export class Slicer extends Turn {
  /** @param {number} [checkEvery] how many items between looks at the clock: 1 where one item is a lot of work */
  constructor(checkEvery = CHECK_EVERY) {
    super(ADMIN_SHARE);
    this.n = 0;
    this.checkEvery = checkEvery;
  }

  /** Call once per item; true when the slice should end. */
  due() {
    return ++this.n % this.checkEvery === 0 && this.spent();
  }
}

/**
 * Something stored in arrival order: a store ring, a journal ring, or an array of entries.
 * @template T @typedef {{ size?: number, length?: number, at(i: number): T|undefined }} Indexed
 *   `at` is only asked for an index below its size
 */

/** @template T @param {Indexed<T>} list */
const sizeOf = (list) => /** @type {number} */ (list.size ?? list.length);

/**
 * The index of the newest item whose sequence number is below `bound`, or -1.
 * @template T @param {Indexed<T>} list @param {(item: T) => number} seqOf @param {number} bound
 */
function indexBelow(list, seqOf, bound) {
  let lo = 0;
  let hi = sizeOf(list) - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (seqOf(/** @type {T} */ (list.at(mid))) < bound) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Where a running scan is: items with a sequence number at or above `lowest` have been visited. A waiter
 * uses it to tell an eviction the scan counted from one it never saw.
 * @typedef {{ lowest: number }} Progress
 */

/**
 * Visits every item stored when the scan starts, newest first, in slices; with `above`, only those whose
 * sequence number is above it.
 * @template T @param {Indexed<T>} list @param {(item: T) => number} seqOf @param {(item: T) => void} visit
 * @param {Progress} [progress] @param {number} [above]
 */
export async function scanNewestFirst(list, seqOf, visit, progress = { lowest: Infinity }, above = -Infinity) {
  const size = sizeOf(list);
  if (size === 0) return;
  // Taken before giving way: what arrives meanwhile is not this scan's (a waiter counts it from the feed).
  let bound = seqOf(/** @type {T} */ (list.at(size - 1))) + 1;
  const slicer = new Slicer();
  await slicer.pause();
  for (;;) {
    let i = indexBelow(list, seqOf, bound);
    while (i >= 0) {
      const item = /** @type {T} */ (list.at(i--));
      bound = seqOf(item);
      if (bound <= above) return;
      visit(item);
      if (slicer.due()) break;
    }
    progress.lowest = bound;
    if (i < 0) return;
    await slicer.pause();
  }
}

/**
 * Visits every value of an iterable in slices (a Map's values may change between slices: JavaScript's
 * iterators see deletions and insertions, never repeat one).
 * @template T @param {Iterable<T>} items @param {(item: T) => void} visit
 * @param {(item: T, slicer: Slicer) => Promise<void>|undefined} [prepare] work an item may need before its visit,
 *   long enough to take slices of its own (a large trace's summary); a promise only when it does
 */
export async function scanAll(items, visit, prepare) {
  const slicer = new Slicer();
  await slicer.pause();
  for (const item of items) {
    const preparing = prepare?.(item, slicer);
    if (preparing) await preparing;
    visit(item);
    if (slicer.due()) await slicer.pause();
  }
}

/**
 * The `limit` highest-ranked items after a cursor, ranked by key then sequence number, both highest first:
 * a bounded heap, so a page costs O(n log limit) whatever is stored.
 * @template T
 */
export class TopPage {
  /** @param {number} limit @param {number[]} [cursor] [key, seq] of the last item of the previous page */
  constructor(limit, cursor) {
    this.limit = limit;
    this.cursor = cursor;
    /** matches ranked after the cursor: more than `limit` means there is a next page */
    this.after = 0;
    /** @type {{ key: number, seq: number, item: T }[]} a min-heap: the lowest-ranked kept item on top */
    this.heap = [];
  }

  /** @param {number} key @param {number} seq @param {T} item */
  offer(key, seq, item) {
    const c = this.cursor;
    if (c && !(key < c[0] || (key === c[0] && seq < c[1]))) return;
    this.after++;
    const heap = this.heap;
    if (heap.length < this.limit) {
      heap.push({ key, seq, item });
      this.up(heap.length - 1);
    } else if (below(heap[0], key, seq)) {
      heap[0] = { key, seq, item };
      this.down(0);
    }
  }

  /**
   * The page, taken off the heap in slices (a page may hold a hundred thousand items).
   * @returns {Promise<{ items: T[], positions: number[][], next: number[]|null }>} highest first;
   *   `positions`: each item's place, the cursor of what follows it; `next`: the cursor of the next page
   */
  async result() {
    const heap = this.heap;
    const n = heap.length;
    /** @type {T[]} */
    const items = new Array(n);
    const positions = new Array(n);
    const slicer = new Slicer();
    for (let i = n - 1; i >= 0; i--) {
      const top = heap[0];
      const last = /** @type {{ key: number, seq: number, item: T }} */ (heap.pop());
      if (heap.length) {
        heap[0] = last;
        this.down(0);
      }
      items[i] = top.item;
      positions[i] = [top.key, top.seq];
      if (slicer.due()) await slicer.pause();
    }
    return { items, positions, next: this.after > this.limit && n ? positions[n - 1] : null };
  }

  /** @param {number} i */
  up(i) {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!below(heap[i], heap[parent].key, heap[parent].seq)) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  /** @param {number} i */
  down(i) {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let low = i;
      if (l < heap.length && below(heap[l], heap[low].key, heap[low].seq)) low = l;
      if (r < heap.length && below(heap[r], heap[low].key, heap[low].seq)) low = r;
      if (low === i) return;
      [heap[i], heap[low]] = [heap[low], heap[i]];
      i = low;
    }
  }
}

/** @param {{ key: number, seq: number }} x @param {number} key @param {number} seq ranks x below (key, seq) */
export function below(x, key, seq) {
  return x.key < key || (x.key === key && x.seq < seq);
}
