// The journal's record of each OTAP stream: when it opened and closed, how it ended, and what its batches added up
// to. The journal keeps a batch per entry; this keeps the stream, so that a list can show a stream of ten thousand
// batches as one row. A record lives as long as the journal holds one of its batches, or, for a closed stream whose
// batches are all gone (or that sent none), until everything recorded before its end has gone too.

/**
 * @typedef {'half-close'|'cancel'|'reset'|'idle'|'error'|'shutdown'} StreamEndCause how a stream ended:
 *   `half-close` the client ended its side and was answered OK; `cancel` the client reset or cancelled the stream, or
 *   its connection went; `reset` a `reset` fault rule ended it; `idle` a message stalled half-received past the idle
 *   timeout; `error` the server ended it with a status of its own (a frame too large, too many bytes in flight);
 *   `shutdown` the server stopped
 * @typedef {{ cause: StreamEndCause, status: number|null, message: string }} StreamEnd
 *   `status`: the gRPC status the stream's trailers carried, null when none was sent
 * @typedef {{ signal: string, method: string, path: string, peer: string, userAgent: string }} StreamMeta
 * @typedef {{
 *   id: number, meta: StreamMeta, position: number, openedMs: number, closedMs: number, lastPosition: number,
 *   end: StreamEnd|null, batches: number, kept: number, items: number, bytes: number,
 *   statuses: Record<string, number>, unanswered: number, services: Set<string>,
 * }} StreamRecord `position`: the journal position it opened at, which places it among the requests;
 *   `lastPosition`: the journal position of its end
 */

/** Every way a stream can end. @type {StreamEndCause[]} */
export const STREAM_END_CAUSES = ['half-close', 'cancel', 'reset', 'idle', 'error', 'shutdown'];

/** Services a stream's row names: a producer's batches carry a handful; past this, the row says so by count. */
const MAX_SERVICES = 16;

export class OtapStreams {
  constructor() {
    /** @type {Map<number, StreamRecord>} in the order they opened */
    this.records = new Map();
    /** @type {Set<StreamRecord>} closed streams with no batch in the journal, in the order they closed */
    this.idle = new Set();
    /** records evicted since the journal was cleared */
    this.evicted = 0;
    this.opened = 0;
  }

  /** @param {number} id @param {StreamMeta} meta @param {number} position @param {number} now */
  open(id, meta, position, now) {
    /** @type {StreamRecord} */
    const record = {
      id,
      meta,
      position,
      openedMs: now,
      closedMs: 0,
      lastPosition: position,
      end: null,
      batches: 0,
      kept: 0,
      items: 0,
      bytes: 0,
      statuses: {},
      unanswered: 0,
      services: new Set(),
    };
    this.records.set(id, record);
    this.opened++;
    return record;
  }

  /** A batch of a stream the journal recorded. @param {import('./journal.js').JournalEntry} entry */
  batch(entry) {
    const record = entry.otap && this.records.get(entry.otap.stream);
    if (!record) return;
    record.batches++;
    // A batch answered after its stream closed (held by a delay) keeps the closed stream.
    if (record.kept++ === 0) this.idle.delete(record);
    record.items += entry.items;
    record.bytes += entry.bytes;
    if (entry.response) record.statuses[entry.response.status] = (record.statuses[entry.response.status] ?? 0) + 1;
    else record.unanswered++;
    for (const service of entry.services ?? []) if (record.services.size < MAX_SERVICES) record.services.add(service);
  }

  /** @param {number} id @param {StreamEnd} end @param {number} position @param {number} now */
  close(id, end, position, now) {
    const record = this.records.get(id);
    if (!record || record.end) return;
    record.end = end;
    record.closedMs = now;
    record.lastPosition = position;
    if (record.kept === 0) this.idle.add(record);
  }

  /**
   * The journal let an entry go: a closed stream goes with its last batch, and closed streams with no batch left go
   * once the journal holds nothing recorded before their end.
   * @param {import('./journal.js').JournalEntry} entry @param {number} oldest the position of the oldest entry still held
   */
  evict(entry, oldest) {
    const record = entry.otap && this.records.get(entry.otap.stream);
    if (record && --record.kept === 0 && record.end) this.drop(record);
    for (const stale of this.idle) {
      if (stale.lastPosition >= oldest) break;
      this.drop(stale);
    }
  }

  /** Bounds the closed streams that hold no batch when nothing is evicted to age them out. @param {number} max */
  trim(max) {
    for (const stale of this.idle) {
      if (this.idle.size <= max) break;
      this.drop(stale);
    }
  }

  /** @param {StreamRecord} record */
  drop(record) {
    this.idle.delete(record);
    this.records.delete(record.id);
    this.evicted++;
  }

  /** @param {number} id */
  get(id) {
    return this.records.get(id);
  }

  all() {
    return this.records.values();
  }

  /** Streams open now. */
  openCount() {
    let n = 0;
    for (const record of this.records.values()) if (!record.end) n++;
    return n;
  }

  clear() {
    // Open streams go on after a clearing: they keep their records, emptied of the batches that were cleared.
    for (const record of this.records.values()) {
      if (record.end) this.records.delete(record.id);
      else Object.assign(record, { batches: 0, kept: 0, items: 0, bytes: 0, statuses: {}, unanswered: 0, services: new Set() });
    }
    this.idle.clear();
    this.evicted = 0;
  }
}

/** What the API shows of a stream. @param {StreamRecord} r @param {number} now */
export function streamView(r, now = Date.now()) {
  return {
    id: r.id,
    signal: r.meta.signal,
    method: r.meta.method,
    path: r.meta.path,
    peer: r.meta.peer,
    userAgent: r.meta.userAgent,
    openedAt: new Date(r.openedMs).toISOString(),
    closedAt: r.end ? new Date(r.closedMs).toISOString() : null,
    state: r.end ? 'closed' : 'open',
    end: r.end,
    durationMs: (r.end ? r.closedMs : now) - r.openedMs,
    batches: r.batches,
    kept: r.kept,
    items: r.items,
    bytes: r.bytes,
    statuses: r.statuses,
    unanswered: r.unanswered,
    services: [...r.services],
  };
}
