// GET /api/resources: one entry per service instance, told apart by its full resource (every attribute),
// with what the store holds of it, when it was seen, the SDK it names and the user agents of the requests
// that carried it. Counted from the stores in slices, so a full store never stalls ingestion.
import { createHash } from 'node:crypto';
import { scanAll } from '../query/scan.js';
import { resourceView } from '../query/views.js';
import { SIGNALS_SHOWN } from '../otlp/signals.js';
import { ref } from './schemas.js';

/**
 * @typedef {{ key: string, service: string, attributes: Record<string, any>,
 *   sdk: { name: string, language: string, version: string } | null, userAgents: string[],
 *   firstSeen: string, lastSeen: string, spans: number, logs: number, points: number }} ResourceRow
 */

/** User agents listed per instance; more is a misconfiguration worth seeing, not a list worth reading. */
const MAX_USER_AGENTS = 5;

/** @param {Record<string, any>} attrs */
const identity = (attrs) =>
  JSON.stringify(
    Object.keys(attrs)
      .sort()
      .map((k) => [k, attrs[k]]),
  );

/**
 * @param {import('../store/store.js').Store} store @param {import('../store/journal.js').Journal} journal
 * @returns {Promise<ResourceRow[]>} by service, then first seen
 */
export async function resourcesStored(store, journal) {
  /** @type {Map<number, { time: number, userAgent: string }>} */
  const requests = new Map();
  await scanAll(journal.entries, (e) => requests.set(e.id, { time: Date.parse(e.time), userAgent: e.userAgent }));

  /** @type {Map<string, ResourceRow & { first: number, last: number, agents: Set<string> }>} */
  const rows = new Map();
  /** @type {WeakMap<object, string>} resources decoded once per request: one key per object */
  const keys = new WeakMap();
  // Each signal's items are counted in a field named by its short word (spans, logs, points).
  for (const { name: signal, short: field } of SIGNALS_SHOWN) {
    // Items of one request share their context: look up its row once per run of them.
    /** @type {any} */
    let ctx = null;
    /** @type {any} */
    let row = null;
    await scanAll(store.ring(signal), (entry) => {
      if (entry.ctx !== ctx) {
        ctx = entry.ctx;
        const attributes = resourceView(ctx.resource);
        let id = keys.get(ctx.resource);
        if (id === undefined) keys.set(ctx.resource, (id = identity(attributes)));
        row = rows.get(id);
        if (!row) {
          row = {
            key: createHash('sha256').update(id).digest('hex').slice(0, 16),
            service: ctx.service,
            attributes,
            sdk: sdkOf(attributes),
            userAgents: [],
            firstSeen: '',
            lastSeen: '',
            ...Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.short, 0])),
            first: Infinity,
            last: -Infinity,
            agents: new Set(),
          };
          rows.set(id, row);
        }
        const request = requests.get(ctx.requestId);
        if (request) {
          row.first = Math.min(row.first, request.time);
          row.last = Math.max(row.last, request.time);
          if (request.userAgent && row.agents.size < MAX_USER_AGENTS) row.agents.add(request.userAgent);
        }
      }
      row[field]++;
    });
  }
  return [...rows.values()]
    .map(({ first, last, agents, ...row }) => ({
      ...row,
      userAgents: [...agents],
      firstSeen: Number.isFinite(first) ? new Date(first).toISOString() : '',
      lastSeen: Number.isFinite(last) ? new Date(last).toISOString() : '',
    }))
    .sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : a.firstSeen < b.firstSeen ? -1 : 1));
}

/** @param {Record<string, any>} attrs */
function sdkOf(attrs) {
  const name = attrs['telemetry.sdk.name'];
  const language = attrs['telemetry.sdk.language'];
  const version = attrs['telemetry.sdk.version'];
  if (name === undefined && language === undefined && version === undefined) return null;
  return { name: String(name ?? ''), language: String(language ?? ''), version: String(version ?? '') };
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} deps
 */
export function registerResources(app, { store, journal }) {
  app.get(
    '/api/resources',
    {
      schema: /** @type {any} */ ({
        summary:
          'One entry per service instance (a distinct resource: every attribute) with something stored: its attributes, the SDK it names ' +
          '(telemetry.sdk.*), the user agents of the requests that carried it, when those arrived (first and last, while the journal holds them) ' +
          'and how many spans, log records and data points of it are stored',
        response: {
          200: { type: 'object', properties: { resources: { type: 'array', items: ref('ResourceInfo') } }, required: ['resources'], additionalProperties: false },
          400: ref('StatusError'),
        },
      }),
    },
    async (request, reply) => {
      const given = Object.keys(/** @type {any} */ (request.query));
      if (given.length) return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: `/api/resources takes no parameters, got ${given.join(', ')}` });
      return { resources: await resourcesStored(store, journal) };
    },
  );
}
