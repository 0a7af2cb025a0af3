// What one connection may cost an HTTP/1.1 server (the OTLP/HTTP receiver and the API): time without a byte from
// a client that is sending a request, requests pipelined without waiting for answers, answers left unread.
import { status as grpcStatus } from '@grpc/grpc-js';
import { statusJson } from '../otlp/schema.js';
import { soon } from './slices.js';
import { answerAndClose } from './last-answer.js';

/** Answers this large waiting in Node's buffer mean the client stopped reading: it gets no more. */
const MAX_UNREAD_BYTES = 256 * 1024;

/**
 * @typedef {{ idleTimeoutMs: number, maxPipelined: number }} ConnectionLimits
 */

/**
 * How long a connection that broke the limits is held, unread, before it is closed. Closing it at once lets a
 * flood reconnect and send again straight away, and every reconnection costs reading, parsing and closing a
 * socket full of data; a held connection costs a socket, and its sender waits on a full window.
 */
const HOLD_MS = 10_000;

/**
 * A connection's state, kept on its socket under this symbol (see `stateOf`) rather than in a WeakMap: a WeakMap whose
 * keys die as fast as clients reconnect is rehashed on the event loop (journal.js says what that cost).
 * `pending`: requests not yet answered; `pipelined`: requests that arrived while an earlier one was unanswered,
 * which no OTLP exporter does and a flood does all the time; `cut`: the connection broke a limit and is no
 * longer read or served.
 * @typedef {{ pending: number, pipelined: number, cut: boolean, res: import('node:http').ServerResponse|null }} ConnectionState
 */
const CONNECTION = Symbol('connection');

/** @param {import('node:net').Socket} socket @returns {ConnectionState|undefined} */
const stateOf = (socket) => /** @type {any} */ (socket)[CONNECTION];

/**
 * Stops reading and serving a connection, and closes it once it has been held. `_paused` is what Node's HTTP
 * server itself sets to keep a socket paused while requests on it are read (readStart in _http_incoming):
 * without it, reading a body already routed would resume the socket (the pipelining test fails if that changes).
 * @param {import('node:net').Socket} socket @param {number} holdMs
 */
function cut(socket, holdMs) {
  const state = stateOf(socket);
  if (state) state.cut = true;
  /** @type {any} */ (socket)._paused = true;
  socket.pause();
  setTimeout(() => socket.destroy(), holdMs).unref();
}

/**
 * @param {import('node:http').Server} server @param {ConnectionLimits} limits
 */
export function limitConnections(server, { idleTimeoutMs, maxPipelined }) {
  const holdMs = Math.min(HOLD_MS, idleTimeoutMs);
  // Node arms this on every connection and re-arms it on every byte either way; what happens when it fires is ours.
  server.timeout = idleTimeoutMs;
  server.headersTimeout = idleTimeoutMs;
  server.requestTimeout = Math.max(server.requestTimeout, idleTimeoutMs);
  server.on('timeout', (/** @type {import('node:net').Socket} */ socket) => {
    const res = stateOf(socket)?.res;
    // A request fully received is the server's to answer (a waiting query, a delay or hang fault): only a
    // client that stopped sending is dropped; between requests the keep-alive timeout applies.
    if (res && /** @type {any} */ (res).req.complete) return;
    socket.destroy();
  });
  // Before the server's own listener (Fastify's, on the API port), so that a request of a connection dropped here is
  // never routed.
  server.prependListener('request', (req, res) => {
    const socket = req.socket;
    let state = stateOf(socket);
    if (!state) /** @type {any} */ (socket)[CONNECTION] = state = { pending: 0, pipelined: 0, cut: false, res: null };
    if (state.pending > 0) state.pipelined++;
    state.pending++;
    state.res = res;
    const done = () => {
      state.pending--;
      if (state.res === res) state.res = null;
    };
    res.once('close', done);
    if (!state.cut && (state.pipelined > maxPipelined || socket.writableLength > MAX_UNREAD_BYTES)) cut(socket, holdMs);
  });
}

/**
 * Serves no request that follows this one on its connection, whose answer closes it (`Connection: close`): a server
 * that closes MUST NOT process further requests on the connection (RFC 9112, 9.6), and a request pipelined after a
 * refused chunked body had been served all the same.
 * @param {import('node:net').Socket} socket
 */
export function lastServed(socket) {
  const state = stateOf(socket);
  if (state) state.cut = true;
}

/** Whether the connection was dropped before this request could be served: then nothing more is done for it. @param {import('node:http').IncomingMessage} req */
export function dropped(req) {
  return req.socket.destroyed || stateOf(req.socket)?.cut === true;
}

/**
 * Node's own rejections (431 for oversized headers, 400 for malformed framing, 408 for timeouts) as a
 * `google.rpc.Status` in JSON: the request's content type is not known when its head cannot be parsed.
 * @param {Error & { code?: string }} err @param {import('node:stream').Duplex} socket
 */
export function statusOnClientError(err, socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Answered soon, a slice's worth per turn: two thousand clients that leave mid-request at once each end here,
  // and each answer written and each socket then closed held the loop for tens of microseconds. The socket, half
  // open, waits for its answer; an error seen again before it is written is answered once.
  soon(() => answerClientError(err, socket));
}

/** @param {Error & { code?: string }} err @param {import('node:stream').Duplex} socket */
function answerClientError(err, socket) {
  if (socket.destroyed || socket.writableEnded) return;
  const [status, reason, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', grpcStatus.INVALID_ARGUMENT, 'request headers exceed the server limit of 16 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', grpcStatus.DEADLINE_EXCEEDED, 'the request was not received in time']
        : [400, 'Bad Request', grpcStatus.INVALID_ARGUMENT, `malformed HTTP request: ${err.code ?? err.message}`];
  const body = statusJson(code, message);
  if (!socket.writable) return socket.destroy();
  const answer = `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  if (err.code !== 'HPE_INVALID_EOF_STATE') {
    // end, not destroy: the client may still be sending, and closing a socket with unread bytes resets it, which
    // discards the answer
    socket.end(answer);
    return;
  }
  // The client has sent all it will: its socket is closed once the kernel holds the answer, and is gone when a client
  // that had left for good resets it.
  answerAndClose(socket, answer);
}
