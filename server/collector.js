// The composition root: builds the store, journal, fault rules and the three listeners, and stops them.
import { Store } from './store/store.js';
import { Journal } from './store/journal.js';
import { FaultRules } from './faults/rules.js';
import { storedServices } from './store/stored-services.js';
import { Receiver } from './transport/receive.js';
import { startHttpReceiver } from './transport/http.js';
import { startGrpcReceiver } from './transport/grpc.js';
import { startApi } from './api/index.js';
import { registerFaultRoutes } from './api/faults.js';
import { DEFAULTS } from './config.js';
import { importFile } from './transfer/import.js';
import { startPrinter } from './print/index.js';
import { OtlpMock } from './client/index.js';
import { limitConnections } from './transport/limits.js';
import { Forwarder } from './forward/forwarder.js';
import { parseHeaderPairs } from './forward/target.js';
import { registerForwardRoutes } from './api/forward.js';
import { Clients } from './query/clients.js';
import { registerClients } from './api/clients.js';
import { noteArrival } from './turns.js';
import { allowKeptBytes } from './otlp/kept-bytes.js';
import { SIGNAL_LIST } from './otlp/signals.js';

/**
 * @typedef {typeof DEFAULTS & { faults?: unknown[], random?: () => number, printTo?: NodeJS.WritableStream }} CollectorOptions
 *   `print` writes to `printTo` (default stdout).
 * @typedef {{ urls: { grpc: string, http: string, ui: string }, store: Store, journal: Journal,
 *   faults: FaultRules, forwarder: Forwarder, clients: Clients, client: OtlpMock, imported: ({ file: string } & ImportSummary)[],
 *   stop: () => Promise<void> }} Collector
 * @typedef {ReturnType<typeof import('./transfer/import.js').storeImported>} ImportSummary
 */

/** @param {string} host @param {number} port */
function url(host, port) {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** @typedef {'grpcPort'|'httpPort'|'uiPort'} ListenerOption */

/** @type {Record<ListenerOption, string>} */
const LISTENER_NAMES = { grpcPort: 'OTLP/gRPC', httpPort: 'OTLP/HTTP', uiPort: 'web UI and API' };

/** Why a listener could not open, by system error code: problems of the port, then of the address. */
const PORT_REASONS = /** @type {Record<string, string>} */ ({
  EADDRINUSE: 'is already in use, probably by another otlp-mock or collector',
  EACCES: 'needs privileges this user does not have (ports below 1024 usually do)',
});
const HOST_REASONS = /** @type {Record<string, string>} */ ({
  EADDRNOTAVAIL: 'is not an address of this machine',
  ENOTFOUND: 'does not resolve to an address',
});

/**
 * A listener that could not start, said in one sentence. `option` names the port's option, and `code` tells a
 * caller whether to change that port (EADDRINUSE, EACCES) or the host (EADDRNOTAVAIL, ENOTFOUND).
 */
export class ListenError extends Error {
  /** @param {ListenerOption} option @param {string} host @param {number} port @param {unknown} cause */
  constructor(option, host, port, cause) {
    const text = String(/** @type {any} */ (cause)?.message ?? cause);
    /** @type {string|undefined} */
    const code = /** @type {any} */ (cause)?.code;
    const what = LISTENER_NAMES[option];
    let message = `port ${port} (${what}) on ${host} cannot be opened: ${text}`;
    if (code && PORT_REASONS[code]) message = `port ${port} (${what}) on ${host} ${PORT_REASONS[code]}`;
    else if (code && HOST_REASONS[code]) message = `host ${host} (${what}, port ${port}) ${HOST_REASONS[code]}`;
    super(message, { cause });
    this.option = option;
    this.host = host;
    this.port = port;
    this.code = code;
  }

  /** Whether the address, not the port, is what to change. */
  get hostProblem() {
    return Boolean(this.code && HOST_REASONS[this.code]);
  }
}

/**
 * @template T
 * @param {ListenerOption} option @param {string} host @param {number} port @param {() => Promise<T>} start
 * @returns {Promise<T>}
 */
async function listen(option, host, port, start) {
  try {
    return await start();
  } catch (err) {
    const listenError = new ListenError(option, host, port, err);
    // Anything else (a bug in building a server) keeps its own stack.
    throw listenError.code ? listenError : err;
  }
}

/**
 * Starts a collector. Every instance owns all of its state, so several can run in one process.
 * @param {Partial<CollectorOptions>} [options]
 * @returns {Promise<Collector>}
 */
export async function startCollector(options = {}) {
  const o = { ...DEFAULTS, ...options };
  // The store reads each signal's cap and budget from the options the signal table names.
  const store = new Store(o);
  allowKeptBytes(SIGNAL_LIST.reduce((sum, signal) => sum + (o[signal.budget.bytesOption] ?? Infinity), 0));
  // Sliced work (decoding, queries) takes only its share of the loop while telemetry arrives.
  store.subscribe((batch) => {
    if (batch.entries.length) noteArrival();
  });
  // Services are given their colours in order of arrival, and their items counted, from the first item on.
  storedServices(store);
  const journal = new Journal({ maxRequests: o.maxRequests, maxBodyBytes: o.maxJournalBytes });
  const faults = new FaultRules({ random: options.random, hangLimitMs: o.hangLimitMs, maxRules: o.maxFaults, retryWindowMs: o.retryWindowMs });
  for (const rule of options.faults ?? []) faults.add(rule);
  const receiver = new Receiver({
    store,
    journal,
    faults,
    hangLimitMs: o.hangLimitMs,
    maxRequestBytes: o.maxRequestBytes,
    maxInflightBytes: o.maxInflightBytes,
  });
  const clients = new Clients();
  receiver.clients = clients;
  journal.onCleared(() => clients.clear());
  const forwarder = new Forwarder({
    faults,
    timeoutMs: o.forwardTimeoutMs,
    maxInflight: o.forwardMaxInflight,
    maxInflightBytes: o.forwardMaxInflightBytes,
    maxRequestBytes: o.maxRequestBytes,
    // The receive path asks one question when nothing is forwarded: is there a forwarder?
    onChange: (active) => {
      receiver.forwarder = active ? forwarder : null;
    },
  });
  const forwardHeaders = parseHeaderPairs(o.forwardHeaders);
  for (const target of o.forward)
    forwarder.add(typeof target === 'string' ? { url: target, encoding: o.forwardEncoding, compression: o.forwardCompression, headers: forwardHeaders } : target);
  const limits = { idleTimeoutMs: o.idleTimeoutMs, maxPipelined: o.maxPipelined };
  // Imported data is in place before the first listener opens, so no query can see a half-loaded store.
  const imported = [];
  for (const file of o.importFiles) imported.push({ file, ...(await importFile({ store, journal }, file)) });
  const printer = startPrinter({ mode: o.print, store, journal, out: options.printTo });

  /** @type {{ close: () => Promise<unknown> | void }[]} */
  const started = [{ close: () => printer.stop() }, { close: () => forwarder.close() }];
  try {
    // The API first: building it is most of starting (its routes' serializers and validators), and telemetry that
    // can arrive only once everything is up finds every port answering and costs nothing of that work.
    const api = await listen('uiPort', o.host, o.uiPort, () =>
      startApi({
        store,
        journal,
        faults,
        host: o.host,
        port: o.uiPort,
        extensions: [(app) => registerFaultRoutes(app, faults), (app) => registerForwardRoutes(app, forwarder), (app) => registerClients(app, { clients })],
        moreStats: () => ({ forward: forwarder.stats() }),
        printer,
        access: { host: o.host, allowedHosts: o.allowedHosts, adminToken: o.adminToken, adminRate: o.adminRate, adminConcurrency: o.adminConcurrency },
        idleTimeoutMs: o.idleTimeoutMs,
      }),
    );
    started.push(api);
    limitConnections(api.app.server, limits);
    const grpc = await listen('grpcPort', o.host, o.grpcPort, () => startGrpcReceiver({ receiver, host: o.host, port: o.grpcPort, limits }));
    started.push(grpc);
    const http = await listen('httpPort', o.host, o.httpPort, () => startHttpReceiver({ receiver, host: o.host, port: o.httpPort, corsOrigins: o.corsOrigins, limits }));
    started.push(http);
    const urls = { grpc: url(o.host, grpc.port), http: url(o.host, http.port), ui: url(o.host, api.port) };
    return {
      urls,
      store,
      journal,
      faults,
      forwarder,
      clients,
      client: new OtlpMock(urls.ui, { token: o.adminToken || undefined }),
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
