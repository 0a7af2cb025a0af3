// OTLP/gRPC (port 4317): the Export method of each signal's service, built from the signal table, and the OTAP
// streams, on HTTP/2 sessions of otlp-mock's own (h2/session.js).
import net from 'node:net';
import { status as CODE } from '@grpc/grpc-js';
import { SIGNAL_LIST } from '../otlp/signals.js';
import { planOf } from '../faults/wire.js';
import { journalHeaders } from './receive.js';
import { keptText } from '../store/repeats.js';
import { UnaryCall } from './grpc-unary.js';
import { FIRST_STREAM_WINDOW, SESSION_WINDOW } from './grpc-windows.js';
import { takeOtapStream } from '../otap/index.js';
import { CODES, H2Session } from './h2/session.js';
import { grpcMessage } from '../otlp/text.js';
import { listenEverywhere } from './listen.js';

/**
 * Resets the TCP connection under an HTTP/2 session (RST), as a dropped connection does: every call on it ends,
 * and gRPC clients see UNAVAILABLE.
 * @param {H2Session|undefined} session none when the stream is closed
 */
function resetConnection(session) {
  if (session && !session.destroyed) session.socket.resetAndDestroy();
}

/** A 'timeout' listener: the stream is `this`, so no closure is made per call. @this {import('./h2/session.js').H2Stream} */
function cancelIdle() {
  this.close(CODES.CANCEL);
}

/** Streams one connection may have open: plenty for any exporter, and a bound on what one client can hold. */
const MAX_CONCURRENT_STREAMS = 100;

/**
 * @param {{ receiver: import('./receive.js').Receiver, host: string, port: number,
 *   limits: import('./limits.js').ConnectionLimits }} options
 */
export async function startGrpcReceiver({ receiver, host, port, limits }) {
  /** @type {Set<H2Session>} */
  const sessions = new Set();
  /** @type {Set<() => void>} */
  const hanging = new Set();
  /** @type {Set<import('../otap/stream.js').OtapStream>} */
  const otapStreams = new Set();
  /** @type {Map<string, import('../otlp/signals.js').Signal>} */
  const exportPaths = new Map(SIGNAL_LIST.map((signal) => [`/${signal.grpcService}/${signal.grpcMethod}`, signal]));
  /** @param {UnaryCall} call @param {number} bytes */
  const begin = (call, bytes) => {
    const md = call.metadata;
    return receiver.begin({
      transport: 'grpc',
      signal: call.signal,
      path: keptText(call.path),
      contentType: keptText(String(call.headers['content-type'])),
      contentEncoding: call.encoding === 'identity' ? '' : call.encoding,
      bytes,
      userAgent: keptText(String(md['user-agent'] ?? '')),
      headers: journalHeaders(md),
    });
  };

  /** @param {UnaryCall} call @param {number} code @param {string} message */
  const refused = (call, code, message) => begin(call, call.bytes).finish(code, message, 'rejected');

  /**
   * Resolves when the client goes away or `ms` pass, whichever is first (a hang, a delay); at shutdown, at once.
   * @param {UnaryCall} call @param {number} ms
   */
  const holdUntilGone = (call, ms) =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        hanging.delete(done);
        call.onCancel = null;
        resolve(undefined);
      }
      hanging.add(done);
      call.onCancel = done;
    });

  /**
   * A failure of otlp-mock's own is answered INTERNAL, as the HTTP receiver answers 500, and journaled on the
   * call's own entry, rather than left as an unhandled rejection that ends the process.
   * @param {UnaryCall} call @param {Buffer} message
   */
  const answer = async (call, message) => {
    const exchange = begin(call, call.length);
    try {
      await decideAndAnswer(call, message, exchange);
    } catch (err) {
      const details = `otlp-mock failed on this request: ${err instanceof Error ? err.message : String(err)}`;
      exchange.finish(CODE.INTERNAL, details, 'rejected');
      call.fail(CODE.INTERNAL, details);
    }
  };

  /** @param {UnaryCall} call @param {Buffer} message @param {import('./receive.js').Exchange} exchange */
  const decideAndAnswer = async (call, message, exchange) => {
    let verdict = await exchange.decideInSlices(message, false, call.metadata, () => call.gone());
    if (exchange.forwarding) verdict = await exchange.forwarded(verdict);
    if (call.gone()) {
      exchange.finish(null, '', 'abandoned');
      return;
    }
    const plan = planOf(verdict, 'grpc', call.signal, false, receiver.hangLimitMs);
    const { then } = plan;
    if (plan.paced && 'status' in then && !(await call.pacedTurn(() => exchange.finish(then.status, then.message, 'rejected')))) {
      exchange.finish(null, '', 'abandoned');
      return;
    }
    if (plan.holdMs > 0) {
      await holdUntilGone(call, plan.holdMs);
      if (call.gone()) {
        exchange.finish(null, '', plan.ifGone);
        return;
      }
    }
    if ('drop' in then) {
      // A call can only be dropped with its connection: a stream-level reset is seen as INTERNAL, which no client retries.
      exchange.finish(null, '', then.outcome);
      resetConnection(call.stream.session);
      return;
    }
    exchange.finish(then.status, then.message, then.outcome, then.partial);
    if (then.response) call.ok(then.response, then.message);
    else call.fail(then.status, then.message, then.trailers);
  };

  /**
   * @param {import('./h2/session.js').H2Stream} stream @param {import('./h2/hpack.js').HeaderObject} headers
   */
  const onStream = (stream, headers) => {
    // A stream that sends nothing for the idle timeout is cancelled; an Export call turns it off once its message
    // is whole, since any wait after that is the server's.
    stream.setTimeout(limits.idleTimeoutMs, cancelIdle);
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      // What grpc-js's server answered, and the gRPC protocol asks: 415 and nothing more.
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const path = String(headers[':path']);
    const signal = exportPaths.get(path);
    if (signal) {
      new UnaryCall(stream, headers, signal, receiver, answer, refused);
      return;
    }
    if (takeOtapStream(stream, headers, receiver, hanging, limits.idleTimeoutMs, otapStreams)) return;
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc+proto',
        'grpc-status': String(CODE.UNIMPLEMENTED),
        'grpc-message': grpcMessage(`The server does not implement the method ${path}`),
      },
      { endStream: true },
    );
  };

  /** @param {net.Socket} socket */
  const connected = (socket) => {
    const session = new H2Session(socket, {
      maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
      initialWindowSize: FIRST_STREAM_WINDOW,
      connectionWindow: SESSION_WINDOW,
      idleTimeoutMs: limits.idleTimeoutMs,
    });
    sessions.add(session);
    session.on('stream', onStream);
    session.on('close', () => sessions.delete(session));
  };

  const { servers, port: boundPort } = await listenEverywhere(host, port, () => net.createServer(connected));
  return {
    port: boundPort,
    close: () =>
      new Promise((resolve) => {
        for (const release of [...hanging]) release();
        for (const otap of otapStreams) otap.shutdown();
        for (const server of servers) server.close();
        for (const session of sessions) session.destroy();
        resolve(undefined);
      }),
  };
}
