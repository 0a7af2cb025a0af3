// OTLP/HTTP (port 4318): POST /v1/{traces,metrics,logs} with protobuf or JSON bodies, compressed as the Collector accepts.
import Fastify from 'fastify';
import { status as grpcStatus } from '@grpc/grpc-js';
import { SIGNAL_LIST } from '../otlp/signals.js';
import { planOf, refusalAnswer } from '../faults/wire.js';
import { SMALL_BODY, journalHeaders } from './receive.js';
import { keptText } from '../store/repeats.js';
import { dropped, limitConnections, statusOnClientError } from './limits.js';
import { decompress, DecompressError } from './decompress.js';
import { JOIN_AT_ONCE, Slicer, joinInSlices, soon } from './slices.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';
/** google.rpc.Code for an HTTP status Fastify chose, by the OTLP specification's mapping */
const CODE_OF_STATUS = /** @type {Record<number, number>} */ ({
  408: grpcStatus.DEADLINE_EXCEEDED,
  413: grpcStatus.RESOURCE_EXHAUSTED,
  415: grpcStatus.INVALID_ARGUMENT,
  429: grpcStatus.RESOURCE_EXHAUSTED,
  503: grpcStatus.UNAVAILABLE,
});

class HttpError extends Error {
  /**
   * @param {number} status @param {number} code google.rpc.Code @param {string} message
   * @param {import('./pace.js').Pacer|null} [pace] the pace it is answered at, if it is a refusal a client can loop on
   */
  constructor(status, code, message, pace = null) {
    // An answer, not a fault: a thousand clients that leave mid-body at once each make one, and the stack trace took
    // half of what building their refusals cost.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = status;
    this.code = code;
    this.pace = pace;
  }
}

/** @param {import('./pace.js').Pacer|null} [pace] */
const busy = (pace = null) =>
  new HttpError(503, grpcStatus.UNAVAILABLE, 'the server is receiving too many request bodies at once (--max-inflight-bytes); retry later', pace);

/** @param {string|undefined} header @returns {'protobuf'|'json'|null} */
function encodingOf(header) {
  const type = (header ?? '').split(';')[0].trim().toLowerCase();
  if (type === PROTOBUF) return 'protobuf';
  if (type === JSON_TYPE) return 'json';
  return null;
}

/**
 * Reads the raw body, refusing to hold more than `limit` bytes, and taking room for each chunk from the
 * receiver's in-flight budget: the caller releases `held()` bytes once the request is answered.
 * @param {import('node:http').IncomingMessage} raw @param {number} limit
 * @param {import('./receive.js').Receiver} receiver @param {{ bytes: number }} held
 * @returns {Promise<Buffer>}
 */
function readBody(raw, limit, receiver, held) {
  /** @type {Promise<Buffer>} */
  const body = new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    const tooLarge = () => new HttpError(413, grpcStatus.RESOURCE_EXHAUSTED, `request body exceeds the limit of ${limit} bytes`);
    const declared = Number(raw.headers['content-length']);
    if (declared > limit) {
      reject(tooLarge());
      return;
    }
    let stopped = false;
    /** @param {HttpError} err */
    const stop = (err) => {
      stopped = true;
      raw.removeAllListeners('data');
      raw.pause();
      reject(err);
    };
    const resume = () => stopped || raw.resume();
    raw.on('data', (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      if (size > limit) return stop(tooLarge());
      // A body whose declared length is large takes room for all of it with its first chunk: while big bodies fill
      // the budget, a sender reconnecting to send one again is refused at its first chunk.
      const taken = receiver.reserveBody(size, held.bytes, declared || 0);
      if (taken < 0) return stop(busy(receiver.busyPace(declared || 0)));
      held.bytes += taken;
      chunks.push(chunk);
      // A large body is read a chunk a turn: thirty 8 MB bodies arriving at once were otherwise read 2 MiB a socket in
      // one turn of the loop, which held it for 88-127 ms.
      if (size > SMALL_BODY) {
        raw.pause();
        setImmediate(resume);
      }
    });
    raw.on('end', () => {
      if (chunks.length === 1 || size <= JOIN_AT_ONCE) return resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      // Tens of MiB copied at once held every other client for as many milliseconds.
      joinInSlices(chunks, size, new Slicer(() => raw.socket.destroyed)).then(resolve, () =>
        reject(new HttpError(400, grpcStatus.INVALID_ARGUMENT, 'the client went away before its body was read')),
      );
    });
    // A dropped connection (idle, pipelining) ends neither way: without this the request would hold its bytes.
    // Clients that vanish mid-body are settled a few at a time (`soon`), as many may leave at once, and once
    // ('error' is followed by 'close').
    let left = false;
    /** @param {string} message */
    const leave = (message) => {
      if (left) return;
      left = true;
      soon(() => {
        reject(new HttpError(400, grpcStatus.INVALID_ARGUMENT, message));
        return body;
      });
    };
    raw.on('close', () => {
      if (!raw.complete) leave('the connection closed before the whole body arrived');
    });
    raw.on('error', (err) => leave(`request body could not be read: ${err.message}`));
  });
  return body;
}

/**
 * Decompresses by Content-Encoding, stopping as soon as the output passes the limit (no bombs), and holding the
 * output in the request's share of the in-flight budget as it is allocated.
 * @param {Buffer} body @param {string} encoding @param {number} limit
 * @param {import('./receive.js').Receiver} receiver @param {{ bytes: number }} held @returns {Promise<Buffer>}
 */
async function decompressBody(body, encoding, limit, receiver, held) {
  try {
    return await decompress(
      body,
      encoding,
      limit,
      undefined,
      receiver.roomFor(
        () => held.bytes,
        (n) => (held.bytes += n),
      ),
    );
  } catch (err) {
    if (!(err instanceof DecompressError)) throw err;
    if (err.busy) throw busy();
    const pace = receiver.bodyRefusals;
    throw err.tooLarge ? new HttpError(413, grpcStatus.RESOURCE_EXHAUSTED, err.message, pace) : new HttpError(400, grpcStatus.INVALID_ARGUMENT, err.message, pace);
  }
}

/** @param {string[]|'*'} allowed @param {string} origin */
function originAllowed(allowed, origin) {
  return allowed === '*' || allowed.includes(origin);
}

/**
 * @param {{ receiver: import('./receive.js').Receiver, host: string, port: number, corsOrigins: string[]|'*',
 *   limits: import('./limits.js').ConnectionLimits }} options
 */
export async function startHttpReceiver({ receiver, host, port, corsOrigins, limits }) {
  const app = Fastify({ logger: false, forceCloseConnections: true, keepAliveTimeout: 65_000, clientErrorHandler: statusOnClientError });
  limitConnections(app.server, limits);
  app.removeAllContentTypeParsers();
  // The handler reads and limits the stream itself, so that limits, decompression and errors stay ours.
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  app.addHook('onRequest', (request, reply, done) => {
    if (dropped(request.raw)) {
      reply.hijack();
      return done();
    }
    const origin = request.headers.origin;
    if (origin && originAllowed(corsOrigins, origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('vary', 'Origin');
    }
    done();
  });

  app.options('*', (request, reply) => {
    const origin = request.headers.origin;
    if (origin && !originAllowed(corsOrigins, origin)) return reply.code(403).send();
    reply.header('access-control-allow-methods', 'POST, OPTIONS');
    reply.header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? 'content-type, content-encoding');
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });

  /**
   * @param {import('fastify').FastifyReply} reply @param {boolean} json @param {number} status
   * @param {number} code @param {string} message
   */
  const sendStatus = (reply, json, status, code, message) => {
    const refusal = refusalAnswer('http', status, code, message, json);
    return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
  };

  // Whatever Fastify refuses before a handler runs (a missing or malformed Content-Type, a bad URL) is answered
  // like everything else on this port.
  app.setErrorHandler((/** @type {import('fastify').FastifyError} */ err, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const json = encodingOf(request.headers['content-type']) !== 'protobuf';
    const code = CODE_OF_STATUS[status] ?? (status < 500 ? grpcStatus.INVALID_ARGUMENT : grpcStatus.INTERNAL);
    const message = status === 415 ? `unsupported Content-Type "${request.headers['content-type'] ?? ''}"; use ${PROTOBUF} or ${JSON_TYPE}` : err.message;
    return sendStatus(reply, json, status, code, message);
  });

  app.setNotFoundHandler((request, reply) => {
    const json = encodingOf(request.headers['content-type']) !== 'protobuf';
    const paths = SIGNAL_LIST.map((s) => s.httpPath).join(', ');
    sendStatus(reply, json, 404, grpcStatus.NOT_FOUND, `no OTLP endpoint at ${request.url}; use ${paths}`);
  });

  for (const signal of SIGNAL_LIST) {
    app.route({
      method: ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH'],
      url: signal.httpPath,
      handler: (request, reply) => {
        reply.header('allow', 'POST, OPTIONS');
        const json = encodingOf(request.headers['content-type']) !== 'protobuf';
        return sendStatus(reply, json, 405, grpcStatus.UNIMPLEMENTED, `${request.method} is not allowed on ${signal.httpPath}; use POST`);
      },
    });

    app.post(signal.httpPath, async (request, reply) => {
      const raw = request.raw;
      const headers = raw.headers;
      const contentEncoding = String(headers['content-encoding'] ?? '')
        .trim()
        .toLowerCase();
      const exchange = receiver.begin({
        transport: 'http',
        signal,
        path: signal.httpPath,
        contentType: keptText(String(headers['content-type'] ?? '')),
        contentEncoding,
        bytes: 0,
        userAgent: keptText(String(headers['user-agent'] ?? '')),
        headers: journalHeaders(headers),
      });
      const encoding = encodingOf(headers['content-type']);
      const json = encoding !== 'protobuf';
      /** @param {number} status @param {number} code @param {string} message @param {'rejected'|'faulted'} outcome */
      const fail = (status, code, message, outcome = 'rejected') => {
        exchange.finish(status, message, outcome);
        return sendStatus(reply, json, status, code, message);
      };
      if (encoding === null) {
        raw.resume();
        return fail(415, grpcStatus.INVALID_ARGUMENT, `unsupported Content-Type "${headers['content-type'] ?? ''}"; use ${PROTOBUF} or ${JSON_TYPE}`);
      }
      const held = { bytes: 0 };
      try {
        return await answer(request, reply, exchange, json, contentEncoding, held, fail);
      } finally {
        receiver.release(held.bytes);
      }
    });
  }

  /**
   * Waits for the turn of a refusal a client can loop on, at its pace; nothing of the body is needed any more, so it
   * does not hold the in-flight budget meanwhile. False when the refusal is not to be answered (its client left, or
   * it would wait too long): it is journaled, and the connection closed.
   * @param {import('./pace.js').Pacer} pace @param {import('node:http').IncomingMessage} raw
   * @param {import('fastify').FastifyReply} reply @param {import('./receive.js').Exchange} exchange
   * @param {{ bytes: number }} held @param {number} status @param {string} message
   */
  async function pacedTurn(pace, raw, reply, exchange, held, status, message) {
    receiver.release(held.bytes);
    held.bytes = 0;
    if (await pace.turn(raw.socket)) return true;
    exchange.finish(status, message, 'rejected');
    reply.hijack();
    raw.socket.destroy();
    return false;
  }

  /**
   * @param {import('fastify').FastifyRequest} request @param {import('fastify').FastifyReply} reply
   * @param {import('./receive.js').Exchange} exchange @param {boolean} json @param {string} contentEncoding
   * @param {{ bytes: number }} held @param {(status: number, code: number, message: string) => unknown} fail
   */
  async function answer(request, reply, exchange, json, contentEncoding, held, fail) {
    const raw = request.raw;
    const signal = /** @type {import('../otlp/signals.js').Signal} */ (exchange.meta.signal);
    let body;
    try {
      const wire = await readBody(raw, receiver.maxRequestBytes, receiver, held);
      exchange.meta.bytes = wire.length;
      body = await decompressBody(wire, contentEncoding, receiver.maxRequestBytes, receiver, held);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      // A client that left mid-body is journaled as refused, but no answer is built for a socket that is gone:
      // when a thousand such clients leave at once, building theirs held the loop for a quarter of a second.
      if (raw.socket.destroyed) {
        exchange.finish(err.status, err.message, 'rejected');
        reply.hijack();
        return reply;
      }
      if (err.pace && !(await pacedTurn(err.pace, raw, reply, exchange, held, err.status, err.message))) return reply;
      // The rest of an over-long body is not read: close the connection rather than drain it.
      if (err.status === 413 || err.status === 503) reply.header('connection', 'close');
      if (err.status === 503) reply.header('retry-after', '1');
      return fail(err.status, err.code, err.message);
    }
    // A connection dropped while its requests were read (a pipelining flood) gets no answer: serving its
    // requests would only feed the flood, and what its client never heard of is not stored.
    if (dropped(raw)) return unanswered(reply, exchange, 'reset');
    let verdict = await exchange.decideInSlices(body, json, raw.headers, () => raw.socket.destroyed);
    if (exchange.forwarding) verdict = await exchange.forwarded(verdict);
    if (raw.socket.destroyed) return unanswered(reply, exchange, 'abandoned');
    const plan = planOf(verdict, 'http', signal, json, receiver.hangLimitMs);
    const { then } = plan;
    if (plan.paced && 'status' in then && !(await pacedTurn(receiver.bodyRefusals, raw, reply, exchange, held, then.status, then.message))) return reply;
    if ('drop' in then) reply.hijack();
    if (plan.holdMs > 0) {
      await holdUntilGone(raw, plan.holdMs);
      if (raw.socket.destroyed) return unanswered(reply, exchange, plan.ifGone);
    }
    if ('drop' in then) {
      // A reset is a TCP RST, not a close: clients see ECONNRESET, as when a connection really drops.
      if (then.drop === 'reset') raw.socket.resetAndDestroy();
      else raw.socket.destroy();
      return unanswered(reply, exchange, then.outcome);
    }
    exchange.finish(then.status, then.message, then.outcome, then.partial);
    return reply.code(then.status).headers(then.headers).send(then.body);
  }

  await app.listen({ host, port });
  return {
    app,
    port: /** @type {import('node:net').AddressInfo} */ (app.server.address()).port,
    close: () => app.close(),
  };
}

/**
 * A request that gets no answer (its connection reset or dropped, or its client gone while the answer was held):
 * Fastify is told not to send one, and the journal says what the client saw.
 * @param {import('fastify').FastifyReply} reply @param {import('./receive.js').Exchange} exchange
 * @param {import('../store/journal.js').Outcome} outcome
 */
function unanswered(reply, exchange, outcome) {
  reply.hijack();
  exchange.finish(null, '', outcome);
  return reply;
}

/**
 * Resolves when the client goes away or the hang limit passes, whichever is first.
 * @param {import('node:http').IncomingMessage} raw @param {number} limitMs
 */
export function holdUntilGone(raw, limitMs) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, limitMs);
    function done() {
      clearTimeout(timer);
      raw.socket.off('close', done);
      resolve(undefined);
    }
    raw.socket.once('close', done);
  });
}
