// GET /api/traces: a row per stored trace, from the store's trace index. Spans stored unbuilt are read for
// the few fields a row needs, so summarising every stored trace stays cheap.

/**
 * @typedef {object} TraceSummary
 * @property {string} traceId
 * @property {string} rootName the root span's name, or the first received span's when the root is missing
 * @property {string} rootService the service of that span
 * @property {boolean} hasRoot whether a span without a parent is stored
 * @property {string[]} services every service with a span in the trace, in order of arrival
 * @property {number} spanCount
 * @property {number} errorCount spans with status code 2
 * @property {string} startTimeUnixNano the earliest start, "0" when no span has one
 * @property {string} endTimeUnixNano the latest end
 * @property {string} durationNanos
 */

import { compareNanos, durationNanos } from '../otlp/model.js';

/**
 * @param {import('../store/store.js').Store} store
 * @param {{ service?: string, error?: boolean, limit: number }} query
 * @returns {{ traces: TraceSummary[], total: number }} in the order each trace's first span arrived; limit keeps the newest
 */
export function traceSummaries(store, { service, error, limit }) {
  /** @type {TraceSummary[]} */
  const rows = [];
  for (const [traceId, entries] of store.eachTrace()) {
    if (service && !entries.some((e) => e.ctx.service === service)) continue;
    const services = new Set();
    /** @type {{ entry: import('../store/store.js').Entry, name: string }|null} */
    let root = null;
    let errorCount = 0;
    let start = '0';
    let end = '0';
    for (const entry of entries) {
      services.add(entry.ctx.service);
      const span = entry.outline();
      if (span.statusCode === 2) errorCount++;
      if (span.isRoot && root === null) root = { entry, name: span.name };
      if (span.startTimeUnixNano !== '0' && (start === '0' || compareNanos(span.startTimeUnixNano, start) < 0)) start = span.startTimeUnixNano;
      if (compareNanos(end, span.endTimeUnixNano) < 0) end = span.endTimeUnixNano;
    }
    if (error && errorCount === 0) continue;
    const named = root ?? { entry: entries[0], name: entries[0].outline().name };
    rows.push({
      traceId,
      rootName: named.name,
      rootService: named.entry.ctx.service,
      hasRoot: root !== null,
      services: [...services],
      spanCount: entries.length,
      errorCount,
      startTimeUnixNano: start,
      endTimeUnixNano: end,
      durationNanos: durationNanos(start, end),
    });
  }
  const total = rows.length;
  return { traces: limit < total ? rows.slice(total - limit) : rows, total };
}
