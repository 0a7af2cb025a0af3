// The OTLP/gRPC client of a forward target: one channel, raw bytes in and out of each Export call.
import * as grpc from '@grpc/grpc-js';
import { partialOf, shortText, statusOf } from './answer.js';
import { decodeRetryInfo } from '../otlp/schema.js';

/**
 * @typedef {import('./answer.js').UpstreamReply} UpstreamReply
 * @typedef {import('./target.js').TargetSpec} TargetSpec
 * @typedef {import('../otlp/signals.js').Signal} Signal
 */

/** The message is already OTLP protobuf: grpc-js frames it and hands back the answer's bytes untouched. */
const identity = (/** @type {Buffer} */ b) => b;
/** grpc-js says so when the call never reached a server (refused, dropped, unresolvable). */
const NO_CONNECTION = /no connection established|connection dropped|failed to connect|ECONN|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|name resolution/i;

export class GrpcUpstream {
  /** @param {TargetSpec} spec @param {{ maxRequestBytes: number }} options */
  constructor(spec, { maxRequestBytes }) {
    this.spec = spec;
    const address = spec.host.includes(':') ? `[${spec.host}]:${spec.port}` : `${spec.host}:${spec.port}`;
    const credentials = spec.tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
    this.client = new grpc.Client(address, credentials, {
      'grpc.max_send_message_length': maxRequestBytes,
      'grpc.max_receive_message_length': 4 * 1024 * 1024,
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms[spec.compression === 'gzip' ? 'gzip' : 'identity'],
    });
  }

  /**
   * @param {Signal} signal @param {Buffer} body protobuf @param {Record<string, string|Buffer>} headers
   * @param {AbortSignal} abort @param {number} deadline epoch ms, sent along as grpc-timeout
   * @returns {Promise<UpstreamReply>}
   */
  send(signal, body, headers, abort, deadline) {
    const metadata = new grpc.Metadata();
    for (const [name, value] of Object.entries(headers)) {
      // grpc-js refuses a text value on a -bin key and the other way round; such a header is not forwarded.
      if (name.endsWith('-bin') === Buffer.isBuffer(value)) metadata.set(name, value);
    }
    return new Promise((resolve) => {
      const call = this.client.makeUnaryRequest(`/${signal.grpcService}/${signal.grpcMethod}`, identity, identity, body, metadata, { deadline }, (err, answer) => {
        abort.removeEventListener('abort', cancel);
        if (!err) {
          resolve({
            kind: 'answer',
            ok: true,
            status: grpc.status.OK,
            code: null,
            message: 'OK',
            retryAfterMs: null,
            partial: partialOf(signal, answer ?? Buffer.alloc(0), false),
          });
          return;
        }
        const trailers = err.metadata?.getMap() ?? {};
        if (err.code === grpc.status.UNAVAILABLE && !Object.keys(trailers).length && NO_CONNECTION.test(err.details)) {
          resolve({ kind: 'failed', message: `no answer: ${shortText(err.details)}` });
          return;
        }
        const details = trailers['grpc-status-details-bin'];
        const status = Buffer.isBuffer(details) ? statusOf(details, false) : null;
        const info = trailers['google.rpc.retryinfo-bin'];
        const retryAfterMs = status?.retryAfterMs ?? (Buffer.isBuffer(info) ? retryInfoMs(info) : null);
        resolve({ kind: 'answer', ok: false, status: err.code, code: err.code, message: shortText(err.details ?? ''), retryAfterMs, partial: null });
      });
      const cancel = () => call.cancel();
      abort.addEventListener('abort', cancel, { once: true });
    });
  }

  close() {
    this.client.close();
  }
}

/** `google.rpc.retryinfo-bin`, which some servers send instead of (or besides) the Status detail. @param {Buffer} bytes */
function retryInfoMs(bytes) {
  try {
    const { retryDelay } = decodeRetryInfo(bytes);
    return Number(retryDelay.seconds) * 1000 + Math.round(retryDelay.nanos / 1e6);
  } catch {
    return null;
  }
}
