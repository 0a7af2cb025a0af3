// GET /api/faults/:id/report: how the exporter behaved after a fault rule's answers, judged by the OTLP retry rules;
// GET /api/requests/:id/attempts: the attempts of one request's batch.
import { attemptsOf, retryReport } from '../faults/report.js';
import { ref } from './schemas.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ journal: import('../store/journal.js').Journal, faults: import('../faults/rules.js').FaultRules }} deps
 */
export function registerReport(app, { journal, faults }) {
  app.get(
    '/api/faults/:id/report',
    {
      schema: {
        tags: ['faults'],
        summary:
          "A fault rule's retry report: each batch it faulted, the attempts that followed and the gaps between them, with a verdict by the OTLP " +
          'retry rules (honoured Retry-After / RetryInfo, retried too soon, retried, did not retry, retried a non-retryable error, ...). ' +
          'A batch answered with a retryable error and not retried yet is "waiting" until the exporter\'s wait has passed (the longer of the ' +
          'Retry-After / RetryInfo given plus 1 s and the retry window, 8.5 s by default: the longest first backoff of the OTLP exporters, 7.5 s, ' +
          'plus 1 s; --retry-window-ms): its finalAt says when ' +
          'its verdict becomes final, and a waiting batch is not counted as a failure (ok stays true; final is false; counts has it as waiting)',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        response: { 200: ref('RetryReport'), 404: ref('InputError') },
      },
    },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      const rule = faults.get(id);
      if (!rule) return reply.code(404).send({ error: `no fault rule ${id}: a report needs the rule, so ask before removing it` });
      return retryReport(journal, rule, { windowMs: faults.retryWindowMs });
    },
  );

  app.get(
    '/api/requests/:id/attempts',
    {
      schema: {
        tags: ['requests'],
        summary: 'Every attempt of the batch a request belongs to: the faulted attempts before it, it, and the retries after it, with the gaps between them',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
        response: {
          200: { type: 'object', properties: { attempts: { type: 'array', items: ref('Attempt') } }, required: ['attempts'], additionalProperties: false },
          404: ref('InputError'),
        },
      },
    },
    async (request, reply) => {
      const { id } = /** @type {{ id: number }} */ (request.params);
      const attempts = attemptsOf(journal, id);
      if (!attempts) return reply.code(404).send({ error: `no request ${id} in the journal` });
      return { attempts };
    },
  );
}
