// POST /api/verify: a list of expectations, checked (and waited for) on the server.
import { parsePlan, verify, VerifyError, MAX_EXPECTATIONS } from '../verify/verify.js';
import { ITEM_KINDS, MAX_CRITERIA } from '../verify/select.js';
import { MAX_PATTERN_CHARS } from '../query/pattern.js';
import { whenGone } from './answer.js';
import { ref } from './schemas.js';

/** The largest verify body read. */
export const MAX_VERIFY_BYTES = 512 * 1024;
/** Requests that wait (timeoutMs > 0) at once: each re-reads the store a few times a second while it waits. */
export const MAX_WAITING_VERIFIES = 64;

const selectorDoc =
  'where: the filters of GET /api/<signal> ({"service": "checkout", "name": "POST /pay", "attr.http.route": "/pay"}); ' +
  'attributes: {"key": value} or {"key": {"equals"|"notEquals"|"contains"|"matches"|"exists"|"greaterThan"|"lessThan"|"atLeast"|"atMost": ...}}; ' +
  `matches takes a regular expression in RE2 syntax (no backreferences or lookaround; at most ${MAX_PATTERN_CHARS} characters), run in linear time on values short enough for it; ` +
  'spans also: kind (server, client, ...), status (unset, ok, error), root (true/false), childOf and descendantOf (a selector of the parent or ancestor)';

const body = {
  type: 'object',
  required: ['expectations'],
  properties: {
    timeoutMs: { type: 'integer', minimum: 0, description: 'wait up to this long for every expectation to hold (default 0: check once)' },
    expectations: {
      type: 'array',
      maxItems: MAX_EXPECTATIONS,
      description: `at most ${MAX_EXPECTATIONS}, with at most ${MAX_CRITERIA} criteria in all`,
      items: {
        type: 'object',
        required: ['signal'],
        description: selectorDoc,
        properties: {
          signal: { type: 'string', enum: ITEM_KINDS },
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
  let waiting = 0;
  app.post(
    '/api/verify',
    {
      schema: /** @type {any} */ ({
        summary:
          'Checks expectations over stored spans, logs and data points, waiting up to timeoutMs until all hold. Always 200: ok says whether they hold, ' +
          'message says why not as a test failure would (per expectation: met or not, the nearest candidates and what differs, what else arrived)',
        body,
        response: { 200: ref('VerifyResult'), 400: ref('StatusError'), 429: ref('StatusError') },
      }),
      // The plan's own parser names the field that is wrong, with the query engine's words for filters.
      validatorCompiler: () => () => true,
      // A plan at its limits is far smaller; a larger body is refused before it is parsed, and its connection
      // closed so that the rest of it is not read either (access.js: tooLargeAnswered).
      bodyLimit: MAX_VERIFY_BYTES,
    },
    async (request, reply) => {
      let plan;
      try {
        plan = await parsePlan(request.body, sources);
      } catch (err) {
        if (!(err instanceof VerifyError)) throw err;
        return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: err.message, path: err.path });
      }
      if (plan.timeoutMs > 0 && waiting >= MAX_WAITING_VERIFIES)
        return reply.code(429).send({
          statusCode: 429,
          error: 'Too Many Requests',
          message: `${waiting} verify requests are waiting already, the limit (${MAX_WAITING_VERIFIES}): retry when one has answered, or check once with timeoutMs 0`,
        });
      if (plan.timeoutMs > 0) waiting++;
      try {
        const result = await verify(plan, sources.store, { onGone: whenGone(request) });
        if (!result) return reply.hijack();
        return result;
      } finally {
        if (plan.timeoutMs > 0) waiting--;
      }
    },
  );
}
