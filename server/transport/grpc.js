// OTLP/gRPC (port 4317): the Export method of each signal's service, built from the signal table.
import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import { SIGNALS } from '../otlp/signals.js';
import { encodeExportResponse } from '../otlp/schema.js';
import { grpcFault } from '../faults/wire.js';
import { journalHeaders } from './receive.js';

/** Bytes in and out untouched: decoding is ours, so that a bad message gets a precise INVALID_ARGUMENT. */
const identity = (/** @type {Buffer} */ b) => b;

/**
 * grpc-js's own call object under a unary call, which holds the HTTP/2 stream and the request's
 * `grpc-encoding` (removed from the metadata handlers see). grpc-js has no public way to reach either,
 * so this walks its call wrappers; it returns null if an upgrade moves them, and the tests would say so.
 * @param {any} call
 * @returns {{ stream: import('node:http2').ServerHttp2Stream, incomingEncoding?: string }|null}
 */
function innerCall(call) {
  let inner = call.call;
  for (let i = 0; inner && i < 8; i++) {
    if (inner.stream) return inner;
    inner = inner.nextCall ?? inner.call;
  }
  return null;
}

/** @param {ReturnType<typeof innerCall>} inner */
function encodingOf(inner) {
  const encoding = inner?.incomingEncoding ?? '';
  return encoding === 'identity' ? '' : encoding;
}

/**
 * Resets the TCP connection under an HTTP/2 session (RST), as a dropped connection does: every call on it ends,
 * and gRPC clients see UNAVAILABLE. Node hides a session's socket behind a proxy that refuses `destroy` but
 * passes `resetAndDestroy` through.
 * @param {import('node:http2').Http2Session} session
 */
function resetConnection(session) {
  if (!session.destroyed) /** @type {import('node:net').Socket} */ (session.socket).resetAndDestroy();
}

/** @param {string} host @param {number} port */
function address(host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Streams one connection may have open: plenty for any exporter, and a bound on what one client can hold. */
const MAX_CONCURRENT_STREAMS = 100;

/**
 * Flow-control windows. HTTP/2's default of 64 KiB per connection, which grpc-js keeps, makes a client with four
 * 50 KiB batches under way wait for WINDOW_UPDATE round trips, and the server read and answer more, smaller
 * frames; grpc-go servers (the Collector's) grow theirs up to 16 MiB. Under versus-collector.sh's load (traces,
 * `--print none`, 5 interleaved runs) the median went from 205,479 to 248,963 spans per server CPU-second (1.21×).
 * A client still cannot send more than these windows before the server reads.
 */
const STREAM_WINDOW = 1024 * 1024;
const SESSION_WINDOW = 8 * 1024 * 1024;

/**
 * grpc-js buffers a message until it is whole and has no timeout or memory bound of its own for a client that
 * sends slowly or stops: each stream on grpc-js's HTTP/2 servers (reached through a field grpc-js does not
 * document; the timeout test fails if an upgrade moves it) gets both. A stalled stream is cancelled, which
 * clients see as CANCELLED. Every byte received counts against the receiver's in-flight budget from its arrival
 * until the stream closes, after its answer; a stream that would pass the budget is refused (REFUSED_STREAM,
 * which clients see as UNAVAILABLE and retry).
 * @param {grpc.Server} server @param {number} idleTimeoutMs @param {import('./receive.js').Receiver} receiver
 */
function limitStreams(server, idleTimeoutMs, receiver) {
  const servers = /** @type {Map<import('node:http2').Http2Server, unknown>|undefined} */ (/** @type {any} */ (server).http2Servers);
  for (const http2Server of servers?.keys() ?? []) {
    http2Server.updateSettings({ initialWindowSize: STREAM_WINDOW });
    http2Server.on('session', (session) => session.setLocalWindowSize(SESSION_WINDOW));
    http2Server.on('stream', (stream) => {
      stream.setTimeout(idleTimeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      let held = 0;
      stream.on('data', (/** @type {Buffer} */ chunk) => {
        if (receiver.reserve(chunk.length, held)) held += chunk.length;
        else if (!stream.closed) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      });
      stream.once('close', () => receiver.release(held));
    });
  }
}

/**
 * @param {{ receiver: import('./receive.js').Receiver, host: string, port: number,
 *   limits: import('./limits.js').ConnectionLimits }} options
 */
export async function startGrpcReceiver({ receiver, host, port, limits }) {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': receiver.maxRequestBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
  });
  /** @type {Set<() => void>} */
  const hanging = new Set();

  for (const signal of SIGNALS) {
    const definition = {
      [signal.grpcMethod]: {
        path: `/${signal.grpcService}/${signal.grpcMethod}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    };
    /** @param {grpc.ServerUnaryCall<Buffer, Buffer>} call @param {grpc.sendUnaryData<Buffer>} callback */
    const exportCall = async (call, callback) => {
      const inner = innerCall(call);
      // The message is whole: from here on, any wait is the server's (a delay or hang fault), not the client's.
      inner?.stream.setTimeout(0);
      await answer(call, callback, inner);
    };
    /**
     * @param {grpc.ServerUnaryCall<Buffer, Buffer>} call @param {grpc.sendUnaryData<Buffer>} callback
     * @param {ReturnType<typeof innerCall>} inner
     */
    const answer = async (call, callback, inner) => {
      const md = call.metadata.getMap();
      const exchange = receiver.begin({
        transport: 'grpc',
        signal,
        path: `/${signal.grpcService}/${signal.grpcMethod}`,
        contentType: String(md['content-type'] ?? 'application/grpc'),
        contentEncoding: encodingOf(inner),
        bytes: call.request.length,
        userAgent: String(md['user-agent'] ?? ''),
        headers: journalHeaders(/** @type {Record<string, string>} */ (Object.fromEntries(Object.entries(md).map(([k, v]) => [k, String(v)])))),
      });
      let verdict = exchange.decide(call.request, false, md);
      if (exchange.forwarding) verdict = await exchange.forwarded(verdict);
      switch (verdict.kind) {
        case 'invalid':
          exchange.finish(grpc.status.INVALID_ARGUMENT, verdict.message, 'rejected');
          callback({ code: grpc.status.INVALID_ARGUMENT, details: verdict.message });
          return;
        case 'tooLarge':
          exchange.finish(grpc.status.RESOURCE_EXHAUSTED, verdict.message, 'rejected');
          callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: verdict.message });
          return;
        case 'fault': {
          const f = grpcFault(verdict.rule);
          exchange.finish(f.code, f.details, verdict.outcome ?? 'faulted');
          callback({ code: f.code, details: f.details, metadata: f.metadata });
          return;
        }
        case 'reset': {
          const session = inner?.stream.session;
          if (!session) {
            exchange.finish(grpc.status.UNAVAILABLE, 'connection reset', 'faulted');
            callback({ code: grpc.status.UNAVAILABLE, details: 'connection reset' });
            return;
          }
          exchange.finish(null, '', 'reset');
          resetConnection(session);
          return;
        }
        case 'hang': {
          await new Promise((resolve) => {
            const timer = setTimeout(done, receiver.hangLimitMs);
            function done() {
              clearTimeout(timer);
              hanging.delete(done);
              resolve(undefined);
            }
            hanging.add(done);
            call.once('cancelled', done);
          });
          if (call.cancelled) {
            exchange.finish(null, '', 'hang');
            return;
          }
          exchange.finish(grpc.status.DEADLINE_EXCEEDED, 'hang limit reached', 'hang');
          callback({ code: grpc.status.DEADLINE_EXCEEDED, details: 'hang limit reached' });
          return;
        }
        default: {
          if (verdict.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, verdict.delayMs));
          const { partial } = verdict;
          exchange.finish(grpc.status.OK, partial ? partial.errorMessage : 'OK', partial ? 'partial' : 'accepted', partial);
          callback(null, Buffer.from(encodeExportResponse(signal.name, partial)));
        }
      }
    };
    server.addService(definition, { [signal.grpcMethod]: exportCall });
  }

  const boundPort = await new Promise((resolve, reject) => {
    server.bindAsync(address(host, port), grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  limitStreams(server, limits.idleTimeoutMs, receiver);
  return {
    server,
    port: /** @type {number} */ (boundPort),
    close: () =>
      new Promise((resolve) => {
        for (const release of [...hanging]) release();
        server.forceShutdown();
        resolve(undefined);
      }),
  };
}
