import { ACTION_NAMES, GRPC_ERROR_NAMES } from '../faults/actions.js';
import { FAULT_COUNTS, FAULT_SIDES, FAULT_SIGNALS, FAULT_TRANSPORTS, FaultRuleError } from '../faults/rules.js';
import { addSchemas, ref } from './schemas.js';

/**
 * @typedef {import('fastify').FastifyInstance} FastifyInstance
 * @typedef {import('../faults/rules.js').FaultRules} FaultRules
 */

const ruleInput = {
  type: 'object',
  description:
    'A fault rule. Besides action and the filters, each action takes only its own options: ' +
    'unavailable, throttle: retryAfterMs, httpStatus, grpcCode, message; reject: httpStatus, grpcCode, message; ' +
    'status: httpStatus and/or grpcCode, retryAfterMs, message; partial: rejectItems, message; delay: delayMs. ' +
    'A number option is a JSON number or left out for its default: null, a string or anything else is a 400 that names the option and what was given.',
  required: ['action'],
  properties: {
    action: { type: 'string', enum: ACTION_NAMES },
    side: {
      type: ['string', 'null'],
      enum: [...FAULT_SIDES, null],
      description:
        "client (default): the answer to the request that reached otlp-mock; upstream: otlp-mock's call to a forward target, failed, delayed or dropped as if the target did it (docs/forward.md)",
    },
    signals: {
      description: 'signals the rule applies to (default all)',
      anyOf: [
        { type: 'string', enum: FAULT_SIGNALS },
        { type: 'array', minItems: 1, items: { type: 'string', enum: FAULT_SIGNALS } },
      ],
    },
    transports: {
      description: "transports the rule applies to (default both): the client's for side client, the forward target's for side upstream",
      anyOf: [
        { type: 'string', enum: FAULT_TRANSPORTS },
        { type: 'array', minItems: 1, items: { type: 'string', enum: FAULT_TRANSPORTS } },
      ],
    },
    match: ref('FaultMatch'),
    times: { type: 'integer', minimum: 1, description: 'fault the first N matching requests, then the rule is spent (default unlimited)' },
    after: { type: 'integer', minimum: 0, description: 'let the first N matching requests through (default 0)' },
    probability: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: 'chance that a matching request is faulted (default 1)' },
    per: {
      type: 'string',
      enum: FAULT_COUNTS,
      description:
        "side upstream only: what times, after and probability count: request (default; a client request's calls take the rule once, primary first) or call (each call to each forward target)",
    },
    retryAfterMs: { type: 'integer', minimum: 0, description: 'Retry-After (HTTP, whole seconds rounded up) and RetryInfo (gRPC); throttle defaults to 1000' },
    delayMs: { type: 'integer', minimum: 0, description: 'delay: how long to hold the answer (default 1000)' },
    httpStatus: { type: 'integer', minimum: 400, maximum: 599 },
    grpcCode: {
      description: 'gRPC status code, 1-16 or its name',
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 16 },
        { type: 'string', enum: GRPC_ERROR_NAMES },
      ],
    },
    rejectItems: { type: 'integer', minimum: 0, description: 'partial: items reported rejected (default 1)' },
    message: {
      type: ['string', 'null'],
      description: 'the error or partial-success message, at most 2048 characters; a lone surrogate, which no wire carries, is kept as U+FFFD',
    },
  },
};

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };
const noContent = { type: 'null', description: 'done' };

/**
 * Fault rule routes under /api/faults.
 * @param {FastifyInstance} app @param {FaultRules} faults
 */
export function registerFaultRoutes(app, faults) {
  addSchemas(app);
  app.post(
    '/api/faults',
    {
      schema: {
        tags: ['faults'],
        summary: 'Add a fault rule; it is checked after the rules already present',
        body: ruleInput,
        response: { 201: ref('FaultRule'), 400: ref('InputError') },
      },
      // The rule model validates (and names the bad field) the same way for the API, --fault and
      // --faults-file; Ajv would coerce types ("2" → 2, "traces" → ["traces"]) that the others refuse.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      try {
        const rule = faults.add(request.body);
        return reply.code(201).header('location', `/api/faults/${rule.id}`).send(rule);
      } catch (err) {
        if (!(err instanceof FaultRuleError)) throw err;
        return reply.code(400).send({ error: err.message, field: err.field });
      }
    },
  );

  app.get(
    '/api/faults',
    {
      schema: {
        tags: ['faults'],
        summary: 'Fault rules in checking order, with their counters',
        response: { 200: { type: 'object', required: ['faults'], properties: { faults: { type: 'array', items: ref('FaultRule') } }, additionalProperties: false } },
      },
    },
    async () => ({ faults: faults.list() }),
  );

  app.get(
    '/api/faults/:id',
    { schema: { tags: ['faults'], summary: 'One fault rule', params: idParams, response: { 200: ref('FaultRule'), 404: ref('InputError') } } },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      const rule = faults.get(id);
      if (!rule) return reply.code(404).send({ error: `no fault rule ${id}` });
      return rule;
    },
  );

  app.delete(
    '/api/faults/:id',
    { schema: { tags: ['faults'], summary: 'Remove one fault rule', params: idParams, response: { 204: noContent, 404: ref('InputError') } } },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      if (!faults.remove(id)) return reply.code(404).send({ error: `no fault rule ${id}` });
      return reply.code(204).send();
    },
  );

  app.delete('/api/faults', { schema: { tags: ['faults'], summary: 'Remove every fault rule', response: { 204: noContent } } }, async (_request, reply) => {
    faults.clear();
    return reply.code(204).send();
  });
}
