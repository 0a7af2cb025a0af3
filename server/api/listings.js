// The four list queries (spans, logs, metrics, requests) in the one shape the wait module answers and
// explains: how to select, how to render, which feed wakes a waiter, which filter names the source.
import { spanView, logView, metricViews } from './views.js';
import { spanPredicates, logPredicates, metricPredicates, allOf, select } from './queries.js';

/**
 * @typedef {import('./wait.js').Listing} Listing
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/journal.js').Journal} Journal
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 */

const BY_SERVICE = { key: 'service', of: (/** @type {any} */ e) => e.ctx.service, noun: 'services' };

/** @param {(query: Record<string, any>) => import('./queries.js').Predicate[]} predicates */
const single = (predicates) => (/** @type {string} */ key, /** @type {unknown} */ value) => allOf(predicates({ [key]: value }));

/**
 * Stored items listed one view each: spans and log records.
 * @param {Store} store @param {Record<string, any>} q
 * @param {{ noun: string, signal: 'traces'|'logs', field: string, predicates: (query: Record<string, any>) => import('./queries.js').Predicate[],
 *   view: (entry: any) => any, source?: () => Iterable<any> }} kind `source`: where to look, when not the whole ring
 * @returns {Listing}
 */
function itemsListing(store, q, { noun, signal, field, predicates, view, source = () => store.ring(signal) }) {
  const match = allOf(predicates(q));
  return {
    noun,
    feed: { signal },
    match,
    run: () => {
      const { total, entries } = select(source(), match, q.limit);
      return { count: total, render: () => ({ [field]: entries.map(view), total }) };
    },
    filterMatch: single(predicates),
    all: () => store.ring(signal),
    groups: BY_SERVICE,
  };
}

/** @param {Store} store @param {Record<string, any>} q @returns {Listing} */
export function spansListing(store, q) {
  return itemsListing(store, q, {
    noun: 'spans',
    signal: 'traces',
    field: 'spans',
    predicates: spanPredicates,
    view: spanView,
    source: q.traceId ? () => store.spansOfTrace(String(q.traceId).toLowerCase()) : undefined,
  });
}

/** @param {Store} store @param {Record<string, any>} q @returns {Listing} */
export function logsListing(store, q) {
  return itemsListing(store, q, { noun: 'log records', signal: 'logs', field: 'logs', predicates: logPredicates, view: logView });
}

/** Metrics are counted by data point, the unit they arrive in: minCount=3 waits for three points. */
/** @param {Store} store @param {Record<string, any>} q @returns {Listing} */
export function metricsListing(store, q) {
  const match = allOf(metricPredicates(q));
  return {
    noun: 'data points',
    feed: { signal: 'metrics' },
    match,
    run: () => {
      const { total, entries } = select(store.ring('metrics'), match, Infinity);
      return {
        count: total,
        render: () => {
          const metrics = metricViews(entries);
          return { metrics: metrics.slice(Math.max(0, metrics.length - q.limit)), total: metrics.length, points: total };
        },
      };
    },
    filterMatch: single(metricPredicates),
    all: () => store.ring('metrics'),
    groups: BY_SERVICE,
  };
}

/** @param {Record<string, any>} q @returns {((e: JournalEntry) => boolean)[]} */
function requestPredicates(q) {
  /** @type {((e: JournalEntry) => boolean)[]} */
  const out = [];
  if (q.signal) out.push((e) => e.signal === q.signal);
  if (q.transport) out.push((e) => e.transport === q.transport);
  if (q.outcome) out.push((e) => e.outcome === q.outcome);
  if (q.fault) out.push((e) => e.fault !== null && (q.fault === '*' || e.fault.id === q.fault || e.fault.action === q.fault));
  return out;
}

/** @param {Journal} journal @param {Record<string, any>} q @returns {Listing} */
export function requestsListing(journal, q) {
  const match = allOf(requestPredicates(q));
  return {
    noun: 'requests',
    feed: 'journal',
    match,
    run: () => {
      /** @type {JournalEntry[]} */
      const out = [];
      let total = 0;
      for (const entry of journal.entries.newestFirst()) {
        if (!match(entry)) continue;
        total++;
        if (out.length < q.limit) out.push(entry);
      }
      return { count: total, render: () => ({ requests: out, total }) };
    },
    filterMatch: (key, value) => allOf(requestPredicates({ [key]: value })),
    all: () => journal.entries,
    groups: { key: 'signal', of: (/** @type {JournalEntry} */ e) => e.signal ?? '(no signal)', noun: 'signals' },
  };
}
