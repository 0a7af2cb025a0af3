// OTLP/HTTP (port 4318): POST /v1/{traces,metrics,logs} with protobuf or JSON bodies, compressed as the Collector accepts.
import http from 'node:http';
import { status as grpcStatus } from '@grpc/grpc-js';
import { SIGNAL_LIST } from '../otlp/signals.js';
import { planOf, refusalAnswer } from '../faults/wire.js';
import { SMALL_BODY, journalHeaders } from './receive.js';
import { keptText } from '../store/repeats.js';
import { dropped, limitConnections, statusOnClientError } from './limits.js';
import { decompress, DecompressError } from './decompress.js';
import { JOIN_AT_ONCE, Slicer, joinInSlices, soon } from './slices.js';
import { listenEverywhere } from './listen.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';
const NO_HEADERS = Object.freeze({});

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
 * The request path an OTLP route is looked up by: the target's path, its escapes decoded, without its query.
 * @param {string} url @returns {string|null} null when an escape is malformed
 */
function pathOf(url) {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}

/**
 * @param {import('node:http').ServerResponse} res @param {boolean} json @param {number} status @param {number} code
 * @param {string} message
 */
function sendStatus(res, json, status, code, message) {
  const refusal = refusalAnswer('http', status, code, message, json);
  send(res, refusal.status, refusal.headers, refusal.body);
}

/**
 * An answer with its Content-Length, as the Collector's are: `writeHead` fixes the framing before the body is known,
 * and Node then sends every answer chunked.
 * @param {import('node:http').ServerResponse} res @param {number} status
 * @param {Readonly<Record<string, string>>} headers @param {Buffer} [body]
 */
function send(res, status, headers, body) {
  res.statusCode = status;
  for (const name in headers) res.setHeader(name, headers[name]);
  res.end(body);
}

/**
 * Node's HTTP server with nothing over it: routing four paths, CORS and a status body is all this port needs, and the
 * framework it ran on (its routing, hooks, reply and promise per request) cost more than that per export.
 * @param {{ receiver: import('./receive.js').Receiver, host: string, port: number, corsOrigins: string[]|'*',
 *   limits: import('./limits.js').ConnectionLimits }} options
 */
export async function startHttpReceiver({ receiver, host, port, corsOrigins, limits }) {
  const signals = new Map(SIGNAL_LIST.map((signal) => [signal.httpPath, signal]));
  const paths = SIGNAL_LIST.map((s) => s.httpPath).join(', ');
  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  const onRequest = (req, res) => {
    serve(req, res).catch((err) => failed(req, res, err));
  };
  const listening = await listenEverywhere(host, port, () => {
    // No request timeout of Node's own: limitConnections sets the one this port keeps.
    const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, onRequest);
    server.on('clientError', statusOnClientError);
    limitConnections(server, limits);
    return server;
  });

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  async function serve(req, res) {
    if (dropped(req)) return;
    const headers = req.headers;
    const origin = headers.origin;
    if (origin && originAllowed(corsOrigins, origin)) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      if (origin && !originAllowed(corsOrigins, origin)) return send(res, 403, NO_HEADERS);
      return send(res, 204, {
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': String(headers['access-control-request-headers'] ?? 'content-type, content-encoding'),
        'access-control-max-age': '86400',
      });
    }
    const encoding = encodingOf(headers['content-type']);
    const json = encoding !== 'protobuf';
    const url = req.url ?? '/';
    const path = pathOf(url);
    if (path === null) return sendStatus(res, json, 400, grpcStatus.INVALID_ARGUMENT, `'${url}' is not a valid url component`);
    const signal = signals.get(path);
    if (!signal) return sendStatus(res, json, 404, grpcStatus.NOT_FOUND, `no OTLP endpoint at ${url}; use ${paths}`);
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST, OPTIONS');
      return sendStatus(res, json, 405, grpcStatus.UNIMPLEMENTED, `${req.method} is not allowed on ${signal.httpPath}; use POST`);
    }
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
    /** @param {number} status @param {number} code @param {string} message @param {'rejected'|'faulted'} outcome */
    const fail = (status, code, message, outcome = 'rejected') => {
      exchange.finish(status, message, outcome);
      sendStatus(res, json, status, code, message);
    };
    if (encoding === null) {
      req.resume();
      return fail(415, grpcStatus.INVALID_ARGUMENT, `unsupported Content-Type "${headers['content-type'] ?? ''}"; use ${PROTOBUF} or ${JSON_TYPE}`);
    }
    const held = { bytes: 0 };
    try {
      await answer(req, res, exchange, json, contentEncoding, held, fail);
    } finally {
      receiver.release(held.bytes);
    }
  }

  /**
   * A failure of otlp-mock's own while serving a request: answered 500 while nothing of the answer is sent yet.
   * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res @param {unknown} err
   */
  function failed(req, res, err) {
    if (res.headersSent || req.socket.destroyed) {
      req.socket.destroy();
      return;
    }
    const json = encodingOf(req.headers['content-type']) !== 'protobuf';
    sendStatus(res, json, 500, grpcStatus.INTERNAL, err instanceof Error ? err.message : String(err));
  }

  /**
   * Waits for the turn of a refusal a client can loop on, at its pace; nothing of the body is needed any more, so it
   * does not hold the in-flight budget meanwhile. False when the refusal is not to be answered (its client left, or
   * it would wait too long): it is journaled, and the connection closed.
   * @param {import('./pace.js').Pacer} pace @param {import('node:http').IncomingMessage} req
   * @param {import('./receive.js').Exchange} exchange @param {{ bytes: number }} held @param {number} status
   * @param {string} message
   */
  async function pacedTurn(pace, req, exchange, held, status, message) {
    receiver.release(held.bytes);
    held.bytes = 0;
    if (await pace.turn(req.socket)) return true;
    exchange.finish(status, message, 'rejected');
    req.socket.destroy();
    return false;
  }

  /**
   * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
   * @param {import('./receive.js').Exchange} exchange @param {boolean} json @param {string} contentEncoding
   * @param {{ bytes: number }} held @param {(status: number, code: number, message: string) => void} fail
   */
  async function answer(req, res, exchange, json, contentEncoding, held, fail) {
    const signal = /** @type {import('../otlp/signals.js').Signal} */ (exchange.meta.signal);
    let body;
    try {
      const wire = await readBody(req, receiver.maxRequestBytes, receiver, held);
      exchange.meta.bytes = wire.length;
      body = await decompressBody(wire, contentEncoding, receiver.maxRequestBytes, receiver, held);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      // A client that left mid-body is journaled as refused, but no answer is built for a socket that is gone:
      // when a thousand such clients leave at once, building theirs held the loop for a quarter of a second.
      if (req.socket.destroyed) {
        exchange.finish(err.status, err.message, 'rejected');
        return;
      }
      if (err.pace && !(await pacedTurn(err.pace, req, exchange, held, err.status, err.message))) return;
      // The rest of an over-long body is not read: close the connection rather than drain it.
      if (err.status === 413 || err.status === 503) res.setHeader('connection', 'close');
      if (err.status === 503) res.setHeader('retry-after', '1');
      fail(err.status, err.code, err.message);
      return;
    }
    // A connection dropped while its requests were read (a pipelining flood) gets no answer: serving its
    // requests would only feed the flood, and what its client never heard of is not stored.
    if (dropped(req)) return exchange.finish(null, '', 'reset');
    let verdict = await exchange.decideInSlices(body, json, req.headers, () => req.socket.destroyed);
    if (exchange.forwarding) verdict = await exchange.forwarded(verdict);
    if (req.socket.destroyed) return exchange.finish(null, '', 'abandoned');
    const plan = planOf(verdict, 'http', signal, json, receiver.hangLimitMs);
    const { then } = plan;
    if (plan.paced && 'status' in then && !(await pacedTurn(receiver.bodyRefusals, req, exchange, held, then.status, then.message))) return;
    if (plan.holdMs > 0) {
      await holdUntilGone(req, plan.holdMs);
      if (req.socket.destroyed) return exchange.finish(null, '', plan.ifGone);
    }
    if ('drop' in then) {
      // A reset is a TCP RST, not a close: clients see ECONNRESET, as when a connection really drops.
      if (then.drop === 'reset') req.socket.resetAndDestroy();
      else req.socket.destroy();
      return exchange.finish(null, '', then.outcome);
    }
    exchange.finish(then.status, then.message, then.outcome, then.partial);
    send(res, then.status, then.headers, then.body);
  }

  return {
    port: listening.port,
    close: () =>
      Promise.all(
        listening.servers.map(
          (server) =>
            new Promise((resolve) => {
              server.close(() => resolve(undefined));
              // Keep-alive connections, and answers held by hang faults, would keep close waiting for them.
              server.closeAllConnections();
            }),
        ),
      ),
  };
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
