// GET /api/snapshot: a deterministic document of what is stored, for golden files.
import { snapshot, maskPattern, VOLATILE_ATTRIBUTES, SnapshotTooLarge, MAX_SNAPSHOT_ITEMS } from '../verify/snapshot.js';
import { QueryError } from '../query/params.js';
import { PatternError } from '../query/pattern.js';
import { Slicer } from '../query/scan.js';
import { Readable } from 'node:stream';
import { SIGNALS_SHOWN } from '../otlp/signals.js';
import { ref } from './schemas.js';

const CHUNK_CHARS = 64 * 1024;

const SIGNALS = /** @type {string[]} */ (SIGNALS_SHOWN.map((s) => s.name));
const TIMES = ['drop', 'order', 'relative'];
const OWN = {
  signal: { type: 'string', description: `${SIGNALS.join(', ')}, or several joined by commas (default all); other parameters are that list query's filters` },
  mask: {
    type: 'string',
    description: `more attribute names to mask, joined by commas: exact, with * (host.*), or /a regular expression/ (RE2 syntax: no backreferences or lookaround); masked by default: ${VOLATILE_ATTRIBUTES.join(', ')}`,
  },
  maskDefaults: { type: 'boolean', description: 'false: mask only what mask names' },
  times: {
    type: 'string',
    enum: TIMES,
    description: 'drop (default): no times, order by content; order: siblings and logs in time order; relative: also startMs and durationMs within the trace',
  },
};

/**
 * The document as JSON text, written an element at a time between slices: a snapshot may hold ten
 * thousand spans. Every field of the document is a list.
 * @param {Record<string, any[]>} doc
 */
async function* documentText(doc) {
  const slicer = new Slicer(1);
  let text = '{';
  for (const [field, list] of Object.entries(doc)) {
    text += `${text === '{' ? '' : ','}${JSON.stringify(field)}:[`;
    for (let i = 0; i < list.length; i++) {
      text += (i ? ',' : '') + JSON.stringify(list[i]);
      if (text.length >= CHUNK_CHARS) {
        yield text;
        text = '';
      }
      if (slicer.due()) await slicer.pause();
    }
    text += ']';
  }
  yield `${text}}`;
}

/** @param {import('fastify').FastifyReply} reply @param {string} message */
const badRequest = (reply, message) => reply.code(400).send({ statusCode: 400, error: 'Bad Request', message });

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} sources
 */
export function registerSnapshot(app, { store, journal }) {
  app.get(
    '/api/snapshot',
    {
      schema: /** @type {any} */ ({
        summary:
          'What is stored as a normalized, deterministic document for a golden file: trace trees with ids replaced by labels (T1, T1.S2), ' +
          'no timestamps, sorted attributes, volatile attributes masked; the same scenario gives the same document whatever its ids, timing and arrival order. ' +
          `At most ${MAX_SNAPSHOT_ITEMS} spans, log records and metric series (400 beyond: narrow it with filters). ` +
          'Filters as GET /api/traces, /api/logs and /api/metrics (attr.<key>, service, from, to with every signal; the rest with signal=)',
        querystring: { type: 'object', properties: OWN, additionalProperties: true },
        response: {
          200: { type: 'object', description: 'the normalized document: trace trees, log records and metric series per signal', additionalProperties: true },
          400: ref('StatusError'),
        },
      }),
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { signal, mask, maskDefaults, times = 'drop', ...filters } = /** @type {Record<string, any>} */ (request.query);
      for (const [name, v] of Object.entries({ signal, mask, maskDefaults, times }))
        if (Array.isArray(v))
          return badRequest(reply, `parameter '${name}' is given ${v.length} times; give it once${name === 'mask' || name === 'signal' ? ', joined by commas' : ''}`);
      const signals = signal === undefined ? SIGNALS : String(signal).split(',');
      const unknown = signals.filter((s) => !SIGNALS.includes(s));
      if (unknown.length || !signals.length) return badRequest(reply, `parameter 'signal' takes ${SIGNALS.join(', ')} (joined by commas), got ${JSON.stringify(signal)}`);
      if (!TIMES.includes(times)) return badRequest(reply, `parameter 'times' must be one of ${TIMES.join(', ')}, got ${JSON.stringify(times)}`);
      if (maskDefaults !== undefined && !['true', 'false'].includes(String(maskDefaults)))
        return badRequest(reply, `parameter 'maskDefaults' must be true or false, got ${JSON.stringify(maskDefaults)}`);
      const names = [...(String(maskDefaults) === 'false' ? [] : VOLATILE_ATTRIBUTES), ...(mask ? String(mask).split(',').filter(Boolean) : [])];
      let patterns;
      try {
        patterns = names.map(maskPattern);
      } catch (err) {
        if (!(err instanceof PatternError)) throw err;
        return badRequest(reply, `parameter 'mask': ${err.message}`);
      }
      try {
        const doc = await snapshot(store, journal, { signals: /** @type {any} */ (signals), filters, mask: patterns, times });
        return reply.type('application/json; charset=utf-8').send(Readable.from(documentText(doc), { objectMode: false }));
      } catch (err) {
        if (err instanceof SnapshotTooLarge) return badRequest(reply, err.message);
        if (!(err instanceof QueryError)) throw err;
        const hint = signal === undefined ? ' (without signal=, each filter applies to traces, logs and metrics: name one signal for its own filters)' : '';
        return badRequest(reply, `${err.message}${hint}`);
      }
    },
  );
}
