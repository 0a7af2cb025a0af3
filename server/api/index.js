// The admin REST API on the UI port: queries over the store and journal, stats, clearing, the OpenAPI document.
import Fastify from 'fastify';
import { rebuildRequest } from '../store/rebuild.js';
import { Waiters, WAIT_QUERY } from './wait.js';
import { spansListing, logsListing, metricsListing, requestsListing } from './listings.js';
import { registerTransfer } from './transfer.js';
import { traceSummaries } from './traces.js';
import { registerLive } from './live.js';
import { registerStatic } from './static.js';

const DEFAULT_LIMIT = 1000;

/** Query strings accept any `attr.<key>` filter besides the named ones, and every list query can wait. */
/** @param {Record<string, any>} properties */
function querySchema(properties) {
  return {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 100000, default: DEFAULT_LIMIT }, ...WAIT_QUERY, ...properties },
    additionalProperties: true,
  };
}

const str = { type: 'string' };
const anyObject = { type: 'object', additionalProperties: true };
/** @param {string} field @param {Record<string, any>} [extra] more properties of the body */
const listResponse = (field, extra = {}) => {
  const properties = { [field]: { type: 'array', items: anyObject }, total: { type: 'integer' }, ...extra };
  return {
    200: { type: 'object', properties, required: [field, 'total'] },
    408: {
      description: 'minCount was not reached in timeoutMs: what did match, and why the rest did not',
      type: 'object',
      properties: { ...properties, error: str },
      required: [field, 'total', 'error'],
    },
  };
};

/**
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
 *   faults: any, host: string, port: number, extensions?: ((app: any) => void)[], maxImportBytes?: number,
 *   printer?: import('../print/index.js').Printer }} options
 */
export async function startApi({ store, journal, faults, host, port, extensions = [], maxImportBytes = 256 * 1024 * 1024, printer }) {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    ajv: { customOptions: { coerceTypes: /** @type {'array'} */ ('array'), removeAdditional: false } },
  });

  const waiters = new Waiters({ store, journal });
  app.addHook('onClose', async () => waiters.close());

  /** @type {any[]} */
  const routes = [];
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/')) routes.push(route);
  });

  app.get('/api/health', { schema: { summary: 'Liveness', response: { 200: { type: 'object', properties: { status: str } } } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/api/spans',
    {
      schema: {
        summary: 'Stored spans, flat, in arrival order (limit keeps the newest)',
        querystring: querySchema({ service: str, name: str, traceId: str, error: { type: 'boolean' } }),
        response: listResponse('spans'),
      },
    },
    (request, reply) => waiters.respond(request, reply, spansListing(store, /** @type {any} */ (request.query))),
  );

  app.get(
    '/api/traces',
    {
      schema: {
        summary:
          'A row per stored trace: root span, services, span and error counts, start, end and duration; in the order each trace first arrived (limit keeps the newest)',
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 100000, default: DEFAULT_LIMIT },
            service: { ...str, description: 'traces with a span from this service' },
            error: { type: 'boolean', description: 'traces with an error span' },
          },
        },
        response: { 200: listResponse('traces')[200] },
      },
    },
    async (request) => traceSummaries(store, /** @type {any} */ (request.query)),
  );

  app.get(
    '/api/logs',
    {
      schema: {
        summary: 'Stored log records, flat, in arrival order (limit keeps the newest)',
        querystring: querySchema({ service: str, severity: { type: 'integer' }, body: str, traceId: str }),
        response: listResponse('logs'),
      },
    },
    (request, reply) => waiters.respond(request, reply, logsListing(store, /** @type {any} */ (request.query))),
  );

  app.get(
    '/api/metrics',
    {
      schema: {
        summary:
          'Stored metrics with their data points, grouped by service, scope, name, type and unit; minCount counts data points',
        querystring: querySchema({ service: str, name: str }),
        response: listResponse('metrics', { points: { type: 'integer', description: 'matching data points' } }),
      },
    },
    (request, reply) => waiters.respond(request, reply, metricsListing(store, /** @type {any} */ (request.query))),
  );

  app.get(
    '/api/requests',
    {
      schema: {
        summary: 'The request journal, newest first',
        querystring: querySchema({
          signal: { type: 'string', enum: ['traces', 'metrics', 'logs'] },
          transport: { type: 'string', enum: ['http', 'grpc', 'import'] },
          outcome: { type: 'string', enum: ['accepted', 'partial', 'rejected', 'faulted'] },
          fault: { type: 'string', description: 'requests a fault rule was applied to: its id, its action, or * for any' },
        }),
        response: listResponse('requests'),
      },
    },
    (request, reply) => waiters.respond(request, reply, requestsListing(journal, /** @type {any} */ (request.query))),
  );

  app.get(
    '/api/requests/:id',
    {
      schema: {
        summary: 'One journal entry with its decoded body (OTLP/JSON), rebuilt from what is still stored',
        params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      },
    },
    async (request, reply) => {
      const id = /** @type {any} */ (request.params).id;
      const entry = journal.get(id);
      if (!entry) return reply.code(404).send({ error: `no request ${id} in the journal` });
      let body = journal.unstoredBodies.get(id) ?? null;
      if (!body && entry.signal) {
        const signal = /** @type {import('../otlp/signals.js').SignalName} */ (entry.signal);
        const stored = [];
        for (const e of store.ring(signal)) if (e.ctx.requestId === id) stored.push(e);
        if (stored.length) body = rebuildRequest(signal, stored);
      }
      return { ...entry, body };
    },
  );

  app.get('/api/stats', { schema: /** @type {any} */ ({ summary: 'Items stored and evicted per signal; requests by transport and outcome; queries waiting (minCount); console output queued and dropped' }) }, async () => ({
    signals: store.stats(),
    requests: { total: journal.lastId, stored: journal.entries.size, byTransport: journal.outcomes },
    waiters: waiters.size,
    print: printer ? printer.stats() : { mode: 'none', queued: 0, dropped: 0 },
  }));

  app.delete('/api/telemetry', { schema: /** @type {any} */ ({ summary: 'Clears stored telemetry and the request journal' }) }, async (_request, reply) => {
    store.clear();
    journal.clear();
    return reply.code(204).send();
  });

  for (const extend of extensions) extend(app);
  registerTransfer(app, { store, journal, maxImportBytes });
  registerLive(app, { store, journal });
  registerStatic(app);

  app.get('/api/openapi.json', { schema: /** @type {any} */ ({ hide: true }) }, async () => openApi(routes));

  await app.listen({ host, port });
  return {
    app,
    port: /** @type {import('node:net').AddressInfo} */ (app.server.address()).port,
    close: () => app.close(),
  };
}

/** An OpenAPI 3 document built from the routes' own JSON schemas, so it cannot drift from them. */
/** @param {any[]} routes */
function openApi(routes) {
  /** @type {Record<string, any>} */
  const paths = {};
  for (const route of routes) {
    const schema = route.schema ?? {};
    if (schema.hide) continue;
    const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      /** @type {any[]} */
      const parameters = [];
      for (const [where, s] of [['query', schema.querystring], ['path', schema.params]]) {
        for (const [name, p] of Object.entries(s?.properties ?? {})) {
          parameters.push({ name, in: where, required: where === 'path', schema: p });
        }
      }
      /** @type {Record<string, any>} */
      const responses = {};
      for (const [code, body] of Object.entries(schema.response ?? { 200: anyObject })) {
        responses[code] = { description: 'response', content: { 'application/json': { schema: body } } };
      }
      (paths[path] ??= {})[method.toLowerCase()] = {
        summary: schema.summary ?? '',
        parameters,
        ...(schema.body ? { requestBody: { content: { 'application/json': { schema: schema.body } } } } : {}),
        responses,
      };
    }
  }
  return { openapi: '3.0.3', info: { title: 'otlp-mock admin API', version: '1' }, paths };
}
