// The UI port's guard (docs/security.md): every request and live feed upgrade asked who may make it (access-check.js),
// refusals answered at their pace, admin requests admitted in turns, and framework errors answered with what was wrong.
import { STATUS_CODES } from 'node:http';
import { dropped, lastServed } from '../transport/limits.js';
import { Admission } from './admission.js';
import { BODY_REFUSALS_PER_SECOND, Pacer, TOKEN_REFUSALS_PER_SECOND } from '../transport/pace.js';
import { requestTurn } from '../turns.js';
import { accessCheck, refusalBody, tokenPaced } from './access-check.js';

/**
 * @typedef {import('./access-check.js').AccessOptions} AccessOptions
 * @typedef {import('./access-check.js').Refusal} Refusal
 * @typedef {import('./access-check.js').RequestHead} RequestHead
 */

/**
 * Route config of what anyone who may reach the port may fetch: the UI's files and /api/health. Every other route,
 * and a request that matches none, is the admin API's.
 */
export const OPEN_ROUTE = Object.freeze({ access: 'open' });

/** @type {WeakMap<object, ReturnType<typeof accessCheck>>} */
const checks = new WeakMap();

/** Without registerAccess (the live feed on an app of its own), any Host and no token, but still one origin. */
const ORIGIN_ONLY = accessCheck({ host: '0.0.0.0', allowedHosts: [], adminToken: '' });

/** The check registered on this app, for the live feed's upgrade, which no Fastify hook sees. @param {import('fastify').FastifyInstance} app */
export function accessOf(app) {
  return checks.get(app.server) ?? ORIGIN_ONLY;
}

/** @type {WeakMap<object, Pacer>} */
const tokenPaces = new WeakMap();

/**
 * A request's end of its admission turn, and of its turn with sliced work (../turns.js), kept on the request under
 * these symbols rather than in WeakMaps: a WeakMap whose keys die as fast as requests come is rehashed on the event
 * loop (store/journal.js says what that cost).
 */
const ADMISSION_TURN = Symbol('admission turn');
const END_OF_TURN = Symbol('end of turn');

/**
 * The pace of this app's failed token checks, shared by its requests, the live feed's upgrades and the front door's
 * thread. None without registerAccess.
 * @param {import('fastify').FastifyInstance} app @returns {Pacer|undefined}
 */
export function tokenPaceOf(app) {
  return tokenPaces.get(app.server);
}

/**
 * The pace a refusal on this app is answered at (access-check.js, tokenPaced), or none.
 * @param {import('fastify').FastifyInstance} app @param {Refusal} refusal @returns {Pacer|undefined}
 */
export function paceOf(app, refusal) {
  return tokenPaced(refusal) ? tokenPaceOf(app) : undefined;
}

/** Admin requests worked on at once (--admin-concurrency): one, so that clients looping queries take one query's share. */
export const ADMIN_CONCURRENCY = 1;
/**
 * Admin requests a second per client address (--admin-rate). The UI polls a few a second; test suites on one
 * machine share its loopback address and script the API by the hundred a second, so the budget only stops floods.
 */
export const ADMIN_RATE = 1000;

/** Whether the route matched is one of the UI's files or /api/health. @param {import('fastify').FastifyRequest} request */
function open(request) {
  return /** @type {{ access?: string }} */ (request.routeOptions.config)?.access === OPEN_ROUTE.access;
}

/**
 * A route whose work is requests of its own to the API (the MCP server's tool calls), each taking its own turn:
 * were it to hold a turn as well, they would wait behind it for good.
 */
export const RELAYS = Object.freeze({ relays: true });

/** @param {import('fastify').FastifyRequest} request */
function relays(request) {
  return /** @type {{ relays?: boolean }} */ (request.routeOptions.config)?.relays === true;
}

/**
 * A query that waits for data does little until it arrives: a list with `minCount` or `timeoutMs` (alone, it waits
 * for one item), a verify with `timeoutMs`. @param {import('fastify').FastifyRequest} request
 */
function waits(request) {
  const query = /** @type {Record<string, unknown>} */ (request.query ?? {});
  if (query.minCount !== undefined || query.timeoutMs !== undefined) return true;
  const body = /** @type {any} */ (request.body);
  return request.routeOptions.url === '/api/verify' && typeof body === 'object' && body !== null && Number(body.timeoutMs) > 0;
}

/** A refusal as a google.rpc.Status. @param {import('./admission.js').Turned} turned */
function statusBody(turned) {
  return { code: turned.grpcCode, message: turned.message, details: [] };
}

/**
 * Guards every request on the UI port, and answers framework errors (a malformed JSON body, a `__proto__` key)
 * with what was wrong and where.
 * @param {import('fastify').FastifyInstance} app @param {AccessOptions} options
 */
export function registerAccess(app, options) {
  const check = accessCheck(options);
  checks.set(app.server, check);
  tokenPaces.set(app.server, new Pacer(TOKEN_REFUSALS_PER_SECOND));
  bodyRefusals.set(app.server, new Pacer(BODY_REFUSALS_PER_SECOND));
  const admission = new Admission({ concurrency: options.adminConcurrency ?? ADMIN_CONCURRENCY, rate: options.adminRate ?? ADMIN_RATE });
  /**
   * Waits for the request's turn with sliced work, which `onSend` ends; a client that left meanwhile ends it at once.
   * @param {import('fastify').FastifyRequest} request @param {import('fastify').FastifyReply} reply
   */
  const takeTurn = async (request, reply) => {
    const ended = await requestTurn();
    if (reply.raw.destroyed) return ended();
    /** @type {any} */ (request)[END_OF_TURN] = ended;
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (dropped(request.raw)) {
      reply.hijack();
      return done();
    }
    // Decided by the route the router matched, not by a reading of the URL: the router decodes escapes and
    // absolute-form targets, so any other reading can be walked around (`/%61pi/stats`).
    const kind = open(request) ? 'page' : 'api';
    const refusal = check(request.raw, kind);
    if (refusal) {
      const answer = () =>
        reply
          .code(refusal.status)
          .headers(refusal.headers ?? {})
          .send(refusalBody(refusal));
      // Refusals with a pace of their own wait for it; the others take a turn like any request.
      const pace = paceOf(app, refusal);
      if (!pace) {
        void takeTurn(request, reply).then(() => !reply.raw.destroyed && answer());
        return;
      }
      void pace.turn(request.raw.socket).then((due) => {
        if (due) return answer();
        reply.hijack();
        request.raw.socket.destroy();
      });
      return;
    }
    const spent = kind === 'api' ? admission.charge(request.ip) : null;
    if (spent) return reply.code(spent.status).headers(spent.headers).send(statusBody(spent));
    done();
  });
  // After the body is parsed, since a verify says in its body whether it waits.
  app.addHook('preHandler', async (request, reply) => {
    if (!(open(request) || waits(request) || relays(request))) {
      const turn = await admission.turn();
      if (typeof turn !== 'function') return reply.code(turn.status).headers(turn.headers).send(statusBody(turn));
      // A client that left while it waited has no one to answer: its turn goes to the next in line.
      if (reply.raw.destroyed) return turn();
      /** @type {any} */ (request)[ADMISSION_TURN] = turn;
      reply.raw.once('close', turn);
    }
    await takeTurn(request, reply);
  });
  app.addHook('onSend', async (request) => {
    /** @type {any} */ (request)[ADMISSION_TURN]?.();
    /** @type {any} */ (request)[END_OF_TURN]?.();
  });

  // Fastify's own JSON parser names neither where a body is malformed nor which key it refused.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJson(String(body)));
    } catch (err) {
      done(/** @type {Error} */ (err), undefined);
    }
  });

  app.setErrorHandler(async (/** @type {import('fastify').FastifyError} */ err, _request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const message = status >= 500 ? `internal error: ${err.message}` : err.message;
    if (status === 413 && !(await tooLargeAnswered(reply))) return reply;
    return reply.code(status).send({ statusCode: status, error: message || STATUS_CODES[status], message });
  });
}

/** @type {WeakMap<object, Pacer>} per UI server: bodies over a route's limit */
const bodyRefusals = new WeakMap();

/**
 * A body over its route's limit is refused unread and its connection closed, at a pace: a client that loops such
 * bodies (a verify of 20,000 expectations) waits for its answers, instead of making and sending a body as fast as
 * it is refused. Resolves false when the client is not to be answered: it left, or it would wait too long, and then
 * its connection is closed.
 * @param {import('fastify').FastifyReply} reply @returns {Promise<boolean>}
 */
export async function tooLargeAnswered(reply) {
  reply.header('connection', 'close');
  const socket = reply.raw.socket;
  if (socket) lastServed(socket);
  const pacer = bodyRefusals.get(reply.server.server);
  // Nothing more of the body is read while the answer waits: read, a looped 1.7 MB verify cost the process its whole
  // body twice over, in the front door and here. Once the answer is written, the door stops passing the body on.
  // The request is paused too: a chunked body being read when it passed the limit would have the socket resumed by
  // the request's next read.
  reply.request.raw.pause();
  socket?.pause();
  if (!pacer || (socket && (await pacer.turn(socket)))) {
    // Answered, what is left of the body is read to the end of the connection and let go, as Node does for a body
    // nobody read: the door ends the connection once it has read the answer's end, so that is what was on its way.
    reply.raw.once('finish', () => reply.request.raw.resume());
    return true;
  }
  reply.hijack();
  socket?.destroy();
  return false;
}

class BodyError extends Error {
  statusCode = 400;
}

/** @param {string} text */
function parseJson(text) {
  if (text.trim() === '') throw new BodyError('the body is empty: send a JSON value');
  let value;
  try {
    value = JSON.parse(text, (key, v) => {
      if (key === '__proto__') throw new BodyError(protoMessage(text));
      return v;
    });
  } catch (err) {
    if (err instanceof BodyError) throw err;
    throw new BodyError(`the body is not valid JSON: ${/** @type {Error} */ (err).message}`);
  }
  return value;
}

/** @param {string} text */
function protoMessage(text) {
  const at = /"__proto__"\s*:/.exec(text)?.index;
  const where = at === undefined ? '' : ` at position ${at} (${lineColumn(text, at)})`;
  return `the body has a "__proto__" key${where}, which could change the prototype of the objects it is copied into; remove it`;
}

/** @param {string} text @param {number} at */
function lineColumn(text, at) {
  const before = text.slice(0, at).split('\n');
  return `line ${before.length} column ${before[before.length - 1].length + 1}`;
}
