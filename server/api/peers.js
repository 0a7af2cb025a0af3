// GET /api/operations and GET /api/dependencies: what peers call a service's operation list and its service
// map, aggregated over every stored span that matches; parameters are parsed strictly by the query engine.
import { QueryError } from '../query/params.js';
import { operationsStored } from '../query/operations.js';
import { dependenciesStored, EDGE_TRACES } from '../query/dependencies.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const errorBody = {
  description: 'an unknown parameter or a bad value, named in message',
  type: 'object',
  properties: { statusCode: int, error: str, message: str },
  required: ['message'],
};

const operation = {
  type: 'object',
  properties: {
    service: str,
    name: { ...str, description: 'the span name' },
    spans: { ...int, description: 'matching spans of this name from this service' },
    errors: { ...int, description: 'of them, with status code 2 (error)' },
    totalMs: { type: 'number', description: 'their summed duration' },
    maxMs: { type: 'number', description: 'the longest of them' },
  },
  required: ['service', 'name', 'spans', 'errors', 'totalMs', 'maxMs'],
  additionalProperties: false,
};

const edge = {
  type: 'object',
  properties: {
    parent: { ...str, description: "the calling service: the parent span's" },
    child: { ...str, description: "the called service: the span's own" },
    calls: { ...int, description: 'matching spans of child whose parent is a span of parent' },
    errors: { ...int, description: 'of them, with status code 2 (error)' },
    traces: { ...int, description: 'the traces those calls are in' },
    traceIds: { type: 'array', items: str, description: `the newest ${EDGE_TRACES} of those traces, newest first` },
  },
  required: ['parent', 'child', 'calls', 'errors', 'traces', 'traceIds'],
  additionalProperties: false,
};

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store }} deps
 */
export function registerPeers(app, { store }) {
  /**
   * @param {'operations'|'dependencies'} kind @param {string} summary @param {Record<string, any>} body the 200 answer's schema
   * @param {(store: import('../store/store.js').Store, raw: Record<string, unknown>) => Promise<any>} answer
   */
  const route = (kind, summary, body, answer) =>
    app.get(`/api/${kind}`, { schema: /** @type {any} */ ({ summary, listQuery: kind, response: { 200: body, 400: errorBody } }) }, async (request, reply) => {
      try {
        return await answer(store, /** @type {Record<string, unknown>} */ (request.query));
      } catch (err) {
        if (err instanceof QueryError) return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: err.message });
        throw err;
      }
    });

  route(
    'operations',
    'Every operation (span name) of each service over the stored spans that match, by service then name: how many spans, how many failed, their total and longest duration',
    {
      type: 'object',
      properties: { operations: { type: 'array', items: operation }, total: { ...int, description: 'how many operations' } },
      required: ['operations', 'total'],
      additionalProperties: false,
    },
    operationsStored,
  );
  route(
    'dependencies',
    'The service map: an edge parent → child for each pair of services where a stored span of child (that matches the filters) has its parent span stored under parent, with calls, errors, traces and the newest trace ids',
    {
      type: 'object',
      properties: {
        edges: { type: 'array', items: edge },
        services: { type: 'array', items: str, description: 'every service at an end of an edge, by name' },
        total: { ...int, description: 'how many edges' },
      },
      required: ['edges', 'services', 'total'],
      additionalProperties: false,
    },
    dependenciesStored,
  );
}
