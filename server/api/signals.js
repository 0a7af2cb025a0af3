// GET /api/signals: what the web app shows of each signal, read from the signal table, so that the UI's
// labels and counts name the signals as the server does.
import { SIGNAL_NAMES, signalsForUi } from '../otlp/signals.js';

const str = { type: 'string' };

const signalSchema = {
  type: 'object',
  properties: {
    name: { ...str, enum: SIGNAL_NAMES, description: 'the signal: its journal entries, stats and fault rules name it so' },
    label: { ...str, description: 'its name as a title, e.g. Traces' },
    order: { type: 'integer', description: 'where the UI shows it among the signals (tabs, counts), lowest first' },
    listKind: { ...str, description: 'the list of its items: GET /api/<listKind>' },
    item: {
      type: 'object',
      properties: { one: { ...str, description: 'one item, e.g. span' }, many: { ...str, description: 'several, e.g. spans' } },
      required: ['one', 'many'],
      additionalProperties: false,
    },
    short: { ...str, description: 'its items in one short word, e.g. points: the field of per-service counts' },
  },
  required: ['name', 'label', 'order', 'listKind', 'item', 'short'],
  additionalProperties: false,
};

/** Built once: the table does not change while the server runs. */
const DOCUMENT = Object.freeze({ signals: signalsForUi() });

/** @param {import('fastify').FastifyInstance} app */
export function registerSignals(app) {
  app.get(
    '/api/signals',
    {
      schema: /** @type {any} */ ({
        summary: 'The signals this collector receives, in the order the specification lists them, with the words the UI uses for them',
        response: { 200: { type: 'object', properties: { signals: { type: 'array', items: signalSchema } }, required: ['signals'], additionalProperties: false } },
      }),
    },
    async () => DOCUMENT,
  );
}
