// The transport-neutral half of the data path: decode → faults.decide → store → journal.
// Each transport turns the Verdict into its own wire and reports back what it sent.
import { DecodeError } from '../otlp/errors.js';
import { builtRequest, decodeProto } from '../otlp/decode-proto.js';
import { decodeJson } from '../otlp/decode-json.js';
import { answerOf, partialOf } from '../faults/wire.js';

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ transport: 'http'|'grpc', signal: Signal|null, path: string, contentType: string,
 *   contentEncoding: string, bytes: number, userAgent: string, headers: Record<string, string> }} RequestMeta
 * @typedef {{ rejected: number, errorMessage: string }} Partial
 * @typedef {{ kind: 'invalid', message: string }
 *   | { kind: 'accepted', partial: Partial|null, delayMs: number }
 *   | { kind: 'fault', rule: any }
 *   | { kind: 'reset', rule: any }
 *   | { kind: 'hang', rule: any }} Verdict
 */

const LAZY = { lazySpans: true };

/** Headers worth keeping in the journal: everything but the ones that carry secrets. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie)$/i;

/** @param {Record<string, string|string[]|undefined>} headers */
export function journalHeaders(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.test(name) ? '(redacted)' : Array.isArray(value) ? value.join(', ') : value;
  }
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
    store.addRequest(signal.name, this.request, this.id);
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
    const unstored = this.stored || !this.request ? undefined : builtRequest(/** @type {Signal} */ (m.signal), this.request);
    this.receiver.journal.record(entry, unstored);
  }
}

export class Receiver {
  /**
   * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
   *   faults: any, hangLimitMs: number, maxRequestBytes: number }} deps
   */
  constructor({ store, journal, faults, hangLimitMs, maxRequestBytes }) {
    this.store = store;
    this.journal = journal;
    this.faults = faults;
    this.hangLimitMs = hangLimitMs;
    this.maxRequestBytes = maxRequestBytes;
  }

  /** @param {RequestMeta} meta */
  begin(meta) {
    return new Exchange(this, meta);
  }
}
