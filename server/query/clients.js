// The wire report: what each client sends (a client = user agent + its resource's service.name and
// service.instance.id), counted as each request ends, so that no answer scans the store. Memory is bounded:
// at most MAX_CLIENTS clients (past that, the one seen least recently is dropped and counted in `evicted`), and
// each keeps its last MAX_RECORDS requests, from which medians, the concurrency, windows (`since`) and the
// time series are read; totals count every request since the start or the last clear.
import { FAULTED_OUTCOMES } from '../store/journal.js';
import { serviceOf } from '../store/store.js';
import { signalByName } from '../otlp/signals.js';
import { batchKey } from '../faults/report.js';

export const MAX_CLIENTS = 100;
export const MAX_RECORDS = 1000;
/** Requests looked back on to tell which were in flight together: concurrent exports of one client are few. */
const OVERLAP_LOOKBACK = 64;
/** Faulted batches remembered per client while their retry may still come. */
const MAX_PENDING_RETRIES = 64;
/** The journal's times are whole milliseconds: a retry may appear to start up to this much before its fault's answer. */
const TOLERANCE_MS = 5;

/**
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ start: number, end: number, signal: string, wire: string, encoding: string, bytes: number,
 *   decoded: number, items: number, gapMs: number, faulted: boolean, retry: boolean, concurrent: number }} RequestRecord
 *   `gapMs`: since the previous request of the same signal started (-1 for the first, or one that started earlier)
 * @typedef {{ t: number, requests: number, items: number, bytes: number, decoded: number, faults: number }} SecondPoint
 * @typedef {{ key: string, userAgent: string, service: string, instance: string, signals: string[], wires: string[],
 *   firstSeen: string, lastSeen: string, requests: number, items: number,
 *   bytes: { wire: number, decoded: number, perItem: number },
 *   compression: { encodings: Record<string, number>, ratio: number },
 *   batch: { min: number, median: number, max: number }, intervalMs: number, concurrency: number,
 *   answerMs: { median: number, p99: number, max: number }, faults: number, retries: number,
 *   window: { from: string, requests: number, complete: boolean }, series: SecondPoint[] }} ClientReport
 */

/** The wire a request came over, as the OTLP exporters' protocol setting names it. @param {JournalEntry} e */
function wireOf(e) {
  if (e.transport !== 'http') return e.transport;
  return /json/i.test(e.contentType) ? 'http/json' : 'http/protobuf';
}

/** The first resource's service.instance.id: one request comes from one SDK. @param {any} resource */
function instanceOf(resource) {
  for (const kv of resource?.attributes ?? []) if (kv.key === 'service.instance.id') return String(kv.value.stringValue ?? '');
  return '';
}

class Client {
  /** @param {string} userAgent @param {string} service @param {string} instance */
  constructor(userAgent, service, instance) {
    this.userAgent = userAgent;
    this.service = service;
    this.instance = instance;
    /** @type {RequestRecord[]} oldest first; trimmed to the last MAX_RECORDS only when twice that, so a request costs no copy */
    this.records = [];
    this.requests = 0;
    this.items = 0;
    this.bytes = 0;
    this.decoded = 0;
    this.faults = 0;
    this.retries = 0;
    this.first = Infinity;
    this.last = -Infinity;
    /** @type {Map<string, number>} the latest start of each signal's requests */
    this.lastStart = new Map();
    /** @type {Map<string, number>} faulted batches, by batch, to when they were answered */
    this.pendingRetries = new Map();
  }

  /** @param {JournalEntry} e @param {number} start when it started, ms (the entry's time, unparsed) @param {number} decoded */
  add(e, start, decoded) {
    const end = start + e.durationMs;
    const signal = e.signal ?? '';
    const previous = this.lastStart.get(signal);
    const gapMs = previous === undefined || start < previous ? -1 : start - previous;
    if (previous === undefined || start > previous) this.lastStart.set(signal, start);
    const faulted = FAULTED_OUTCOMES.has(e.outcome);
    // A batch is named only when a retry can be told from it: most clients never see a fault.
    const key = faulted || this.pendingRetries.size > 0 ? batchKey(e) : '';
    const answered = this.pendingRetries.get(key);
    const retry = answered !== undefined && start >= answered - TOLERANCE_MS;
    if (retry) this.pendingRetries.delete(key);
    if (faulted) {
      this.pendingRetries.set(key, end);
      if (this.pendingRetries.size > MAX_PENDING_RETRIES) this.pendingRetries.delete(/** @type {string} */ (this.pendingRetries.keys().next().value));
    }
    // Requests are recorded as they end: one in flight when this one started ended before it, or is this one's later neighbour.
    let concurrent = 1;
    for (let i = Math.max(0, this.records.length - OVERLAP_LOOKBACK); i < this.records.length; i++) {
      const r = this.records[i];
      if (r.start <= start && r.end > start) concurrent++;
      else if (start <= r.start && r.start < end) r.concurrent++;
    }
    /** @type {RequestRecord} */
    const record = {
      start,
      end,
      signal,
      wire: wireOf(e),
      encoding: e.contentEncoding || 'none',
      bytes: e.bytes,
      decoded,
      items: e.items,
      gapMs,
      faulted,
      retry,
      concurrent,
    };
    this.records.push(record);
    if (this.records.length >= 2 * MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
    this.requests++;
    this.items += e.items;
    this.bytes += e.bytes;
    this.decoded += decoded;
    if (faulted) this.faults++;
    if (retry) this.retries++;
    this.first = Math.min(this.first, start);
    this.last = Math.max(this.last, start);
  }

  /** @param {number} since ms; -Infinity for everything @returns {ClientReport} */
  report(since) {
    const all = since === -Infinity;
    const records = this.records.length > MAX_RECORDS ? this.records.slice(-MAX_RECORDS) : this.records;
    const window = all ? records : records.filter((r) => r.start >= since);
    // A window is exact while the records reach back to its start: a client that sent more than MAX_RECORDS since has lost some.
    const complete = all ? records.length === this.requests : records.length < this.requests ? records[0].start < since : true;
    const sum = (/** @type {(r: RequestRecord) => number} */ f) => window.reduce((n, r) => n + f(r), 0);
    const requests = all ? this.requests : window.length;
    const items = all ? this.items : sum((r) => r.items);
    const wire = all ? this.bytes : sum((r) => r.bytes);
    const decoded = all ? this.decoded : sum((r) => r.decoded);
    /** @type {Record<string, number>} */
    const encodings = {};
    for (const r of window) encodings[r.encoding] = (encodings[r.encoding] ?? 0) + 1;
    const sizes = window.map((r) => r.items).sort((a, b) => a - b);
    const answers = window.map((r) => r.end - r.start).sort((a, b) => a - b);
    const gaps = window
      .filter((r) => r.gapMs >= 0)
      .map((r) => r.gapMs)
      .sort((a, b) => a - b);
    const times = window.map((r) => r.start);
    return {
      key: clientKey(this.userAgent, this.service, this.instance),
      userAgent: this.userAgent,
      service: this.service,
      instance: this.instance,
      signals: [...new Set(window.map((r) => r.signal))].filter(Boolean).sort(),
      wires: [...new Set(window.map((r) => r.wire))].sort(),
      firstSeen: times.length ? new Date(all ? this.first : Math.min(...times)).toISOString() : '',
      lastSeen: times.length ? new Date(all ? this.last : Math.max(...times)).toISOString() : '',
      requests,
      items,
      bytes: { wire, decoded, perItem: items ? round(wire / items) : 0 },
      compression: { encodings, ratio: wire ? round(decoded / wire) : 0 },
      batch: { min: sizes[0] ?? 0, median: quantile(sizes, 0.5), max: sizes.at(-1) ?? 0 },
      intervalMs: quantile(gaps, 0.5),
      concurrency: window.reduce((n, r) => Math.max(n, r.concurrent), 0),
      answerMs: { median: quantile(answers, 0.5), p99: quantile(answers, 0.99), max: answers.at(-1) ?? 0 },
      faults: all ? this.faults : window.filter((r) => r.faulted).length,
      retries: all ? this.retries : window.filter((r) => r.retry).length,
      window: { from: all ? '' : new Date(since).toISOString(), requests: window.length, complete },
      series: perSecond(window),
    };
  }
}

/** `n` to `digits` decimals, for figures people read. @param {number} n @param {number} [digits] */
export const round = (n, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The nearest-rank quantile `q` of sorted values; 0 for none. @param {number[]} sorted @param {number} q */
export function quantile(sorted, q) {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** The window's requests by the second they started in. @param {RequestRecord[]} records @returns {SecondPoint[]} */
function perSecond(records) {
  /** @type {Map<number, SecondPoint>} */
  const seconds = new Map();
  for (const r of records) {
    const t = Math.floor(r.start / 1000) * 1000;
    let point = seconds.get(t);
    if (!point) seconds.set(t, (point = { t, requests: 0, items: 0, bytes: 0, decoded: 0, faults: 0 }));
    point.requests++;
    point.items += r.items;
    point.bytes += r.bytes;
    point.decoded += r.decoded;
    if (r.faulted) point.faults++;
  }
  return [...seconds.values()].sort((a, b) => a.t - b.t);
}

/** @param {string} userAgent @param {string} service @param {string} instance */
const clientKey = (userAgent, service, instance) => `${userAgent}\u0000${service}\u0000${instance}`;

/** Every client's figures, fed by the receivers as each request ends; cleared with the journal. */
export class Clients {
  /** @param {{ maxClients?: number }} [options] */
  constructor({ maxClients = MAX_CLIENTS } = {}) {
    this.maxClients = maxClients;
    /** @type {Map<string, Client>} least recently seen first */
    this.clients = new Map();
    /** clients dropped to stay within maxClients, since the start or the last clear */
    this.evicted = 0;
    /** the key of the client seen last: the end of `clients` */
    this.newest = '';
  }

  /**
   * @param {JournalEntry} entry @param {number} start when it started, ms
   * @param {any} request the decoded request, null when it was not decoded
   * @param {number} decoded the body's size after decompression; 0 when it was refused before that
   */
  record(entry, start, request, decoded) {
    if (entry.transport === 'import') return;
    const signal = request && entry.signal ? signalByName(entry.signal) : undefined;
    const root = signal ? request[signal.rootField] : null;
    const resource = root?.[0]?.resource;
    const service = resource ? serviceOf(resource) : '';
    const instance = instanceOf(resource);
    const key = clientKey(entry.userAgent, service, instance);
    let client = this.clients.get(key);
    // Moved to the end (most recently seen) unless it is there already, as it is while one client sends.
    if (key !== this.newest) {
      if (client) this.clients.delete(key);
      else client = new Client(entry.userAgent, service, instance);
      this.clients.set(key, client);
      this.newest = key;
    } else if (!client) this.clients.set(key, (client = new Client(entry.userAgent, service, instance)));
    if (this.clients.size > this.maxClients) {
      this.clients.delete(/** @type {string} */ (this.clients.keys().next().value));
      this.evicted++;
    }
    client.add(entry, start, decoded);
  }

  /** @param {number} [since] ms: only requests that started then or later @returns {ClientReport[]} by service, then user agent */
  report(since = -Infinity) {
    return [...this.clients.values()]
      .map((c) => c.report(since))
      .filter((r) => r.requests > 0)
      .sort((a, b) => a.service.localeCompare(b.service) || a.userAgent.localeCompare(b.userAgent) || a.instance.localeCompare(b.instance));
  }

  clear() {
    this.clients.clear();
    this.evicted = 0;
    this.newest = '';
  }
}
