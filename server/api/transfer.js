// GET /api/export and POST /api/import: stored telemetry out and back in as OTLP/JSON lines.
import { Readable } from 'node:stream';
import { exportLines } from '../transfer/export.js';
import { parseLines, storeImported, ImportError } from '../transfer/import.js';
import { Slicer } from '../query/scan.js';
import { perSignal, SIGNAL_NAMES } from '../otlp/signals.js';
import { ref } from './schemas.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal, maxImportBytes: number }} deps
 */
export function registerTransfer(app, { store, journal, maxImportBytes }) {
  app.get(
    '/api/export',
    {
      schema: {
        summary:
          'Stored telemetry as OTLP/JSON lines (application/x-ndjson): one Export*ServiceRequest per received request, ' +
          'in arrival order; POST each line to /v1/<signal> of any collector, or all of them to /api/import',
        querystring: {
          type: 'object',
          properties: { signal: { type: 'string', enum: SIGNAL_NAMES, description: 'one signal (default all three)' } },
        },
        response: { 200: { description: 'one OTLP/JSON request a line', content: { 'application/x-ndjson': { schema: { type: 'string' } } } } },
      },
    },
    async (request, reply) => {
      const { signal } = /** @type {{ signal?: import('../otlp/signals.js').SignalName }} */ (request.query);
      const lines = exportLines(store, signal ? [signal] : SIGNAL_NAMES, new Slicer(1));
      reply.header('content-type', 'application/x-ndjson; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="otlp-mock-${signal ?? 'all'}.jsonl"`);
      // One line is a whole request rebuilt: build them one at a time, as the socket takes them.
      return reply.send(Readable.from(lines, { highWaterMark: 1 }));
    },
  );

  app.register(async (scope) => {
    // Lines are not one JSON document: take the body as text whatever its content type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: maxImportBytes }, (_request, body, done) => done(null, body));
    scope.post(
      '/api/import',
      {
        bodyLimit: maxImportBytes,
        schema: {
          summary:
            'Stores OTLP/JSON lines (as /api/export writes them) as if received, with journal entries of transport "import"; ' +
            'nothing is stored when a line is invalid',
          querystring: {
            type: 'object',
            properties: { signal: { type: 'string', enum: SIGNAL_NAMES, description: 'the signal of every line, when lines lack their root field' } },
          },
          response: {
            200: {
              type: 'object',
              properties: {
                requests: { type: 'integer' },
                items: { type: 'object', properties: perSignal(() => ({ type: 'integer' })), required: SIGNAL_NAMES, additionalProperties: false },
              },
              required: ['requests', 'items'],
              additionalProperties: false,
            },
            400: ref('InputError'),
          },
        },
      },
      async (request, reply) => {
        const { signal } = /** @type {{ signal?: string }} */ (request.query);
        try {
          const requests = parseLines(String(request.body ?? ''), { signal });
          return storeImported({ store, journal }, requests, {
            path: '/api/import',
            userAgent: String(request.headers['user-agent'] ?? ''),
          });
        } catch (err) {
          if (!(err instanceof ImportError)) throw err;
          return reply.code(400).send({ error: err.message, ...(err.line ? { line: err.line } : {}) });
        }
      },
    );
  });
}
