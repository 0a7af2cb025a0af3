// The composition root: builds the store, journal, fault rules and the three listeners, and stops them.
import { Store } from './store/store.js';
import { Journal } from './store/journal.js';
import { FaultRules } from './faults/rules.js';
import { Receiver } from './transport/receive.js';
import { startHttpReceiver } from './transport/http.js';
import { startGrpcReceiver } from './transport/grpc.js';
import { startApi } from './api/index.js';
import { registerFaultRoutes } from './api/faults.js';
import { DEFAULTS } from './config.js';
import { importFile } from './transfer/import.js';
import { startPrinter } from './print/index.js';
import { OtlpMock } from './client/index.js';

/**
 * @typedef {typeof DEFAULTS & { faults?: unknown[], random?: () => number, printTo?: NodeJS.WritableStream }} CollectorOptions
 *   `print` writes to `printTo` (default stdout).
 * @typedef {{ urls: { grpc: string, http: string, ui: string }, store: Store, journal: Journal,
 *   faults: FaultRules, client: OtlpMock, imported: ({ file: string } & ImportSummary)[], stop: () => Promise<void> }} Collector
 * @typedef {ReturnType<typeof import('./transfer/import.js').storeImported>} ImportSummary
 */

/** @param {string} host @param {number} port */
function url(host, port) {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/**
 * Starts a collector. Every instance owns all of its state, so several can run in one process.
 * @param {Partial<CollectorOptions>} [options]
 * @returns {Promise<Collector>}
 */
export async function startCollector(options = {}) {
  const o = { ...DEFAULTS, ...options };
  const store = new Store({ maxSpans: o.maxSpans, maxLogs: o.maxLogs, maxPoints: o.maxPoints });
  const journal = new Journal({ maxRequests: o.maxRequests });
  const faults = new FaultRules({ random: options.random, hangLimitMs: o.hangLimitMs });
  for (const rule of options.faults ?? []) faults.add(rule);
  const receiver = new Receiver({ store, journal, faults, hangLimitMs: o.hangLimitMs, maxRequestBytes: o.maxRequestBytes });
  // Imported data is in place before the first listener opens, so no query can see a half-loaded store.
  const imported = [];
  for (const file of o.importFiles) imported.push({ file, ...(await importFile({ store, journal }, file)) });
  const printer = startPrinter({ mode: o.print, store, journal, out: options.printTo });

  /** @type {{ close: () => Promise<unknown> | void }[]} */
  const started = [{ close: () => printer.stop() }];
  try {
    const grpc = await startGrpcReceiver({ receiver, host: o.host, port: o.grpcPort });
    started.push(grpc);
    const http = await startHttpReceiver({ receiver, host: o.host, port: o.httpPort, corsOrigins: o.corsOrigins });
    started.push(http);
    const api = await startApi({
      store,
      journal,
      faults,
      host: o.host,
      port: o.uiPort,
      extensions: [(app) => registerFaultRoutes(app, faults)],
      printer,
    });
    started.push(api);
    const urls = { grpc: url(o.host, grpc.port), http: url(o.host, http.port), ui: url(o.host, api.port) };
    return {
      urls,
      store,
      journal,
      faults,
      client: new OtlpMock(urls.ui),
      imported,
      stop: async () => {
        await Promise.all(started.map((s) => s.close()));
      },
    };
  } catch (err) {
    await Promise.allSettled(started.map((s) => s.close()));
    throw err;
  }
}
