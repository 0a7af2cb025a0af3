// GET /api/operations: what each service does, by span name, over every stored span that matches: how many
// spans, how many failed, and their total and longest duration, for the Traces view's operation filter.
import { parseQuery } from './params.js';
import { allOf, spanFilters } from './filters.js';
import { scanAll } from './scan.js';

/**
 * @typedef {{ service: string, name: string, spans: number, errors: number, totalMs: number, maxMs: number }} Operation
 */

/**
 * @param {import('../store/store.js').Store} store @param {Record<string, unknown>} raw the query string
 * @returns {Promise<{ operations: Operation[], total: number }>} by service, then name
 * @throws {import('./params.js').QueryError} naming every unknown parameter and bad value
 */
export async function operationsStored(store, raw) {
  const match = allOf(spanFilters(parseQuery('operations', raw)));
  /** @type {Map<string, Operation>} */
  const ops = new Map();
  await scanAll(store.ring('traces'), (entry) => {
    const e = /** @type {import('../otlp/model.js').SpanEntry} */ (entry);
    if (!match(e)) return;
    const o = e.outline();
    const key = `${e.ctx.service}\u0000${o.name}`;
    let op = ops.get(key);
    if (!op) ops.set(key, (op = { service: e.ctx.service, name: o.name, spans: 0, errors: 0, totalMs: 0, maxMs: 0 }));
    const ms = exactMs(o.startTimeUnixNano, o.endTimeUnixNano);
    op.spans++;
    if (o.statusCode === 2) op.errors++;
    op.totalMs += ms;
    if (ms > op.maxMs) op.maxMs = ms;
  });
  const operations = [...ops.values()].sort((a, b) => cmp(a.service, b.service) || cmp(a.name, b.name));
  return { operations, total: operations.length };
}

/**
 * Milliseconds between two nanosecond timestamps, 0 when either is unset: as BigInt, since unix nanoseconds are
 * past 2^53 and their difference as floats is off by up to a few hundred nanoseconds, which a sum shows.
 * @param {string} start @param {string} end
 */
const exactMs = (start, end) => (start === '0' || end === '0' ? 0 : Number(BigInt(end) - BigInt(start)) / 1e6);

/** @param {string} a @param {string} b */
export const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
