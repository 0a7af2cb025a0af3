import { COMPRESSIONS, ENCODINGS, ForwardTargetError } from '../forward/target.js';
import { signalWords } from '../otlp/signals.js';
import { addSchemas, ref } from './schemas.js';

/**
 * @typedef {import('fastify').FastifyInstance} FastifyInstance
 * @typedef {import('../forward/forwarder.js').Forwarder} Forwarder
 */

const targetInput = {
  type: 'object',
  description: "A forward target. The first target is the primary (its answer is the client's answer); the others are tees.",
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      description: `grpc://host:port (grpcs:// with TLS) for OTLP/gRPC; http://host:port[/base] (https://) for OTLP/HTTP, to which ${signalWords('and', (s) => s.httpPath)} are appended`,
    },
    encoding: { type: 'string', enum: ENCODINGS, description: 'OTLP/HTTP targets: received (default: as the client sent it), protobuf or json; gRPC is protobuf' },
    compression: { type: 'string', enum: COMPRESSIONS, description: 'compression of the forwarded requests (default none)' },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: "headers (gRPC metadata) set on every forwarded request; an empty value removes the client's header of that name",
    },
  },
};

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };
const noContent = { type: 'null', description: 'done' };

/**
 * Forward target routes under /api/forward.
 * @param {FastifyInstance} app @param {Forwarder} forwarder
 */
export function registerForwardRoutes(app, forwarder) {
  addSchemas(app);
  app.get(
    '/api/forward',
    {
      schema: {
        tags: ['forward'],
        summary: 'Forward targets, primary first, with their calls under way and outcomes; the limits',
        response: { 200: ref('ForwardList') },
      },
    },
    async () => ({
      targets: forwarder.list(),
      timeoutMs: forwarder.timeoutMs,
      maxInflight: forwarder.maxInflight,
      maxInflightBytes: forwarder.maxInflightBytes,
    }),
  );

  app.post(
    '/api/forward',
    {
      schema: {
        tags: ['forward'],
        summary: 'Add a forward target after those present (the first is the primary)',
        body: targetInput,
        response: { 201: ref('ForwardTarget'), 400: ref('InputError') },
      },
      // The target model validates and names the bad field the same way as --forward does.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const body = request.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        return reply.code(400).send({ error: 'the body must be a JSON object such as {"url":"grpc://127.0.0.1:4317"}', field: 'target' });
      try {
        const target = forwarder.add(body);
        return reply.code(201).header('location', `/api/forward/${target.id}`).send(target);
      } catch (err) {
        if (!(err instanceof ForwardTargetError)) throw err;
        return reply.code(400).send({ error: err.message, field: err.field });
      }
    },
  );

  app.get(
    '/api/forward/:id',
    { schema: { tags: ['forward'], summary: 'One forward target', params: idParams, response: { 200: ref('ForwardTarget'), 404: ref('InputError') } } },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      const target = forwarder.get(id);
      if (!target) return reply.code(404).send({ error: `no forward target ${id}` });
      return target;
    },
  );

  app.delete(
    '/api/forward/:id',
    {
      schema: { tags: ['forward'], summary: 'Remove one forward target; calls under way finish', params: idParams, response: { 204: noContent, 404: ref('InputError') } },
    },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      if (!forwarder.remove(id)) return reply.code(404).send({ error: `no forward target ${id}` });
      return reply.code(204).send();
    },
  );

  app.delete(
    '/api/forward',
    { schema: { tags: ['forward'], summary: 'Remove every forward target: requests are no longer forwarded', response: { 204: noContent } } },
    async (_request, reply) => {
      forwarder.clear();
      return reply.code(204).send();
    },
  );
}
