// GET /api/faults/:id/report: how the exporter behaved after a fault rule's answers, judged by the OTLP retry rules.
import { retryReport } from '../faults/report.js';

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
          'retry rules (honoured Retry-After / RetryInfo, retried too soon, retried, did not retry, retried a non-retryable error, ...)',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        response: { 404: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } },
      },
    },
    async (request, reply) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      const rule = faults.get(id);
      if (!rule) return reply.code(404).send({ error: `no fault rule ${id}: a report needs the rule, so ask before removing it` });
      return retryReport(journal, rule);
    },
  );
}
