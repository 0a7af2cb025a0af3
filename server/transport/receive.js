// The transport-neutral half of the data path: decode → faults.decide → store → journal.
// Each transport turns the Verdict into its own wire and reports back what it sent.
import { status as grpcStatus } from '@grpc/grpc-js';
import { DecodeError } from '../otlp/errors.js';
import { decodeBody } from '../otlp/decode-body.js';
import { itemCountOf, slicedDecodeOf } from '../otlp/items.js';
import { jsonToProto } from '../otlp/json-proto.js';
import { OFF_THREAD_AT, transcodeOffThread } from '../otlp/json-off-thread.js';
import { answerOf, partialOf } from '../faults/wire.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtBodyBytes, keptBytes } from '../store/budget.js';
import { journalTime } from '../store/journal.js';
import { servicesOf } from '../store/store.js';
import { keptList, keptText } from '../store/repeats.js';
import { ClientGone, Slicer, joinInSlices } from './slices.js';
import { BORROWED_FROM, giveBack, isBorrowed, owned } from './pieces.js';
import { BODY_REFUSALS_PER_SECOND, BUSY_REFUSALS_PER_SECOND, Pacer } from './pace.js';

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ transport: 'http'|'grpc'|'otap', signal: Signal|null, path: string, contentType: string,
 *   contentEncoding: string, bytes: number, userAgent: string, headers: Record<string, string>,
 *   otap?: import('../store/journal.js').OtapBatch }} RequestMeta
 * @typedef {{ rejected: number, errorMessage: string }} Partial
 * @typedef {import('../faults/wire.js').Verdict} Verdict
 */

/** What a client is told when the primary forward target has too much in flight (docs/forward.md). */
const SHED = Object.freeze({
  id: 'forward',
  action: 'status',
  httpStatus: 503,
  grpcCode: grpcStatus.UNAVAILABLE,
  retryAfterMs: 1000,
  message: 'otlp-mock has too many requests under way to its forward target; retry later (--forward-max-inflight, --forward-max-inflight-bytes)',
});

export const SMALL_BODY = 1024 * 1024;

/**
 * A protobuf body larger than this has its items counted in slices before it is decoded (items.js itemCountOf): a
 * MiB of two-byte fields is walked in a few milliseconds, 63 MB of them held the event loop for 35 ms.
 */
const WALKED_AT_ONCE = 1024 * 1024;
/** Fields walked between two looks at the clock. */
const COUNT_STEPS = 2048;
/** Bytes of items checked between two looks at the clock (about 500 small spans, 0.2-0.5 ms). */
const DECODE_STEP_BYTES = 16 * 1024;
/** Items stored between two looks at the clock, each part a batch of its own to the store's observers (about 1 ms). */
const STORE_STEP = 2048;
/**
 * The fewest bytes a stored item takes in a request (a tag and a zero length): a body no larger than this many times
 * its store's capacity cannot hold more items than the store keeps, and is not counted.
 */
const MIN_ITEM_BYTES = 2;
/**
 * A request whose protobuf is no larger than this is decided at once: it holds at most 32,768 items. A larger one,
 * of up to 1 MiB, has its items counted at once (a walk that stops past that many), and is decided in slices if it
 * holds more: 100,000 empty log records (200 KB) held the event loop 20-27 ms decided at once.
 */
const DECIDED_AT_ONCE = 64 * 1024;
const MOST_AT_ONCE = DECIDED_AT_ONCE / MIN_ITEM_BYTES;

/** Headers worth keeping in the journal: everything but the ones that carry secrets. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie)$/i;

/** The journal keeps thousands of entries: headers are for recognising a client, not for keeping a 16 KiB cookie. */
const MAX_HEADER_CHARS = 1024;
const MAX_HEADERS_CHARS = 4096;

/**
 * Whether the journal keeps a header. Content-Length is the entry's `bytes`: it changes with every body, and kept too
 * it would make every entry's headers differ.
 * @param {string} name @param {string|string[]|Buffer|undefined} value @returns {value is string|string[]|Buffer}
 */
function journaled(name, value) {
  return value !== undefined && name !== 'content-length';
}

/** The headers of the last request, and what the journal kept of them: the next from its client is most often alike. */
let lastHeaders = /** @type {{ names: string[], values: string[], kept: Readonly<Record<string, string>> }} */ ({ names: [], values: [], kept: Object.freeze({}) });

/**
 * What the journal keeps of a request's headers: frozen, and the last request's own object when the headers are
 * the same (repeats.js).
 * @param {Record<string, string|string[]|Buffer|undefined>} headers HTTP headers or gRPC metadata (binary values as base64)
 * @returns {Readonly<Record<string, string>>}
 */
export function journalHeaders(headers) {
  const { names, values } = lastHeaders;
  let i = 0;
  let same = true;
  for (const name in headers) {
    const value = headers[name];
    if (!journaled(name, value)) continue;
    if (i >= names.length || names[i] !== name || values[i] !== value) {
      same = false;
      break;
    }
    i++;
  }
  if (same && i === names.length) return lastHeaders.kept;
  /** @type {Record<string, string>} */
  const out = {};
  /** @type {string[]} */
  const seenNames = [];
  /** @type {string[]} */
  const seenValues = [];
  let texts = true;
  let chars = 0;
  let left = 0;
  for (const name in headers) {
    const value = headers[name];
    if (!journaled(name, value)) continue;
    // Only headers that are all texts are compared next time: an array or a buffer is not kept as it came.
    if (typeof value === 'string') {
      seenNames.push(name);
      seenValues.push(keptText(value));
    } else texts = false;
    let text = SECRET_HEADERS.test(name) ? '(redacted)' : Array.isArray(value) ? value.join(', ') : Buffer.isBuffer(value) ? value.toString('base64') : value;
    if (text.length > MAX_HEADER_CHARS) text = `${text.slice(0, MAX_HEADER_CHARS)}… (${text.length} characters)`;
    if (chars + name.length + text.length > MAX_HEADERS_CHARS) {
      left++;
      continue;
    }
    chars += name.length + text.length;
    out[keptText(name)] = keptText(text);
  }
  if (left) out['(not kept)'] = `${left} more header${left === 1 ? '' : 's'}`;
  const kept = Object.freeze(out);
  if (texts) lastHeaders = { names: seenNames, values: seenValues, kept };
  return kept;
}

/**
 * Why a request's schema version header (a signal in development names one: signals.js `versionHeader`) is
 * refused: exactly one value, the supported one, or none, which means that one. HTTP joins a repeated header
 * with commas, so repeated values are refused as the one malformed value they make.
 * @param {Signal} signal @param {Record<string, unknown>} headers HTTP headers or gRPC metadata
 * @returns {string} empty when accepted
 */
function unsupportedVersion(signal, headers) {
  const rule = signal.versionHeader;
  if (!rule) return '';
  const value = headers[rule.name];
  if (value === undefined || value === rule.supported) return '';
  return `invalid or unsupported ${rule.name} ${JSON.stringify(String(value))}: the supported version is ${rule.supported}`;
}

/**
 * Why a request (or an OTAP batch) of more items than its signal's store keeps is refused.
 * @param {Signal} signal @param {number} capacity
 */
export function tooManyItems(signal, capacity) {
  return `request holds more ${signal.item.many} than the ${capacity} the store keeps; send smaller batches or raise --${signal.budget.countFlag}`;
}

/**
 * One request from arrival to journal entry.
 */
export class Exchange {
  /** @param {Receiver} receiver @param {RequestMeta} meta */
  constructor(receiver, meta) {
    this.receiver = receiver;
    this.meta = meta;
    this.id = receiver.journal.nextId();
    this.started = Date.now();
    this.items = 0;
    /** @type {null|{ id: string, action: string, side?: 'upstream' }} */
    this.fault = null;
    /** @type {any} */
    this.request = null;
    this.stored = false;
    this.done = false;
    /** the decoded body's size, once known */
    this.bodyBytes = 0;
    /** @type {readonly string[]} the service.name of each resource the request carried, once decoded */
    this.services = [];
    this.json = false;
    /** @type {null|ReturnType<import('../forward/forwarder.js').Forwarder['begin']>} the calls to the forward targets */
    this.forwarding = null;
  }

  /**
   * Decodes the body and decides what happens to it; accepted data is stored before the answer goes out,
   * so a test that sees the answer sees the data.
   * @param {Buffer} body uncompressed
   * @param {boolean} json
   * @param {Record<string, unknown>} headers as received (the journal's copy is redacted; rules may match any header)
   * @param {Buffer|null} [transcoded] OTLP/JSON's protobuf, when it was made already
   * @param {boolean} [counted] whether its items were counted already (`decideCounted`, or an OTAP batch's rows)
   * @returns {Verdict}
   */
  decide(body, json, headers, transcoded, counted = false) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    const unsupported = unsupportedVersion(signal, headers);
    if (unsupported) return { kind: 'invalid', message: unsupported };
    let wire;
    try {
      if (json && transcoded === undefined) transcoded = jsonToProto(signal, body);
      const protobuf = json ? transcoded : body;
      if (!counted && protobuf && this.mayHoldTooMany(protobuf)) {
        const count = this.itemCount(protobuf);
        count.step(Infinity);
        if (count.over) return this.tooMany();
      }
      ({ request: this.request, wire } = decodeBody(signal, body, json, transcoded));
    } catch (err) {
      if (err instanceof DecodeError) return { kind: 'invalid', message: err.message };
      throw err;
    }
    const { verdict, kept } = this.judge(body, json, headers, wire);
    if (kept !== null) {
      this.receiver.store.addRequest(signal.name, this.request, this.id, kept);
      this.stored = true;
    }
    return verdict;
  }

  /**
   * What happens to a decoded request (`this.request`): the fault rule it meets, whether it fits the byte budget,
   * its calls to the forward targets.
   * @param {Buffer} body uncompressed @param {boolean} json @param {Record<string, unknown>} headers
   * @param {Buffer|null} wire the protobuf it was decoded from, null when OTLP/JSON was decoded as JSON
   * @returns {{ verdict: Verdict, kept: number|null }} `kept`: the bytes its items keep, when they are to be stored
   */
  judge(body, json, headers, wire) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    this.items = signal.countItems(this.request);
    this.services = keptList(servicesOf(signal, this.request));
    this.bodyBytes = wire ? wire.length : body.length;
    this.json = !wire;
    this.decodedBytes = body.length;
    const { faults, store } = this.receiver;
    const rule = faults.decide({
      signal: signal.name,
      transport: this.meta.transport,
      headers,
      request: this.request,
    });
    if (rule) this.fault = { id: rule.id, action: rule.action };
    const answer = rule ? answerOf(rule) : 'accept';
    if (answer === 'error') return { verdict: { kind: 'fault', rule }, kept: null };
    if (answer === 'reset' || answer === 'hang') return { verdict: { kind: answer, rule }, kept: null };
    const kept = keptBytes(signal.name, this.bodyBytes, this.items, this.json);
    if (!store.fits(signal.name, kept)) {
      const budget = store.budgets[signal.name];
      return {
        verdict: {
          kind: 'tooLarge',
          message: `request would keep about ${kept} bytes of ${signal.name}, more than the whole ${signal.name} budget of ${budget} bytes; send smaller batches or raise the budget (--${signal.budget.bytesFlag})`,
        },
        kept: null,
      };
    }
    const { forwarder } = this.receiver;
    if (forwarder) {
      this.forwarding = forwarder.begin({ signal, transport: this.meta.transport, json, body, protobuf: wire, request: this.request, headers });
      if (this.forwarding.shed) return { verdict: { kind: 'fault', rule: SHED, outcome: 'rejected' }, kept: null };
    }
    if (answer === 'partial') return { verdict: { kind: 'accepted', partial: partialOf(rule), delayMs: 0 }, kept };
    if (answer === 'delay') return { verdict: { kind: 'accepted', partial: null, delayMs: rule.delayMs }, kept };
    return { verdict: { kind: 'accepted', partial: null, delayMs: 0 }, kept };
  }

  /**
   * `decide`, with the items of a large protobuf body counted first in slices that take turns with the decoders
   * (slices.js): a body of millions of tiny fields, or of more items than the store keeps, is refused there,
   * costing its sender the wait for its turns rather than holding every other client. A client gone meanwhile
   * gets an `invalid` verdict nobody sees. A large OTLP/JSON body is transcoded on a worker thread first.
   * @param {Buffer} body uncompressed @param {boolean} json @param {Record<string, unknown>} headers
   * @param {() => boolean} gone @param {boolean} [counted] whether its items were counted already (an OTAP batch's
   *   rows): they are not counted again
   * @returns {Verdict|Promise<Verdict>}
   */
  decideInSlices(body, json, headers, gone, counted = false) {
    if (body.length > BORROWED_FROM && isBorrowed(body)) return this.decideBorrowed(body, json, headers, gone);
    if (json && body.length >= OFF_THREAD_AT) return this.decideOffThread(body, headers, gone);
    if (body.length <= DECIDED_AT_ONCE) return this.decide(body, json, headers, undefined, counted);
    const protobuf = json ? jsonToProto(/** @type {Signal} */ (this.meta.signal), body) : body;
    return this.decideBySize(body, json, headers, gone, protobuf, counted);
  }

  /**
   * `decide` at once, or in slices (`decideCounted`) for a protobuf over 1 MiB or holding many items.
   * @param {Buffer} body @param {boolean} json @param {Record<string, unknown>} headers @param {() => boolean} gone
   * @param {Buffer|null} protobuf the body's, or null for OTLP/JSON the transcoder declined @param {boolean} counted
   * @returns {Verdict|Promise<Verdict>}
   */
  decideBySize(body, json, headers, gone, protobuf, counted) {
    const transcoded = json ? protobuf : undefined;
    if (protobuf && (protobuf.length > WALKED_AT_ONCE || (protobuf.length > DECIDED_AT_ONCE && this.holdsMany(protobuf))))
      return this.decideCounted(body, json, headers, gone, transcoded ?? undefined, counted);
    return this.decide(body, json, headers, transcoded, counted);
  }

  /**
   * Whether a protobuf of up to 1 MiB holds more items than are decided at once, by a walk that stops past them; a
   * malformed one is left to the decode, which says how. @param {Buffer} protobuf
   */
  holdsMany(protobuf) {
    const count = itemCountOf(/** @type {Signal} */ (this.meta.signal), protobuf, MOST_AT_ONCE);
    try {
      count.step(Infinity);
    } catch (err) {
      if (err instanceof DecodeError) return false;
      throw err;
    }
    return count.over;
  }

  /**
   * `decideInSlices` for a body decoded into borrowed memory (pieces.js `borrow`: a large snappy block). A protobuf's
   * items are counted first, and only a body its count accepts gets memory of its own (`owned`); a refused one's is
   * given back for the next body to reuse. Nothing else sees the borrowed memory.
   * @param {Buffer} body @param {boolean} json @param {Record<string, unknown>} headers @param {() => boolean} gone
   * @returns {Promise<Verdict>}
   */
  async decideBorrowed(body, json, headers, gone) {
    const slicer = new Slicer(gone);
    let own;
    try {
      await slicer.pause();
      if (!json && (await this.countsOver(body, slicer))) return this.tooMany();
      own = await owned(body, slicer);
    } catch (err) {
      if (err instanceof DecodeError || err instanceof ClientGone) return { kind: 'invalid', message: err.message };
      throw err;
    } finally {
      giveBack(body);
    }
    return this.decideInSlices(own, json, headers, gone, !json);
  }

  /**
   * Whether a protobuf holds more items than its store keeps, counted in slices.
   * @param {Uint8Array} protobuf @param {Slicer} slicer @returns {Promise<boolean>}
   * @throws {DecodeError} for a malformed top level
   */
  async countsOver(protobuf, slicer) {
    const count = this.itemCount(protobuf);
    while (!count.step(COUNT_STEPS)) if (slicer.due()) await slicer.pause();
    return count.over;
  }

  /**
   * `decide` for a large OTLP/JSON body, transcoded on the worker thread first. The worker is handed a copy of it
   * (the body is kept, for the journal), made a slice at a time: 13.7 MB copied into fresh memory at once held the
   * event loop 18-20 ms.
   * @param {Buffer} body @param {Record<string, unknown>} headers @param {() => boolean} gone @returns {Promise<Verdict>}
   */
  async decideOffThread(body, headers, gone) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    let wire;
    try {
      wire = await transcodeOffThread(signal, await joinInSlices([body], body.length, new Slicer(gone), false));
    } catch (err) {
      if (err instanceof ClientGone) return { kind: 'invalid', message: err.message };
      if (err instanceof DecodeError) return { kind: 'invalid', message: unsupportedVersion(signal, headers) || err.message };
      // The thread failed: the body is transcoded here, slower for everyone, but the data is kept.
      return this.decide(body, true, headers);
    }
    return this.decideBySize(body, true, headers, gone, wire, false);
  }

  /**
   * `decide` for a request whose protobuf (`transcoded`, or the body) is counted first, then decoded and stored, in
   * slices: a request of the store's capacity (100,000 spans, 3.3 MB) held the event loop 70-230 ms decoded and
   * stored at once. What is stored of it goes on being stored if its client leaves meanwhile.
   * @param {Buffer} body @param {boolean} json @param {Record<string, unknown>} headers @param {() => boolean} gone
   * @param {Buffer|undefined} transcoded @param {boolean} [counted] whether its items were counted already
   * @returns {Promise<Verdict>}
   */
  async decideCounted(body, json, headers, gone, transcoded, counted = false) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    const protobuf = transcoded ?? body;
    const slicer = new Slicer(gone);
    let decode;
    try {
      await slicer.pause();
      if (!counted && (await this.countsOver(protobuf, slicer))) return this.tooMany();
      decode = slicedDecodeOf(signal, protobuf);
      const unsupported = unsupportedVersion(signal, headers);
      if (unsupported) return { kind: 'invalid', message: unsupported };
      while (!decode.step(DECODE_STEP_BYTES)) if (slicer.due()) await slicer.pause();
    } catch (err) {
      if (err instanceof DecodeError || err instanceof ClientGone) return { kind: 'invalid', message: err.message };
      throw err;
    }
    const request = decode.request;
    this.request = request;
    const { verdict, kept } = this.judge(body, json, headers, protobuf);
    if (kept === null) return verdict;
    const { store } = this.receiver;
    const storing = new Slicer();
    const parts = store.addRequestInParts(signal.name, request, this.id, kept, STORE_STEP);
    while (!parts.next().done) if (storing.due()) await storing.pause();
    this.stored = true;
    return verdict;
  }

  /** A count of the items in a request's protobuf, stopped past what its store keeps. @param {Uint8Array} protobuf */
  itemCount(protobuf) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    return itemCountOf(signal, protobuf, this.receiver.store.capacityOf(signal.name));
  }

  /** Whether a request's protobuf is large enough to hold more items than its store keeps. @param {Uint8Array} protobuf */
  mayHoldTooMany(protobuf) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    return protobuf.length > MIN_ITEM_BYTES * this.receiver.store.capacityOf(signal.name);
  }

  /**
   * The refusal of a request holding more items than its store keeps: stored, it would evict everything else and
   * then most of itself, and its decode alone would hold the event loop (a million log records, 0.5 s). How many it
   * holds is not known: the count stopped past the store's capacity.
   * @returns {Verdict}
   */
  tooMany() {
    const signal = /** @type {Signal} */ (this.meta.signal);
    return { kind: 'tooLarge', message: tooManyItems(signal, this.receiver.store.capacityOf(signal.name)) };
  }

  /**
   * With forwarding, an accepted request's answer follows the primary target's, unless a client-side rule decided
   * it first (`partial`); a client-side `delay` runs alongside the upstream call. Any other verdict passes through.
   * @param {Verdict} verdict @returns {Promise<Verdict>}
   */
  async forwarded(verdict) {
    const forwarding = /** @type {NonNullable<Exchange['forwarding']>} */ (this.forwarding);
    if (verdict.kind !== 'accepted') return verdict;
    const [{ answer, rule }] = await Promise.all([forwarding.send(), verdict.delayMs > 0 ? sleep(verdict.delayMs) : null]);
    if (rule && !this.fault) this.fault = { id: rule.id, action: rule.action, side: 'upstream' };
    if (verdict.partial) return { kind: 'accepted', partial: verdict.partial, delayMs: 0 };
    if (answer.ok) return { kind: 'accepted', partial: answer.partial, delayMs: 0 };
    const { httpStatus, grpcCode, retryAfterMs, message } = /** @type {Extract<typeof answer, { ok: false }>} */ (answer);
    return {
      kind: 'fault',
      rule: { id: 'upstream', action: 'status', httpStatus, grpcCode, retryAfterMs, message },
      outcome: rule ? 'faulted' : 'rejected',
    };
  }

  /**
   * Records what was sent. Called exactly once per exchange, whatever happened to it.
   * @param {number|null} status HTTP status or gRPC code; null when nothing was sent
   * @param {string} message
   * @param {JournalEntry['outcome']} outcome
   * @param {Partial|null} [partial]
   */
  finish(status, message, outcome, partial = null) {
    if (this.done) return;
    this.done = true;
    const m = this.meta;
    /** @type {JournalEntry} */
    const entry = {
      id: this.id,
      time: journalTime(this.started),
      transport: m.transport,
      signal: m.signal ? m.signal.name : null,
      path: m.path,
      contentType: m.contentType,
      contentEncoding: m.contentEncoding,
      bytes: m.bytes,
      items: this.items,
      services: this.services,
      userAgent: m.userAgent,
      headers: m.headers,
      fault: this.fault,
      // Nothing was sent when a connection was reset or left unanswered: the entry then has no response.
      ...(status === null ? {} : { response: partial ? { status, message, partialSuccess: partial } : { status, message } }),
      outcome,
      durationMs: Date.now() - this.started,
    };
    if (m.otap) entry.otap = m.otap;
    if (this.forwarding) {
      entry.stored = this.stored;
      entry.upstream = this.forwarding.primary;
      if (this.forwarding.tees.length) entry.tees = this.forwarding.tees;
    }
    const { journal } = this.receiver;
    const bodyBytes = m.signal ? builtBodyBytes(m.signal.name, this.bodyBytes, this.items, this.json) : 0;
    const keep = !this.stored && this.request && journal.keepsBody(bodyBytes);
    const unstored = keep ? this.request : undefined;
    this.receiver.clients?.record(entry, this.started, this.request, this.decodedBytes ?? 0);
    // The decoded request pins its buffer: a hung request keeps it only as long as the exchange lives.
    this.request = null;
    journal.record(entry, unstored, bodyBytes);
  }
}

export class Receiver {
  /**
   * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
   *   faults: any, hangLimitMs: number, maxRequestBytes: number, maxInflightBytes?: number }} deps
   */
  constructor({ store, journal, faults, hangLimitMs, maxRequestBytes, maxInflightBytes = Infinity }) {
    this.store = store;
    this.journal = journal;
    this.faults = faults;
    /** @type {import('../forward/forwarder.js').Forwarder|null} set while there is a forward target */
    this.forwarder = null;
    this.clients = /** @type {import('../query/clients.js').Clients|null} the wire report per client, told of each request as it ends */ (null);
    this.hangLimitMs = hangLimitMs;
    this.maxRequestBytes = maxRequestBytes;
    /** bytes of request bodies being received or decoded, over both transports */
    this.inflight = 0;
    this.maxInflightBytes = maxInflightBytes;
    /** refused compressed bodies, answered at a pace over both transports (pace.js) */
    this.bodyRefusals = new Pacer(BODY_REFUSALS_PER_SECOND);
    /** large bodies refused for want of room, answered at a pace over both transports: see busyPace */
    this.busyRefusals = new Pacer(BUSY_REFUSALS_PER_SECOND);
  }

  /**
   * The pace at which a body refused by `reserve` is answered: a large body's (`whole`, its declared size) refusal is
   * paced, as a sender that loops on them would otherwise cost a connection's setup each time; a small body's is
   * answered at once, so that exporters of ordinary batches hear at once that the server is busy.
   * @param {number} whole @returns {Pacer|null}
   */
  busyPace(whole) {
    return whole > SMALL_BODY ? this.busyRefusals : null;
  }

  /**
   * Takes room for `n` more bytes of request bodies; false when the server holds too many already. Bodies of up to
   * 1 MiB (what exporters send) may use half as much again, so that big stalled bodies cannot shut them out.
   * @param {number} n @param {number} [held] what this request holds already
   */
  reserve(n, held = 0) {
    if (!this.#fits(n, held + n)) return false;
    this.inflight += n;
    return true;
  }

  /** Whether `more` bytes fit beside what is held, for a body of `size` bytes. @param {number} more @param {number} size */
  #fits(more, size) {
    return this.inflight + more <= (size <= SMALL_BODY ? this.maxInflightBytes * 1.5 : this.maxInflightBytes);
  }

  /**
   * Takes room for a body's bytes as they arrive: `read` of them so far, this chunk's included, of which the body
   * holds room for `held`. A body that declares a large size (`whole`: a Content-Length, a gRPC message's prefix)
   * takes room for all of it with its first chunk, and is refused there when that room is not free: counting only
   * what had arrived, two hundred gRPC streams that each began a 60 MB message were all let in while the budget
   * filled, and were read for 277 MiB before all but nine were refused; each stalled HTTP body likewise. A small
   * one takes what arrives, but is refused when the rest of it could not fit.
   * @param {number} read @param {number} held @param {number} whole its declared size, or 0
   * @returns {number} the bytes of room taken (0 when the body held room for them already), or -1 when refused
   */
  reserveBody(read, held, whole) {
    const want = Math.max(read, whole > SMALL_BODY ? whole : 0) - held;
    if (want <= 0) return 0;
    if (!this.#fits(Math.max(want, whole - held), Math.max(read, whole))) return -1;
    this.inflight += want;
    return want;
  }

  /** @param {number} n */
  release(n) {
    this.inflight -= n;
  }

  /**
   * The in-flight budget as a decoder takes from it on behalf of one request, which counts what it holds (`held`,
   * `add`) and releases it all once answered or gone: after that (`open` false) nothing more is taken, and nothing
   * is given back twice.
   * @param {() => number} held @param {(n: number) => void} add @param {() => boolean} [open]
   * @returns {import('../transport/slices.js').Room}
   */
  roomFor(held, add, open = () => true) {
    return {
      take: (n) => {
        if (!open() || !this.reserve(n, held())) return false;
        add(n);
        return true;
      },
      give: (n) => {
        const back = Math.min(n, held());
        this.release(back);
        add(-back);
      },
    };
  }

  /** @param {RequestMeta} meta */
  begin(meta) {
    return new Exchange(this, meta);
  }
}
