// The transport-neutral half of the data path: decode → faults.decide → store → journal.
// Each transport turns the Verdict into its own wire and reports back what it sent.
import { DecodeError } from '../otlp/errors.js';
import { builtRequest, decodeProto } from '../otlp/decode-proto.js';
import { decodeJson } from '../otlp/decode-json.js';
import { answerOf, partialOf } from '../faults/wire.js';
import { builtBodyBytes, keptBytes } from '../store/budget.js';

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ transport: 'http'|'grpc', signal: Signal|null, path: string, contentType: string,
 *   contentEncoding: string, bytes: number, userAgent: string, headers: Record<string, string> }} RequestMeta
 * @typedef {{ rejected: number, errorMessage: string }} Partial
 * @typedef {{ kind: 'invalid', message: string }
 *   | { kind: 'tooLarge', message: string }
 *   | { kind: 'accepted', partial: Partial|null, delayMs: number }
 *   | { kind: 'fault', rule: any }
 *   | { kind: 'reset', rule: any }
 *   | { kind: 'hang', rule: any }} Verdict
 */

const LAZY = { lazySpans: true };
const SMALL_BODY = 1024 * 1024;
/** @type {Record<string, string>} the budget options' flags, by signal */
const BUDGET_FLAGS = { traces: 'span', logs: 'log', metrics: 'point' };

/** Headers worth keeping in the journal: everything but the ones that carry secrets. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie)$/i;

/** The journal keeps thousands of entries: headers are for recognising a client, not for keeping a 16 KiB cookie. */
const MAX_HEADER_CHARS = 1024;
const MAX_HEADERS_CHARS = 4096;

/** @param {Record<string, string|string[]|undefined>} headers */
export function journalHeaders(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  let chars = 0;
  let left = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    let text = SECRET_HEADERS.test(name) ? '(redacted)' : Array.isArray(value) ? value.join(', ') : value;
    if (text.length > MAX_HEADER_CHARS) text = `${text.slice(0, MAX_HEADER_CHARS)}… (${text.length} characters)`;
    if (chars + name.length + text.length > MAX_HEADERS_CHARS) {
      left++;
      continue;
    }
    chars += name.length + text.length;
    out[name] = text;
  }
  if (left) out['(not kept)'] = `${left} more header${left === 1 ? '' : 's'}`;
  return out;
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
    /** @type {null|{ id: string, action: string }} */
    this.fault = null;
    /** @type {any} */
    this.request = null;
    this.stored = false;
    this.done = false;
    /** the decoded body's size, once known */
    this.bodyBytes = 0;
    this.json = false;
  }

  /**
   * Decodes the body and decides what happens to it; accepted data is stored before the answer goes out,
   * so a test that sees the answer sees the data.
   * @param {Buffer} body uncompressed
   * @param {boolean} json
   * @param {Record<string, unknown>} headers as received (the journal's copy is redacted; rules may match any header)
   * @returns {Verdict}
   */
  decide(body, json, headers) {
    const signal = /** @type {Signal} */ (this.meta.signal);
    try {
      this.request = json ? decodeJson(signal, body) : decodeProto(signal, body, LAZY);
    } catch (err) {
      if (err instanceof DecodeError) return { kind: 'invalid', message: err.message };
      throw err;
    }
    this.items = signal.countItems(this.request);
    this.bodyBytes = body.length;
    this.json = json;
    const { faults, store } = this.receiver;
    const rule = faults.decide({
      signal: signal.name,
      transport: this.meta.transport,
      headers,
      request: this.request,
    });
    if (rule) this.fault = { id: rule.id, action: rule.action };
    const answer = rule ? answerOf(rule) : 'accept';
    if (answer === 'error') return { kind: 'fault', rule };
    if (answer === 'reset' || answer === 'hang') return { kind: answer, rule };
    const kept = keptBytes(signal.name, body.length, this.items, json);
    if (!store.fits(signal.name, kept)) {
      const budget = store.budgets[signal.name];
      return {
        kind: 'tooLarge',
        message: `request would keep about ${kept} bytes of ${signal.name}, more than the whole ${signal.name} budget of ${budget} bytes; send smaller batches or raise the budget (--max-${BUDGET_FLAGS[signal.name]}-bytes)`,
      };
    }
    store.addRequest(signal.name, this.request, this.id, kept);
    this.stored = true;
    if (answer === 'partial') return { kind: 'accepted', partial: partialOf(rule), delayMs: 0 };
    if (answer === 'delay') return { kind: 'accepted', partial: null, delayMs: rule.delayMs };
    return { kind: 'accepted', partial: null, delayMs: 0 };
  }

  /**
   * Records what was sent. Called exactly once per exchange, whatever happened to it.
   * @param {number} status HTTP status or gRPC code
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
      time: new Date(this.started).toISOString(),
      transport: m.transport,
      signal: m.signal ? m.signal.name : null,
      path: m.path,
      contentType: m.contentType,
      contentEncoding: m.contentEncoding,
      bytes: m.bytes,
      items: this.items,
      userAgent: m.userAgent,
      headers: m.headers,
      fault: this.fault,
      response: partial ? { status, message, partialSuccess: partial } : { status, message },
      outcome,
      durationMs: Date.now() - this.started,
    };
    const { journal } = this.receiver;
    const bodyBytes = builtBodyBytes(this.bodyBytes, this.json);
    const keep = !this.stored && this.request && journal.keepsBody(bodyBytes);
    const unstored = keep ? builtRequest(/** @type {Signal} */ (m.signal), this.request) : undefined;
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
    this.hangLimitMs = hangLimitMs;
    this.maxRequestBytes = maxRequestBytes;
    /** bytes of request bodies being received or decoded, over both transports */
    this.inflight = 0;
    this.maxInflightBytes = maxInflightBytes;
  }

  /**
   * Takes room for `n` more bytes of request bodies; false when the server holds too many already. Bodies of up to
   * 1 MiB (what exporters send) may use half as much again, so that big stalled bodies cannot shut them out.
   * @param {number} n @param {number} [held] what this request holds already
   */
  reserve(n, held = 0) {
    const limit = held + n <= SMALL_BODY ? this.maxInflightBytes * 1.5 : this.maxInflightBytes;
    if (this.inflight + n > limit) return false;
    this.inflight += n;
    return true;
  }

  /** @param {number} n */
  release(n) {
    this.inflight -= n;
  }

  /** @param {RequestMeta} meta */
  begin(meta) {
    return new Exchange(this, meta);
  }
}
