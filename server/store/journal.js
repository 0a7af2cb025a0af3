import { Ring } from './ring.js';
import { builtRequest } from '../otlp/items.js';
import { SIGNALS } from '../otlp/signals.js';
import { OtapStreams } from './otap-streams.js';

/**
 * @typedef {{
 *   id: number, time: string, transport: 'http'|'grpc'|'otap'|'import', signal: string|null, path: string,
 *   contentType: string, contentEncoding: string, bytes: number, items: number, services?: readonly string[], userAgent: string,
 *   headers: Record<string, string>, fault: null|{ id: string, action: string, side?: 'upstream' },
 *   response?: { status: number, message: string, partialSuccess?: { rejected: number, errorMessage: string } },
 *   outcome: Outcome, durationMs: number,
 *   stored?: boolean, upstream?: UpstreamLeg, tees?: UpstreamLeg[], otap?: OtapBatch,
 * }} JournalEntry
 *   `services` names the service.name of each resource a decoded request carried ('' for a resource without one).
 *   With forwarding (docs/forward.md), `upstream` is the call to the primary target and `tees` those to the others
 *   (a tee still under way says `pending`, and is filled in when it ends); `stored` says whether the items were
 *   kept, which does not depend on what the upstream answered.
 * @typedef {import('../forward/forwarder.js').UpstreamLeg} UpstreamLeg
 * @typedef {{ stream: number, batch: string }} OtapBatch
 *   An OTAP batch's place: its stream (numbered in the order streams opened, from 1, within the server process) and
 *   its batch_id, so that a stream's batches can be told apart from another's.
 *
 * @typedef {'accepted'|'partial'|'rejected'|'faulted'|'reset'|'hang'|'abandoned'} Outcome what the client saw: an
 *   answer (`accepted`, `partial`, `rejected` by validation, `faulted` by a fault rule's error), or none: `reset`
 *   (the connection was reset without an answer), `hang` (no answer until the client gave up, or until the hang
 *   limit, where gRPC calls get DEADLINE_EXCEEDED and HTTP connections are closed) and `abandoned` (the client
 *   gave up, cancelled or closed the connection while its answer was still held, by a `delay` or a slow forward
 *   target: what it sent may be stored, but it was never told). `response` is what was sent, absent when nothing was.
 */

/** How a request can arrive. */
export const TRANSPORTS = /** @type {const} */ (['http', 'grpc', 'otap', 'import']);

/** Every outcome, in the order lists show them. @type {readonly Outcome[]} */
export const OUTCOMES = Object.freeze(['accepted', 'partial', 'rejected', 'faulted', 'reset', 'hang', 'abandoned']);

/** Outcomes of a request that failed for its client (by a fault rule, or by waiting too long): the ones a retry follows. @type {ReadonlySet<Outcome>} */
export const FAULTED_OUTCOMES = new Set(['faulted', 'reset', 'hang', 'abandoned']);

/** What a client saw of a request that got no answer, in words. @param {JournalEntry} entry */
export function noAnswer(entry) {
  if (entry.outcome === 'reset') return 'no answer — connection reset';
  if (entry.outcome === 'abandoned') return 'no answer — the client gave up before it was sent';
  return 'no answer — held until the client gave up';
}

let timeSecond = NaN;
let timePrefix = '';

/**
 * An entry's time, `Date#toISOString()` of `ms`: every request takes one, and requests of one second share all
 * of it up to the milliseconds, formatted once.
 * @param {number} ms
 */
export function journalTime(ms) {
  const second = Math.floor(ms / 1000);
  if (second !== timeSecond) {
    timePrefix = new Date(second * 1000).toISOString().slice(0, -4);
    timeSecond = second;
  }
  const milli = ms - second * 1000;
  return `${timePrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/**
 * Where an entry stands in the journal: ids are given when a request starts and entries are recorded when it ends,
 * so a hung request's id is older than the entries recorded before it. Kept on the entry under a symbol, not
 * enumerable (no answer or comparison sees it), rather than in a WeakMap: a WeakMap whose keys die as fast as
 * requests arrive is rehashed on the event loop, and under steady ingest (5,000 requests a second into a full
 * journal) its `set` took 15-20 ms every few seconds, most of every stall over 30 ms in a CPU sampling of the server.
 */
const POSITION = Symbol('position');

/** Bodies of unstored requests are for looking at the last few faults, not for keeping every one. */
const MAX_BODIES = 200;

/** Every request, accepted or not: how a test proves what its exporter sent and what it was told. */
export class Journal {
  /** @param {{ maxRequests?: number, maxBodyBytes?: number }} [options] */
  constructor({ maxRequests = 10_000, maxBodyBytes = Infinity } = {}) {
    /** @type {Ring<JournalEntry>} */
    this.entries = new Ring(maxRequests);
    /**
     * Decoded bodies of requests whose items were not stored (faulted ones), so they can still be inspected: kept
     * as decoded, their items built when first asked for (`unstoredBody`).
     * @type {Map<number, any>}
     */
    this.unstoredBodies = new Map();
    /** @type {WeakSet<object>} bodies in `unstoredBodies` whose items are built */
    this.builtBodies = new WeakSet();
    /** @type {Map<number, number>} what each kept body weighs (budget.js), oldest first */
    this.bodySizes = new Map();
    this.bodyBytes = 0;
    this.maxBodyBytes = maxBodyBytes;
    this.lastId = 0;
    this.recorded = 0;
    /** @type {Record<string, Record<string, number>>} */
    this.outcomes = {};
    /** @type {Set<(entry: JournalEntry, evicted: JournalEntry|undefined) => void>} listeners learn of the entry the new one pushed out too */
    this.listeners = new Set();
    /** @type {Set<() => void>} */
    this.clearListeners = new Set();
    /** Each OTAP stream as a whole, kept while the journal holds its batches. */
    this.streams = new OtapStreams();
    /** @type {Set<() => void>} listeners learn that a stream opened or closed */
    this.streamListeners = new Set();
  }

  /**
   * An OTAP stream opened: it takes a place among the requests, where a grouped list shows it.
   * @param {number} id @param {import('./otap-streams.js').StreamMeta} meta
   */
  openStream(id, meta) {
    this.streams.open(id, meta, ++this.recorded, Date.now());
    this.streams.trim(this.entries.capacity);
    for (const listener of this.streamListeners) listener();
  }

  /** @param {number} id @param {import('./otap-streams.js').StreamEnd} end */
  closeStream(id, end) {
    this.streams.close(id, end, ++this.recorded, Date.now());
    this.streams.trim(this.entries.capacity);
    for (const listener of this.streamListeners) listener();
  }

  /** @param {() => void} listener called when a stream opens or closes @returns {() => void} unsubscribe */
  onStream(listener) {
    this.streamListeners.add(listener);
    return () => this.streamListeners.delete(listener);
  }

  nextId() {
    return ++this.lastId;
  }

  /**
   * The decoded body of a request whose items were not stored, every item built, or undefined. Built on the first ask
   * rather than as the request ends: a faulted request of 25 MB of log bodies took 100 ms to build, which held the
   * loop for every such request, looked at or not.
   * @param {JournalEntry} entry
   */
  unstoredBody(entry) {
    const body = this.unstoredBodies.get(entry.id);
    if (body === undefined || this.builtBodies.has(body)) return body;
    const built = builtRequest(SIGNALS[/** @type {import('../otlp/signals.js').SignalName} */ (entry.signal)], body);
    this.builtBodies.add(built);
    this.unstoredBodies.set(entry.id, built);
    return built;
  }

  /** Whether a body this heavy can be kept: decide before building it. @param {number} bytes */
  keepsBody(bytes) {
    return bytes <= this.maxBodyBytes;
  }

  /** @param {JournalEntry} entry @param {any} [unstoredBody] @param {number} [bodyBytes] what it weighs */
  record(entry, unstoredBody, bodyBytes = 0) {
    Object.defineProperty(entry, POSITION, { value: ++this.recorded, writable: true });
    const evicted = this.entries.push(entry);
    if (entry.otap) this.streams.batch(entry);
    if (evicted) this.streams.evict(evicted, this.positionOf(this.entries.at(0)));
    const byTransport = (this.outcomes[entry.transport] ??= {});
    byTransport[entry.outcome] = (byTransport[entry.outcome] ?? 0) + 1;
    if (unstoredBody && this.keepsBody(bodyBytes)) {
      this.unstoredBodies.set(entry.id, unstoredBody);
      this.bodySizes.set(entry.id, bodyBytes);
      this.bodyBytes += bodyBytes;
      while (this.unstoredBodies.size > MAX_BODIES || this.bodyBytes > this.maxBodyBytes) {
        const [oldest, size] = /** @type {[number, number]} */ (this.bodySizes.entries().next().value);
        this.unstoredBodies.delete(oldest);
        this.bodySizes.delete(oldest);
        this.bodyBytes -= size;
      }
    }
    for (const listener of this.listeners) listener(entry, evicted);
  }

  /** The order entries were recorded in, which the ring keeps. @param {JournalEntry} entry */
  positionOf(entry) {
    return /** @type {any} */ (entry)?.[POSITION] ?? 0;
  }

  /** @param {number} id */
  get(id) {
    for (const entry of this.entries.newestFirst()) if (entry.id === id) return entry;
    return undefined;
  }

  /** @param {(entry: JournalEntry, evicted: JournalEntry|undefined) => void} listener @returns {() => void} */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @param {() => void} listener called once the journal is empty @returns {() => void} unsubscribe */
  onCleared(listener) {
    this.clearListeners.add(listener);
    return () => this.clearListeners.delete(listener);
  }

  clear() {
    this.entries.clear();
    this.unstoredBodies.clear();
    this.bodySizes.clear();
    this.bodyBytes = 0;
    this.outcomes = {};
    this.streams.clear();
    for (const listener of this.clearListeners) listener();
  }
}
