import { startCollector } from '../../server/collector.js';
import { waitFor } from './wait.js';

/**
 * @typedef {Awaited<ReturnType<typeof startCollector>>} Collector
 * @typedef {Collector & {
 *   api: (path: string, init?: RequestInit) => Promise<any>,
 *   clear: () => Promise<void>,
 *   waitForCount: (kind: 'spans'|'logs'|'metrics'|'requests', query: string, count: number, timeoutMs?: number) => Promise<any[]>,
 * }} TestCollector
 */

/**
 * Starts a collector on free loopback ports, with helpers to read its REST API.
 * @param {Record<string, any>} [options] extra startCollector options
 * @returns {Promise<TestCollector>}
 */
export async function startTestCollector(options = {}) {
  const collector = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0, ...options });
  /** @param {string} path @param {RequestInit} [init] */
  const api = async (path, init) => {
    const res = await fetch(collector.urls.ui + path, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path} → ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return Object.assign(collector, {
    api,
    clear: async () => {
      await api('/api/telemetry', { method: 'DELETE' });
    },
    /**
     * Resolves with the items once at least `count` match; the API is the only view tests use of what was stored.
     * @param {'spans'|'logs'|'metrics'|'requests'} kind @param {string} query @param {number} count @param {number} [timeoutMs]
     */
    waitForCount: async (kind, query, count, timeoutMs = 10000) =>
      waitFor(
        async () => {
          const body = await api(`/api/${kind}${query ? `?${query}` : ''}`);
          return body[kind].length >= count ? body[kind] : null;
        },
        { timeoutMs, what: `${count} ${kind} for "${query}"` },
      ),
  });
}
