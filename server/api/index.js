// The admin REST API on the UI port: queries over the store and journal, stats, clearing, the OpenAPI document.
import Fastify from 'fastify';
import { rebuildRequest } from '../store/rebuild.js';
import { Waiters } from '../query/wait.js';
import { listing, tracesById } from '../query/engine.js';
import { QueryError, openApiParameters } from '../query/params.js';
import { traceRow, spansOf } from '../query/traces.js';
import { spanView } from '../query/views.js';
import { servicesStored } from '../query/services.js';
import { registerTransfer } from './transfer.js';
import { registerResources } from './resources.js';
import { registerPeers } from './peers.js';
import { registerSignals } from './signals.js';
import { registerVerify } from './verify.js';
import { registerSnapshot } from './snapshot.js';
import { registerReport } from './report.js';
import { registerLive } from './live.js';
import { registerStatic } from './static.js';
import { registerMcp } from './mcp.js';
import { registerAccess, OPEN_ROUTE } from './access.js';
import { sendAnswer, whenGone } from './answer.js';

const str = { type: 'string' };
const anyObject = { type: 'object', additionalProperties: true };
const errorBody = {
  type: 'object',
  properties: { statusCode: { type: 'integer' }, error: str, message: str },
  required: ['message'],
};
/** @param {string} field @param {Record<string, any>} [extra] more properties of the body */
const listResponse = (field, extra = {}) => {
  const properties = {
    [field]: { type: 'array', items: anyObject },
    total: { type: 'integer', description: 'how many match, over everything stored' },
    nextCursor: { ...str, description: 'present when more match: pass it as cursor for the next page' },
    truncated: { ...str, description: 'present when the page holds fewer items than limit because an answer holds at most 8 MiB of items: nextCursor continues after them' },
    ...extra,
  };
  return {
    200: { type: 'object', properties, required: [field, 'total'] },
    400: { description: 'an unknown parameter or a bad value, named in message', ...errorBody },
    408: {
      description: 'minCount was not reached in timeoutMs: what did match, and why the rest did not',
      type: 'object',
      properties: { ...properties, error: str },
      required: [field, 'total', 'error'],
    },
  };
};

/** @param {import('fastify').FastifyReply} reply @param {string} message */
function badRequest(reply, message) {
  return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message });
}

/**
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
 *   faults: any, host: string, port: number, extensions?: ((app: any) => void)[], maxImportBytes?: number,
 *   printer?: import('../print/index.js').Printer, access?: import('./access.js').AccessOptions,
 *   moreStats?: () => Record<string, unknown> }} options
 */
export async function startApi({ store, journal, faults, host, port, extensions = [], maxImportBytes = 256 * 1024 * 1024, printer, access = { host, allowedHosts: [], adminToken: '' }, moreStats = () => ({}) }) {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    ajv: { customOptions: { coerceTypes: /** @type {'array'} */ ('array'), removeAdditional: false } },
  });
  registerAccess(app, access);

  const waiters = new Waiters({ store, journal });
  app.addHook('onClose', async () => waiters.close());

  /** @type {any[]} */
  const routes = [];
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/')) routes.push(route);
  });

  app.get('/api/health', { config: OPEN_ROUTE, schema: { summary: 'Liveness', response: { 200: { type: 'object', properties: { status: str } } } } }, async () => ({
    status: 'ok',
  }));

  /**
   * A list route: its parameters are parsed by the query engine, which names any it does not know.
   * @param {import('../query/params.js').ListKind} kind @param {string} summary @param {Record<string, any>} [extra]
   */
  const listRoute = (kind, summary, extra) =>
    app.get(`/api/${kind}`, { schema: /** @type {any} */ ({ summary, listQuery: kind, response: listResponse(kind, extra) }) }, async (request, reply) => {
      let query;
      try {
        query = listing(kind, /** @type {Record<string, unknown>} */ (request.query), { store, journal });
      } catch (err) {
        if (err instanceof QueryError) return badRequest(reply, err.message);
        throw err;
      }
      return sendAnswer(reply, await waiters.answer(query, whenGone(request)));
    });

  listRoute('spans', 'Stored spans, flat: a page of the newest matches (by arrival, start or duration), listed oldest first unless order=desc');
  listRoute(
    'traces',
    'A row per stored trace: root span, services, span and error counts, start, end and duration; a page of the newest matches (by first arrival, start, duration or span count)',
  );
  listRoute('logs', 'Stored log records, flat: a page of the newest matches (by arrival or time), listed oldest first unless order=desc');
  listRoute(
    'metrics',
    'Stored metrics, one per metric of one resource instance (every resource attribute, scope, name, type and unit), with their matching data points; sorted by name, then service; minCount counts data points',
    { points: { type: 'integer', description: 'matching data points' } },
  );
  listRoute('requests', 'The request journal: a page of the newest matches, newest first unless order=asc');

  app.get(
    '/api/traces/:traceId',
    {
      schema: {
        summary: 'One trace: every stored span (oldest first) and its summary row. The id may be a prefix of at least 8 hex digits that one stored trace has',
        params: { type: 'object', properties: { traceId: str }, required: ['traceId'] },
        response: { 400: errorBody, 404: errorBody },
      },
    },
    async (request, reply) => {
      const id = String(/** @type {any} */ (request.params).traceId).toLowerCase();
      if (!/^[0-9a-f]{8,32}$/.test(id)) return badRequest(reply, `'${id}' is not a trace id: give 32 hex digits, or a prefix of at least 8`);
      const found = tracesById(store, id);
      if (found.length === 0) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no stored trace has the id ${id}` });
      if (found.length > 1)
        return badRequest(reply, `${found.length} stored traces start with ${id} (${found.slice(0, 3).map((t) => t.traceId).join(', ')}${found.length > 3 ? ', …' : ''}): give more digits`);
      const [trace] = found;
      return { traceId: trace.traceId, spans: spansOf(trace).map(spanView), summary: traceRow(trace) };
    },
  );

  app.get(
    '/api/services',
    { schema: /** @type {any} */ ({ summary: 'Every service with something stored, by name, with how many spans, log records and data points of it are stored' }) },
    async (request, reply) => {
      if (Object.keys(/** @type {any} */ (request.query)).length) return badRequest(reply, `/api/services takes no parameters, got ${Object.keys(/** @type {any} */ (request.query)).join(', ')}`);
      return { services: await servicesStored(store) };
    },
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

  app.get('/api/stats', { schema: /** @type {any} */ ({ summary: 'Items stored and evicted per signal; requests by transport and outcome; queries waiting (minCount); console output queued and dropped; forward targets: requests under way, outcomes and shed requests' }) }, async () => ({
    signals: store.stats(),
    requests: {
      total: journal.lastId,
      stored: journal.entries.size,
      byTransport: journal.outcomes,
      bodies: { stored: journal.unstoredBodies.size, bytes: journal.bodyBytes, byteBudget: Number.isFinite(journal.maxBodyBytes) ? journal.maxBodyBytes : null },
    },
    waiters: waiters.size,
    print: printer ? printer.stats() : { mode: 'none', queued: 0, dropped: 0 },
    ...moreStats(),
  }));

  app.delete('/api/telemetry', { schema: /** @type {any} */ ({ summary: 'Clears stored telemetry and the request journal' }) }, async (_request, reply) => {
    store.clear();
    journal.clear();
    return reply.code(204).send();
  });

  for (const extend of extensions) extend(app);
  registerTransfer(app, { store, journal, maxImportBytes });
  registerResources(app, { store, journal });
  registerPeers(app, { store });
  registerSignals(app);
  registerVerify(app, { store, journal });
  registerSnapshot(app, { store, journal });
  registerReport(app, { journal, faults });
  registerLive(app, { store, journal });
  registerMcp(app, { routes });
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
      if (schema.listQuery) parameters.push(...openApiParameters(schema.listQuery));
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
