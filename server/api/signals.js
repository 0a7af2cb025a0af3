// GET /api/signals: what the web app shows of each signal, read from the signal table, so that the UI's
// labels and counts name the signals as the server does.
import { signalsForUi } from '../otlp/signals.js';
import { ref } from './schemas.js';

/** Built once: the table does not change while the server runs. */
const DOCUMENT = Object.freeze({ signals: signalsForUi() });

/** @param {import('fastify').FastifyInstance} app */
export function registerSignals(app) {
  app.get(
    '/api/signals',
    {
      schema: /** @type {any} */ ({
        summary: 'The signals this collector receives, in the order the specification lists them, with the words the UI uses for them',
        response: { 200: { type: 'object', properties: { signals: { type: 'array', items: ref('SignalInfo') } }, required: ['signals'], additionalProperties: false } },
      }),
    },
    async () => DOCUMENT,
  );
}
