// OTLP/gRPC (port 4317): the Export method of each signal's service, built from the signal table.
import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import { SIGNAL_LIST } from '../otlp/signals.js';
import { planOf } from '../faults/wire.js';
import { journalHeaders } from './receive.js';
import { keptText } from '../store/repeats.js';
import { UnaryCall } from './grpc-unary.js';
import { http2ServersOf } from './grpc-js-servers.js';
import { FIRST_STREAM_WINDOW, SESSION_WINDOW } from './grpc-windows.js';
import { takeOtapStream } from '../otap/index.js';

/**
 * Resets the TCP connection under an HTTP/2 session (RST), as a dropped connection does: every call on it ends,
 * and gRPC clients see UNAVAILABLE. Node hides a session's socket behind a proxy that refuses `destroy` but
 * passes `resetAndDestroy` through.
 * @param {import('node:http2').Http2Session|undefined} session none when the stream is closed
 */
function resetConnection(session) {
  if (session && !session.destroyed) /** @type {import('node:net').Socket} */ (session.socket).resetAndDestroy();
}

/** A 'timeout' listener: the stream is `this`, so no closure is made per call. @this {import('node:http2').ServerHttp2Stream} */
function cancelIdle() {
  this.close(http2.constants.NGHTTP2_CANCEL);
}

/** @param {string} host @param {number} port */
function address(host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Streams one connection may have open: plenty for any exporter, and a bound on what one client can hold. */
const MAX_CONCURRENT_STREAMS = 100;

/**
 * @param {{ receiver: import('./receive.js').Receiver, host: string, port: number,
 *   limits: import('./limits.js').ConnectionLimits }} options
 */
export async function startGrpcReceiver({ receiver, host, port, limits }) {
  const server = new grpc.Server({ 'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS });
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
      exchange.finish(grpc.status.INTERNAL, details, 'rejected');
      call.fail(grpc.status.INTERNAL, details);
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

  const boundPort = await new Promise((resolve, reject) => {
    server.bindAsync(address(host, port), grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  /** @type {import('node:http2').Http2Server[]} */
  let http2Servers;
  try {
    http2Servers = http2ServersOf(server);
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
  for (const http2Server of http2Servers) {
    http2Server.updateSettings({ initialWindowSize: FIRST_STREAM_WINDOW });
    http2Server.on('session', (session) => session.setLocalWindowSize(SESSION_WINDOW));
    const grpcJs = http2Server.listeners('stream');
    http2Server.removeAllListeners('stream');
    // grpc-js's listeners take the raw headers too, which the typed 'stream' event leaves out
    http2Server.on(
      'stream',
      (
        /** @type {import('node:http2').ServerHttp2Stream} */ stream,
        /** @type {import('node:http2').IncomingHttpHeaders} */ headers,
        /** @type {number} */ flags,
        /** @type {string[]} */ rawHeaders,
      ) => {
        // A stream that sends nothing for the idle timeout is cancelled; an Export call turns it off once its message
        // is whole, since any wait after that is the server's.
        stream.setTimeout(limits.idleTimeoutMs, cancelIdle);
        const signal = exportPaths.get(String(headers[':path']));
        const contentType = headers['content-type'];
        if (signal && typeof contentType === 'string' && contentType.startsWith('application/grpc')) {
          new UnaryCall(stream, headers, signal, receiver, answer, refused);
          return;
        }
        if (String(contentType).startsWith('application/grpc') && takeOtapStream(stream, headers, receiver, hanging, limits.idleTimeoutMs, otapStreams)) return;
        // Unknown methods (UNIMPLEMENTED) and other content types (415) are grpc-js's to answer.
        for (const listener of grpcJs) listener.call(http2Server, stream, headers, flags, rawHeaders);
      },
    );
  }
  return {
    server,
    port: /** @type {number} */ (boundPort),
    close: () =>
      new Promise((resolve) => {
        for (const release of [...hanging]) release();
        for (const otap of otapStreams) otap.shutdown();
        server.forceShutdown();
        resolve(undefined);
      }),
  };
}
