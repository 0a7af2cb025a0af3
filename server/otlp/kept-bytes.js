// Memory for the request bytes the store keeps (items are kept as their request's bytes, items.js): 1 MiB slabs,
// each used again once nothing holds any of the requests carved from it.
//
// Why: V8 counts the bytes of every new ArrayBuffer towards a limit past which it collects garbage, and raises the
// limit by only 64 MiB at each collection. A request of 54 KB in a buffer of its own, 3,500 times a second, made a
// scavenge every 90 ms and a full mark every 350 ms (gRPC traces), however little the JavaScript heap had grown.
// A slab used again is no new ArrayBuffer.
//
// Nothing is handed back by hand: a request's bytes may be read after the store lets them go (a query's kept page,
// a query in slices, the journal, a forward still sending), so a slab is used again only once the garbage collector
// has found every view carved from it unreachable (FinalizationRegistry). A view kept somewhere therefore keeps its
// slab, never shares it. Whoever keeps part of a carved view must keep the view too (or copy the part): a
// `subarray` of it, or its `.buffer`, is not tracked.

/** One slab: large enough that a request rarely ends one, small enough that one long-kept request pins little. */
export const SLAB_BYTES = 1 << 20;
/** Larger requests get a buffer of their own: the unused tail of a slab is less than this. */
export const LARGEST_KEPT = SLAB_BYTES >> 2;
/**
 * The most slabs there are. They are made as requests need them, and let go when a while passes with some never
 * needed (trim), so that a burst's memory goes back once it is over. Between two full collections of the heap (a
 * second or more under load) the requests the store lets go are not yet known to be free, so the slabs must cover
 * what is kept and what arrives meanwhile: 190 MB a second of gRPC traces over a store of 54 MB. Past this many,
 * requests get buffers of their own, and those bring the next collection nearer, as before.
 */
export const MAX_SLABS = 256;
/** The most slabs there may be here: fewer than MAX_SLABS where the stores may keep less (allowKeptBytes). */
let mostSlabs = MAX_SLABS;
let allowed = 0;
/** How often the free slabs no request needed meanwhile are let go. */
const TRIM_MS = 10_000;

class Slab {
  /** @param {Buffer} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.used = 0;
    /** views carved from it and not yet collected */
    this.live = 0;
    /** whether requests are still carved from it: until it ends, it is not free however many are collected */
    this.filling = false;
  }
}

/** @type {(Slab|null)[]} by number; null where a spare slab was let go */
const slabs = [];
/** @type {number[]} numbers of slabs let go, for new ones */
const vacant = [];
/** @type {number[]} free slabs, the one freed last on top: its pages are the likeliest to be in memory still */
const free = [];
/** the fewest slabs free at once since the last trim: that many were not needed */
let fewestFree = 0;
/** @type {Map<string, number>} the slab each kind of request is carved from: a store lets go oldest first, so its requests' slabs free in turn */
const filling = new Map();
/** @type {WeakSet<Uint8Array>} the views carved here, and only those */
const carved = new WeakSet();
const collected = new FinalizationRegistry((/** @type {number} */ n) => {
  const slab = /** @type {Slab} */ (slabs[n]);
  slab.live--;
  if (slab.live === 0 && !slab.filling) release(n);
});

/** @param {number} n */
function release(n) {
  /** @type {Slab} */ (slabs[n]).used = 0;
  free.push(n);
}

/** A free slab, made if there is none and room for one; -1 when there is neither. */
function freeSlab() {
  const n = free.pop();
  if (n !== undefined) {
    if (free.length < fewestFree) fewestFree = free.length;
    return n;
  }
  fewestFree = 0;
  if (slabs.length - vacant.length >= mostSlabs) return -1;
  if (slabs.length === 0) setInterval(trim, TRIM_MS).unref();
  const made = vacant.pop() ?? slabs.length;
  slabs[made] = new Slab(Buffer.allocUnsafeSlow(SLAB_BYTES));
  return made;
}

/**
 * Bounds the slabs by the bytes the stores may keep (their byte budgets, together): a server given small budgets, to
 * keep its memory small, gets as few slabs. With several collectors in one process, the largest is taken.
 * @param {number} bytes
 */
export function allowKeptBytes(bytes) {
  allowed = Number.isNaN(bytes) ? Infinity : Math.max(allowed, bytes);
  mostSlabs = Math.min(MAX_SLABS, Math.ceil(allowed / SLAB_BYTES));
}

/**
 * Lets go of the free slabs that were not needed since the last trim, those freed longest ago first, so that the
 * memory a burst took goes back once it is over (to the garbage collector, and from it to the system).
 */
export function trim() {
  const surplus = Math.min(fewestFree, free.length);
  for (const n of free.splice(0, surplus)) {
    slabs[n] = null;
    vacant.push(n);
  }
  fewestFree = free.length;
}

/**
 * The slab to carve `length` bytes from for requests of `kind`, or -1 when none is free.
 * @param {number} length @param {string} kind
 */
function slabFor(length, kind) {
  const n = filling.get(kind) ?? -1;
  if (n >= 0) {
    const slab = /** @type {Slab} */ (slabs[n]);
    if (slab.used + length <= SLAB_BYTES) return n;
    slab.filling = false;
    filling.delete(kind);
    if (slab.live === 0) release(n);
  }
  const next = freeSlab();
  if (next < 0) return -1;
  /** @type {Slab} */ (slabs[next]).filling = true;
  filling.set(kind, next);
  return next;
}

/**
 * Room for `length` bytes to keep, for requests of one kind (a signal); the caller fills it.
 * @param {number} length @param {string} kind @returns {Buffer}
 */
export function keptBuffer(length, kind) {
  const n = length === 0 || length > LARGEST_KEPT ? -1 : slabFor(length, kind);
  if (n < 0) return Buffer.allocUnsafeSlow(length);
  const slab = /** @type {Slab} */ (slabs[n]);
  const view = slab.bytes.subarray(slab.used, slab.used + length);
  slab.used += length;
  slab.live++;
  collected.register(view, n);
  carved.add(view);
  return view;
}

/** A copy of `bytes` to keep. @param {Uint8Array} bytes @param {string} kind */
export function keptCopy(bytes, kind) {
  const copy = keptBuffer(bytes.length, kind);
  copy.set(bytes);
  return copy;
}

/**
 * Whether `bytes` may be kept as they are: a buffer of their own, or carved here. A view into anything larger
 * (a socket read, a pooled chunk) would keep all of it alive.
 * @param {Uint8Array} bytes
 */
export function isKeptWhole(bytes) {
  return (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) || carved.has(bytes);
}

/** How many slabs there are and may be, how many of them are free, and how many are being carved from: for tests. */
export function slabCounts() {
  return { slabs: slabs.length - vacant.length, most: mostSlabs, free: free.length, filling: filling.size };
}
