// Past a few requests a second, the console summary counts requests instead of describing each one.
import { clock, count } from './summary.js';

/** @typedef {import('../store/journal.js').JournalEntry} JournalEntry */

/** Requests not printed one by one during a second, counted. */
export class Rollup {
  constructor() {
    this.requests = 0;
    /** The time of the last request counted: the line is stamped with it, so it is never earlier than the lines printed before it. */
    this.last = '';
    /** @type {Map<string|null, number>} items by signal */
    this.items = new Map();
    /** @type {Map<string, number>} requests by outcome, other than accepted */
    this.outcomes = new Map();
  }

  /** @param {JournalEntry} entry */
  add(entry) {
    this.requests++;
    this.last = entry.time;
    this.items.set(entry.signal, (this.items.get(entry.signal) ?? 0) + entry.items);
    if (entry.outcome !== 'accepted') this.outcomes.set(entry.outcome, (this.outcomes.get(entry.outcome) ?? 0) + 1);
  }

  text() {
    const items = [...this.items].map(([signal, n]) => count(n, signal)).join(', ');
    const outcomes = [...this.outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(', ');
    const requests = `${this.requests} more request${this.requests === 1 ? '' : 's'}`;
    return `${clock(this.last)}  … ${requests} this second: ${items}${outcomes ? `; ${outcomes}` : ''} (GET /api/requests lists each)\n`;
  }
}

/** Lets `perSecond` requests a second through to be printed in full and rolls the rest up into one line a second. */
export class LineRate {
  /** @param {number} perSecond @param {(rollup: Rollup) => void} emit */
  constructor(perSecond, emit) {
    this.perSecond = perSecond;
    this.emit = emit;
    this.windowStart = 0;
    this.printed = 0;
    /** @type {Rollup|null} */
    this.rollup = null;
    /** @type {NodeJS.Timeout|undefined} */
    this.timer = undefined;
  }

  /** Whether this request is printed in full; if not, it is counted. @param {JournalEntry} entry */
  full(entry) {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.flush();
      this.windowStart = now;
      this.printed = 0;
    }
    if (this.printed < this.perSecond) {
      this.printed++;
      return true;
    }
    if (this.rollup === null) {
      this.rollup = new Rollup();
      this.timer = setTimeout(() => this.flush(), this.windowStart + 1000 - now).unref();
    }
    this.rollup.add(entry);
    return false;
  }

  flush() {
    clearTimeout(this.timer);
    if (this.rollup === null) return;
    this.emit(this.rollup);
    this.rollup = null;
  }

  stop() {
    clearTimeout(this.timer);
    this.rollup = null;
  }
}
