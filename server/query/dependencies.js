// GET /api/dependencies: the service map. Each stored span whose parent is stored under another service is one
// call along the edge parent service → its service; an edge counts its calls, the failed ones (the called span
// has status error) and the traces they are in, and names the newest of those traces.
import { parseQuery } from './params.js';
import { allOf, spanFilters } from './filters.js';
import { scanAll } from './scan.js';
import { cmp } from './operations.js';

/** @typedef {import('../otlp/model.js').SpanEntry} SpanEntry */

/** Trace ids an edge names: enough to pick from, few enough for any answer. */
export const EDGE_TRACES = 20;

/**
 * @typedef {{ parent: string, child: string, calls: number, errors: number, traces: number, traceIds: string[] }} Edge
 *   `traceIds`: the newest traces (by arrival of their calls) with a call along the edge, newest first
 */

/**
 * @param {import('../store/store.js').Store} store @param {Record<string, unknown>} raw the query string
 * @returns {Promise<{ edges: Edge[], services: string[], total: number }>} edges by parent, then child;
 *   `services`: every service at an end of an edge
 * @throws {import('./params.js').QueryError} naming every unknown parameter and bad value
 */
export async function dependenciesStored(store, raw) {
  const { service, ...q } = parseQuery('dependencies', raw);
  // The filters choose the called span; `service` matches an edge at either end.
  const match = allOf(spanFilters(/** @type {any} */ (q)));
  const spans = store.ring('traces');
  /** @type {Map<string, string>} trace id + span id → service */
  const serviceOf = new Map();
  await scanAll(spans, (entry) => {
    const e = /** @type {SpanEntry} */ (entry);
    serviceOf.set(e.traceId + e.spanId(), e.ctx.service);
  });
  /** @type {Map<string, Edge & { ids: Set<string>, newest: string[] }>} */
  const edges = new Map();
  await scanAll(spans, (entry) => {
    const e = /** @type {SpanEntry} */ (entry);
    if (e.outline().isRoot !== false || !match(e)) return;
    const traceId = /** @type {string} */ (e.traceId);
    const parent = serviceOf.get(traceId + e.item.parentSpanId);
    const child = e.ctx.service;
    if (parent === undefined || parent === child) return;
    if (service !== undefined && parent !== service && child !== service) return;
    const key = `${parent}\u0000${child}`;
    let edge = edges.get(key);
    if (!edge) edges.set(key, (edge = { parent, child, calls: 0, errors: 0, traces: 0, traceIds: [], ids: new Set(), newest: [] }));
    edge.calls++;
    if (e.outline().statusCode === 2) edge.errors++;
    edge.ids.add(traceId);
    // Spans are scanned oldest first: the last ones seen are the newest.
    const at = edge.newest.indexOf(traceId);
    if (at >= 0) edge.newest.splice(at, 1);
    edge.newest.push(traceId);
    if (edge.newest.length > EDGE_TRACES) edge.newest.shift();
  });
  const list = [...edges.values()]
    .map(({ ids, newest, ...edge }) => ({ ...edge, traces: ids.size, traceIds: newest.reverse() }))
    .sort((a, b) => cmp(a.parent, b.parent) || cmp(a.child, b.child));
  const services = [...new Set(list.flatMap((e) => [e.parent, e.child]))].sort(cmp);
  return { edges: list, services, total: list.length };
}
