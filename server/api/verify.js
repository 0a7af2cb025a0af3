// POST /api/verify: a list of expectations, checked (and waited for) on the server.
import { parsePlan, verify, VerifyError } from '../verify/verify.js';

const selectorDoc =
  'where: the filters of GET /api/<signal> ({"service": "checkout", "name": "POST /pay", "attr.http.route": "/pay"}); ' +
  'attributes: {"key": value} or {"key": {"equals"|"notEquals"|"contains"|"matches"|"exists"|"greaterThan"|"lessThan"|"atLeast"|"atMost": ...}}; ' +
  'spans also: kind (server, client, ...), status (unset, ok, error), root (true/false), childOf and descendantOf (a selector of the parent or ancestor)';

const body = {
  type: 'object',
  required: ['expectations'],
  properties: {
    timeoutMs: { type: 'integer', minimum: 0, description: 'wait up to this long for every expectation to hold (default 0: check once)' },
    expectations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['signal'],
        description: selectorDoc,
        properties: {
          signal: { type: 'string', enum: ['spans', 'logs', 'metrics'] },
          name: { type: 'string', description: 'what the message calls this expectation' },
          where: { type: 'object', additionalProperties: true },
          count: {
            description: 'default {"atLeast": 1}; a number n means {"exactly": n}',
            anyOf: [
              { type: 'integer', minimum: 0 },
              { type: 'object', properties: { exactly: { type: 'integer' }, atLeast: { type: 'integer' }, atMost: { type: 'integer' }, none: { type: 'boolean' } } },
            ],
          },
        },
        additionalProperties: true,
      },
    },
    nothingElse: {
      description: 'services whose items (of the signals the expectations name) must each match some expectation',
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    },
  },
};

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} sources
 */
export function registerVerify(app, sources) {
  app.post(
    '/api/verify',
    {
      schema: /** @type {any} */ ({
        summary:
          'Checks expectations over stored spans, logs and data points, waiting up to timeoutMs until all hold. Always 200: ok says whether they hold, ' +
          'message says why not as a test failure would (per expectation: met or not, the nearest candidates and what differs, what else arrived)',
        body,
        response: { 400: { type: 'object', properties: { statusCode: { type: 'integer' }, error: { type: 'string' }, message: { type: 'string' }, path: { type: 'string' } } } },
      }),
      // The plan's own parser names the field that is wrong, with the query engine's words for filters.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      let plan;
      try {
        plan = parsePlan(request.body, sources);
      } catch (err) {
        if (!(err instanceof VerifyError)) throw err;
        return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: err.message, path: err.path });
      }
      const socket = request.raw.socket;
      const result = await verify(plan, sources.store, {
        onGone: (stop) => {
          if (socket.destroyed) setImmediate(stop);
          socket.on('close', stop);
          return () => socket.off('close', stop);
        },
      });
      if (!result) return reply.hijack();
      return result;
    },
  );
}
