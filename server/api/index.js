// The admin REST API on the UI port: queries over the store and journal, stats, clearing, the OpenAPI document.
import http from 'node:http';
import Fastify from 'fastify';
import { rebuildRequest } from '../store/rebuild.js';
import { Waiters } from '../query/wait.js';
import { listing, tracesById } from '../query/engine.js';
import { QueryError } from '../query/params.js';
import { traceRow, spansOf } from '../query/traces.js';
import { spanView } from '../query/views.js';
import { profileRow } from '../query/profiles.js';
import { storedServices } from '../store/stored-services.js';
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
import { registerAccess, OPEN_ROUTE, tokenPaceOf } from './access.js';
import { openFrontDoor } from './front-door.js';
import { sendAnswer, whenGone } from './answer.js';
import { addSchemas, ref, serializerFactory } from './schemas.js';
import { openApi } from './openapi.js';
import { streamView } from '../store/otap-streams.js';

/**
 * A list route's answers: a page of items of the shared schema `item` under `field`.
 * @param {string} field @param {Record<string, any>} item @param {Record<string, any>} [extra] more properties of the body
 */
const listResponse = (field, item, extra = {}) => {
  const properties = {
    [field]: { type: 'array', items: item },
    total: { type: 'integer', description: 'how many match, over everything stored' },
    nextCursor: { type: 'string', description: 'present when more match: pass it as cursor for the next page' },
    truncated: {
      type: 'string',
      description: 'present when the page holds fewer items than limit because an answer holds at most 8 MiB of items: nextCursor continues after them',
    },
    ...extra,
  };
  return {
    200: { type: 'object', properties, required: [field, 'total'], additionalProperties: false },
    400: { description: 'an unknown parameter or a bad value, named in message', ...ref('StatusError') },
    408: {
      description: 'minCount was not reached in timeoutMs: what did match, and why the rest did not',
      type: 'object',
      properties: { ...properties, error: { type: 'string' } },
      required: [field, 'total', 'error'],
      additionalProperties: false,
    },
    429: { description: 'too many queries are waiting (minCount) already', ...ref('StatusError') },
  };
};

/**
 * Stored items' views and decoded bodies are mostly strings, which JSON.stringify writes faster than
 * fast-json-stringify does (a trace of 200 spans in 0.55 ms, not 0.73; a request of 512 spans in 2.1 ms, not
 * 2.4): lists write them so (query/respond.js), and so do the routes of one trace and one request. Their
 * schemas still say what is sent: test/conformance/api-shapes.test.js holds the answers to them.
 */
const writtenWhole = () => (/** @type {unknown} */ data) => JSON.stringify(data);

/** Fastify's default: how long a connection may wait between requests. */
const KEEP_ALIVE_MS = 72_000;

/** @param {import('fastify').FastifyReply} reply @param {string} message */
function badRequest(reply, message) {
  return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message });
}

/**
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal,
 *   faults: any, host: string, port: number, extensions?: ((app: any) => void)[], maxImportBytes?: number,
 *   printer?: import('../print/index.js').Printer, access?: import('./access-check.js').AccessOptions,
 *   moreStats?: () => Record<string, unknown>, idleTimeoutMs?: number }} options
 */
export async function startApi({
  store,
  journal,
  faults,
  host,
  port,
  extensions = [],
  maxImportBytes = 256 * 1024 * 1024,
  printer,
  access = { host, allowedHosts: [], adminToken: '' },
  moreStats = () => ({}),
  idleTimeoutMs = 30_000,
}) {
  const app = Fastify({
    logger: false,
    // The server listens on nothing: its connections come through the front door (front-door.js).
    serverFactory: (handler) => {
      const server = http.createServer(handler);
      server.keepAliveTimeout = KEEP_ALIVE_MS;
      return server;
    },
    ajv: { customOptions: { coerceTypes: /** @type {'array'} */ ('array'), removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer: serializerFactory } },
  });
  addSchemas(app);
  registerAccess(app, access);

  const waiters = new Waiters({ store, journal });
  app.addHook('onClose', async () => waiters.close());

  /** @type {any[]} */
  const routes = [];
  /** Methods some open route serves: a request of any other is the admin API's whatever its path (front-door.js). */
  const openMethods = new Set();
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/')) routes.push(route);
    if (/** @type {{ access?: string }} */ (route.config)?.access === OPEN_ROUTE.access) for (const method of [route.method].flat()) openMethods.add(method);
  });

  app.get(
    '/api/health',
    {
      config: OPEN_ROUTE,
      schema: {
        summary: 'Liveness',
        response: { 200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'], additionalProperties: false } },
      },
    },
    async () => ({
      status: 'ok',
    }),
  );

  /**
   * A list route: its parameters are parsed by the query engine, which names any it does not know.
   * @param {import('../query/params.js').ListKind} kind @param {string} summary @param {Record<string, any>} item its items' schema
   * @param {Record<string, any>} [extra]
   */
  const listRoute = (kind, summary, item, extra) =>
    app.get(`/api/${kind}`, { schema: /** @type {any} */ ({ summary, listQuery: kind, response: listResponse(kind, item, extra) }) }, async (request, reply) => {
      let query;
      try {
        query = listing(kind, /** @type {Record<string, unknown>} */ (request.query), { store, journal });
      } catch (err) {
        if (err instanceof QueryError) return badRequest(reply, err.message);
        throw err;
      }
      return sendAnswer(reply, await waiters.answer(query, whenGone(request)));
    });

  listRoute('spans', 'Stored spans, flat: a page of the newest matches (by arrival, start or duration), listed oldest first unless order=desc', ref('Span'));
  listRoute(
    'traces',
    'A row per stored trace: root span, services, span and error counts, start, end and duration; a page of the newest matches (by first arrival, start, duration or span count)',
    ref('TraceSummary'),
  );
  listRoute('logs', 'Stored log records, flat: a page of the newest matches (by arrival or time), listed oldest first unless order=desc', ref('LogRecord'));
  listRoute(
    'metrics',
    'Stored metrics, one per metric of one resource instance (every resource attribute, scope, name, type and unit), with their matching data points; sorted by name, then service; minCount counts data points',
    { anyOf: [ref('Metric'), ref('MetricListItem')], description: 'points=all (the default): Metric; points=none: MetricListItem' },
    { points: { type: 'integer', description: 'matching data points' } },
  );
  listRoute(
    'profiles',
    'Stored profiles, a row per profile (service, sample type and unit, time, duration, matching samples and their value total), newest first; with samples=all each row holds its samples; minCount counts samples',
    ref('Profile'),
    { samples: { type: 'integer', description: 'matching samples' } },
  );
  listRoute(
    'requests',
    'The request journal: a page of the newest matches, newest first unless order=asc; with group=streams an OTAP stream is one row among them, and stream=<id> lists its batches',
    { anyOf: [ref('JournalEntry'), ref('OtapStreamRow')], description: 'a request (JournalEntry), or with group=streams an OTAP stream (OtapStreamRow)' },
  );

  app.get(
    '/api/profiles/aggregate',
    {
      schema: /** @type {any} */ ({
        summary:
          'The matching samples of one sample type merged: a stack tree from the roots (flame graph data: name, self, total, children) and the functions by self value (top functions), for any filter of /api/profiles',
        listQuery: 'profiles/aggregate',
        response: {
          200: ref('ProfileAggregate'),
          400: { description: 'an unknown parameter, a bad value, or samples of several types without type', ...ref('StatusError') },
        },
      }),
      // The stack tree holds itself, which fast-json-stringify writes node by node.
      serializerCompiler: writtenWhole,
    },
    async (request, reply) => {
      try {
        const query = listing('profiles/aggregate', /** @type {Record<string, unknown>} */ (request.query), { store, journal });
        return await /** @type {() => Promise<any>} */ (query.aggregate)();
      } catch (err) {
        if (err instanceof QueryError) return badRequest(reply, err.message);
        throw err;
      }
    },
  );

  app.get(
    '/api/profiles/:profileId',
    {
      schema: {
        summary:
          'One profile by its id (the newest stored, when a sender reused the id): its row with every sample (stack frames leaf first, values, timestamps, attributes, link)',
        params: { type: 'object', properties: { profileId: { type: 'string' } }, required: ['profileId'] },
        response: { 200: ref('ProfileDetail'), 400: ref('StatusError'), 404: ref('StatusError') },
      },
      serializerCompiler: writtenWhole,
    },
    async (request, reply) => {
      const id = String(/** @type {any} */ (request.params).profileId).toLowerCase();
      if (!/^[0-9a-f]{32}$/.test(id)) return badRequest(reply, `'${id}' is not a profile id: give 32 hex digits`);
      const page = await listing('profiles', { profileId: id, samples: 'all' }, { store, journal }).page();
      if (page.total === 0) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no stored profile has the id ${id}` });
      return { ...profileRow(page.items[0], { samples: 'all' }), stored: page.total };
    },
  );

  app.get(
    '/api/traces/:traceId',
    {
      schema: {
        summary: 'One trace: every stored span (oldest first) and its summary row. The id may be a prefix of at least 8 hex digits that one stored trace has',
        params: { type: 'object', properties: { traceId: { type: 'string' } }, required: ['traceId'] },
        response: { 200: ref('TraceDetail'), 400: ref('StatusError'), 404: ref('StatusError') },
      },
      serializerCompiler: writtenWhole,
    },
    async (request, reply) => {
      const id = String(/** @type {any} */ (request.params).traceId).toLowerCase();
      if (!/^[0-9a-f]{8,32}$/.test(id)) return badRequest(reply, `'${id}' is not a trace id: give 32 hex digits, or a prefix of at least 8`);
      const found = tracesById(store, id);
      if (found.length === 0) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no stored trace has the id ${id}` });
      if (found.length > 1)
        return badRequest(
          reply,
          `${found.length} stored traces start with ${id} (${found
            .slice(0, 3)
            .map((t) => t.traceId)
            .join(', ')}${found.length > 3 ? ', …' : ''}): give more digits`,
        );
      const [trace] = found;
      return { traceId: trace.traceId, spans: spansOf(trace).map(spanView), summary: traceRow(trace) };
    },
  );

  app.get(
    '/api/services',
    {
      schema: /** @type {any} */ ({
        summary: 'Every service with something stored, by name, with how many spans, log records and data points of it are stored',
        response: {
          200: { type: 'object', properties: { services: { type: 'array', items: ref('ServiceInfo') } }, required: ['services'], additionalProperties: false },
          400: ref('StatusError'),
        },
      }),
    },
    async (request, reply) => {
      if (Object.keys(/** @type {any} */ (request.query)).length)
        return badRequest(reply, `/api/services takes no parameters, got ${Object.keys(/** @type {any} */ (request.query)).join(', ')}`);
      return { services: storedServices(store).list() };
    },
  );

  app.get(
    '/api/requests/:id',
    {
      schema: {
        summary: 'One journal entry with its decoded body (OTLP/JSON), rebuilt from what is still stored',
        params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        response: { 200: ref('JournalDetail'), 400: ref('StatusError'), 404: ref('InputError') },
      },
      serializerCompiler: writtenWhole,
    },
    async (request, reply) => {
      const id = /** @type {any} */ (request.params).id;
      const entry = journal.get(id);
      if (!entry) return reply.code(404).send({ error: `no request ${id} in the journal` });
      let body = journal.unstoredBody(entry) ?? null;
      if (!body && entry.signal) {
        const signal = /** @type {import('../otlp/signals.js').SignalName} */ (entry.signal);
        const stored = [];
        for (const e of store.ring(signal)) if (e.ctx.requestId === id) stored.push(e);
        if (stored.length) body = rebuildRequest(signal, stored);
      }
      return { ...entry, body };
    },
  );

  app.get(
    '/api/requests/streams/:id',
    {
      schema: {
        summary:
          'One OTAP stream as a whole: open or closed and how it ended, its batches, items, Arrow bytes and statuses; GET /api/requests?stream=<id> pages its batches',
        params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        response: { 200: ref('OtapStream'), 400: ref('StatusError'), 404: ref('InputError') },
      },
    },
    async (request, reply) => {
      const id = /** @type {any} */ (request.params).id;
      const record = journal.streams.get(id);
      if (!record) return reply.code(404).send({ error: `no OTAP stream ${id} in the journal` });
      return streamView(record);
    },
  );

  /** GET /api/stats's answer, which the live feed sends too. */
  const statsAnswer = () => ({
    signals: store.stats(),
    requests: {
      total: journal.lastId,
      stored: journal.entries.size,
      byTransport: journal.outcomes,
      otapStreams: { opened: journal.streams.opened, open: journal.streams.openCount(), stored: journal.streams.records.size, evicted: journal.streams.evicted },
      bodies: { stored: journal.unstoredBodies.size, bytes: journal.bodyBytes, byteBudget: Number.isFinite(journal.maxBodyBytes) ? journal.maxBodyBytes : null },
    },
    waiters: waiters.size,
    print: printer ? printer.stats() : { mode: 'none', queued: 0, dropped: 0 },
    ...moreStats(),
  });

  app.get(
    '/api/stats',
    {
      schema: /** @type {any} */ ({
        summary:
          'Items stored and evicted per signal; requests by transport and outcome; queries waiting (minCount); console output queued and dropped; forward targets: requests under way, outcomes and shed requests',
        response: { 200: ref('Stats') },
      }),
    },
    async () => statsAnswer(),
  );

  app.delete(
    '/api/telemetry',
    { schema: /** @type {any} */ ({ summary: 'Clears stored telemetry and the request journal', response: { 204: { type: 'null', description: 'done' } } }) },
    async (_request, reply) => {
      store.clear();
      journal.clear();
      return reply.code(204).send();
    },
  );

  for (const extend of extensions) extend(app);
  registerTransfer(app, { store, journal, maxImportBytes });
  registerResources(app, { store, journal });
  registerPeers(app, { store });
  registerSignals(app);
  registerVerify(app, { store, journal });
  registerSnapshot(app, { store, journal });
  registerReport(app, { journal, faults });
  const liveClients = new Int32Array(new SharedArrayBuffer(4));
  const live = registerLive(app, { store, journal, counted: liveClients, stats: statsAnswer });
  registerMcp(app, { routes });
  registerStatic(app);

  app.get('/api/openapi.json', { schema: /** @type {any} */ ({ hide: true }) }, async () => openApi(routes));

  await app.ready();
  const door = await openFrontDoor(app.server, {
    host,
    port,
    access,
    tokenPace: /** @type {import('../transport/pace.js').Pacer} */ (tokenPaceOf(app)).due,
    liveClients,
    maxLiveClients: live.maxClients,
    idleTimeoutMs,
    openMethods: [...openMethods],
  });
  return {
    app,
    port: door.port,
    frontDoor: door,
    live,
    close: async () => {
      await door.stop();
      // The live feed's clients are sent their close in the app's preClose, and what is still open then is cut.
      await app.close();
      app.server.closeAllConnections();
      await door.close();
    },
  };
}
