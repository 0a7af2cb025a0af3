// GET /api/clients: the wire report, one row per client (user agent + service.name + service.instance.id), from
// the figures the receivers keep as each request ends (query/clients.js), so asking costs no scan of the store.
import { parseTime } from '../query/params.js';
import { MAX_CLIENTS, MAX_RECORDS } from '../query/clients.js';

const int = { type: 'integer' };
const num = { type: 'number' };
const str = { type: 'string' };
/** @param {Record<string, any>} properties */
const object = (properties) => ({ type: 'object', properties, required: Object.keys(properties) });

const clientSchema = object({
  key: { ...str, description: 'user agent, service and instance, joined by NUL characters' },
  userAgent: str,
  service: { ...str, description: "the first resource's service.name" },
  instance: { ...str, description: "the first resource's service.instance.id ('' when none)" },
  signals: { type: 'array', items: str },
  wires: { type: 'array', items: { ...str, enum: ['grpc', 'http/protobuf', 'http/json'] } },
  firstSeen: str,
  lastSeen: str,
  requests: int,
  items: { ...int, description: 'spans, data points and log records' },
  bytes: object({
    wire: { ...int, description: 'request bodies as received (gRPC: the message, before decompression)' },
    decoded: { ...int, description: 'the same bodies after decompression' },
    perItem: { ...num, description: 'wire bytes per item' },
  }),
  compression: object({
    encodings: { type: 'object', additionalProperties: int, description: 'requests by Content-Encoding / grpc-encoding (none: uncompressed)' },
    ratio: { ...num, description: 'decoded bytes per wire byte' },
  }),
  batch: object({ min: int, median: int, max: int }),
  intervalMs: { ...int, description: 'median gap between the starts of consecutive requests of one signal: the export interval' },
  concurrency: { ...int, description: 'most requests of this client in flight at once' },
  answerMs: object({ median: int, p99: int, max: int }),
  faults: { ...int, description: 'requests that failed for the client: faulted, reset, hung or abandoned' },
  retries: { ...int, description: 'requests that resent a faulted batch (same signal, transport and item count, after its answer)' },
  window: object({
    from: { ...str, description: "since, as given ('' for everything)" },
    requests: { ...int, description: 'requests of the window still held: the last figures are read from these' },
    complete: { type: 'boolean', description: `false when the client sent more than the ${MAX_RECORDS} requests kept per client since the window's start` },
  }),
  series: {
    type: 'array',
    description: "the window's requests by the second they started in",
    items: object({ t: { ...int, description: 'unix milliseconds' }, requests: int, items: int, bytes: int, decoded: int, faults: int }),
  },
});

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ clients: import('../query/clients.js').Clients }} deps
 */
export function registerClients(app, { clients }) {
  app.get(
    '/api/clients',
    {
      schema: {
        summary:
          'The wire report: one row per client (user agent + service.name + service.instance.id) with its requests, items, bytes on the wire and ' +
          'decoded, compression, batch sizes, export interval, concurrency, our answer time, faults and retries, and a series per second. ' +
          `Totals count every request since the start or the last clear; medians, concurrency and series read each client's last ${MAX_RECORDS} ` +
          `requests. At most ${MAX_CLIENTS} clients are followed: past that, the one seen least recently is dropped (evicted counts them)`,
        querystring: {
          type: 'object',
          properties: { since: { ...str, description: 'only requests that started at or after this time: ISO 8601 or unix milliseconds' } },
        },
        response: {
          200: object({
            clients: { type: 'array', items: clientSchema },
            total: int,
            evicted: { ...int, description: 'clients dropped to stay within the limit, since the start or the last clear' },
            maxClients: int,
          }),
          400: { type: 'object', properties: { statusCode: int, error: str, message: str }, required: ['message'] },
        },
      },
    },
    async (request, reply) => {
      const query = /** @type {Record<string, unknown>} */ (request.query);
      const problems = [];
      let since = -Infinity;
      for (const [name, value] of Object.entries(query)) {
        if (name !== 'since') problems.push(`unknown parameter '${name}' (/api/clients takes since)`);
        else if (Array.isArray(value)) problems.push(`parameter 'since' is given ${value.length} times; give it once`);
        else {
          try {
            since = Number(BigInt(parseTime(String(value))) / 1_000_000n);
          } catch (err) {
            problems.push(`parameter 'since' ${/** @type {Error} */ (err).message}, got ${JSON.stringify(value)}`);
          }
        }
      }
      if (problems.length) return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: problems.join('; ') });
      const rows = clients.report(since);
      return { clients: rows, total: rows.length, evicted: clients.evicted, maxClients: clients.maxClients };
    },
  );
}
