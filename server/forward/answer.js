// What an upstream answered, read from its wire, and what the client is told in turn.
import { status as grpcStatus } from '@grpc/grpc-js';
import { decodeStatus, responseType } from '../otlp/schema.js';
import { RETRYABLE_GRPC, RETRYABLE_HTTP, grpcCodeName, grpcCodeOfHttp, httpStatusOfGrpc } from '../faults/actions.js';

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {{ rejected: number, errorMessage: string }} Partial
 * @typedef {{ kind: 'answer', ok: boolean, status: number, code: number|null, message: string,
 *   retryAfterMs: number|null, partial: Partial|null }
 *   | { kind: 'failed', message: string }} UpstreamReply
 *   `answer`: the upstream answered; `status` is its HTTP status or gRPC code, `code` the google.rpc code of its
 *   error body. `failed`: no answer came (connection refused or dropped, a malformed response).
 * @typedef {{ ok: true, partial: Partial|null }
 *   | { ok: false, httpStatus: number, grpcCode: number, retryAfterMs: number|null, message: string }} ClientAnswer
 */

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const MAX_MESSAGE = 1024;

/** @param {string} text */
export function shortText(text) {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const clean = text.replace(/[\0-\x08\x0b-\x1f\x7f]/g, ' ').trim();
  return clean.length > MAX_MESSAGE ? `${clean.slice(0, MAX_MESSAGE)}…` : clean;
}

/** @param {unknown} v */
const count = (v) => {
  const n = Number(v ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/**
 * The partial success of an export response, or null for full success (also when the body cannot be read: the
 * status said success).
 * @param {Signal} signal @param {Buffer} body @param {boolean} json
 * @returns {Partial|null}
 */
export function partialOf(signal, body, json) {
  if (body.length === 0) return null;
  let ps;
  try {
    if (json) {
      const parsed = JSON.parse(body.toString('utf8'));
      ps = parsed?.partialSuccess ?? parsed?.partial_success;
      if (ps && typeof ps === 'object') {
        const snake = signal.rejectedField.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
        ps = { rejected: ps[signal.rejectedField] ?? ps[snake], errorMessage: ps.errorMessage ?? ps.error_message };
      }
    } else {
      const type = responseType(signal);
      const decoded = /** @type {any} */ (type.toObject(type.decode(body), { longs: String }));
      ps = decoded.partialSuccess && { rejected: decoded.partialSuccess[signal.rejectedField], errorMessage: decoded.partialSuccess.errorMessage };
    }
  } catch {
    return null;
  }
  if (!ps || typeof ps !== 'object') return null;
  const rejected = count(ps.rejected);
  const errorMessage = typeof ps.errorMessage === 'string' ? shortText(ps.errorMessage) : '';
  return rejected > 0 || errorMessage ? { rejected, errorMessage } : null;
}

/** proto3 JSON's Duration text ("1.5s") in milliseconds. @param {unknown} text */
function durationMs(text) {
  const m = typeof text === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(text) : null;
  return m ? Math.round(Number(m[1]) * 1000) : null;
}

/**
 * A google.rpc.Status error body: its code, message and RetryInfo, or null when the body is not one.
 * @param {Buffer} body @param {boolean} json
 * @returns {{ code: number, message: string, retryAfterMs: number|null }|null}
 */
export function statusOf(body, json) {
  if (body.length === 0) return null;
  try {
    if (json) {
      const parsed = JSON.parse(body.toString('utf8'));
      if (!parsed || typeof parsed !== 'object') return null;
      const info = Array.isArray(parsed.details) ? parsed.details.find((/** @type {any} */ d) => d?.['@type'] === RETRY_INFO) : undefined;
      return {
        code: Number.isInteger(parsed.code) ? parsed.code : 0,
        message: typeof parsed.message === 'string' ? shortText(parsed.message) : '',
        retryAfterMs: info ? durationMs(info.retryDelay) : null,
      };
    }
    const status = decodeStatus(body);
    const info = /** @type {any} */ (status.details.find((d) => d.typeUrl === RETRY_INFO))?.value;
    return {
      code: status.code,
      message: shortText(status.message),
      retryAfterMs: info ? Number(info.retryDelay.seconds) * 1000 + Math.round(info.retryDelay.nanos / 1e6) : null,
    };
  } catch {
    return null;
  }
}

/** Retry-After in whole seconds or as an HTTP date, in milliseconds from now. @param {string|undefined} header */
export function retryAfterOf(header) {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * What the client is told when the upstream answered with an error, so that it retries exactly when it would have
 * retried that upstream: a retryable status on one wire stays retryable on the other.
 * @param {Extract<UpstreamReply, { kind: 'answer' }>} reply @param {'grpc'|'http'} upstreamTransport
 * @returns {Extract<ClientAnswer, { ok: false }>}
 */
function refusal(reply, upstreamTransport) {
  const { status, message, retryAfterMs } = reply;
  if (upstreamTransport === 'http') {
    const grpcCode = RETRYABLE_HTTP.has(status)
      ? status === 504
        ? grpcStatus.DEADLINE_EXCEEDED
        : grpcStatus.UNAVAILABLE
      : reply.code !== null && grpcCodeName(reply.code) !== undefined
        ? reply.code
        : grpcCodeOfHttp(status);
    return { ok: false, httpStatus: status, grpcCode, retryAfterMs, message };
  }
  let httpStatus = httpStatusOfGrpc(status);
  if (status === grpcStatus.RESOURCE_EXHAUSTED) httpStatus = 429;
  else if (status === grpcStatus.DEADLINE_EXCEEDED) httpStatus = 504;
  else if (RETRYABLE_GRPC.has(status)) httpStatus = 503;
  return { ok: false, httpStatus, grpcCode: status, retryAfterMs, message };
}

/**
 * @param {UpstreamReply} reply @param {'grpc'|'http'} upstreamTransport
 * @returns {ClientAnswer}
 */
export function clientAnswerOf(reply, upstreamTransport) {
  if (reply.kind === 'failed') return failedAnswer(reply.message);
  if (reply.ok) return { ok: true, partial: reply.partial };
  return refusal(reply, upstreamTransport);
}

/** No answer from the upstream: a proxy's 502, and UNAVAILABLE as a dropped gRPC connection. @param {string} message */
export function failedAnswer(message) {
  return /** @type {const} */ ({ ok: false, httpStatus: 502, grpcCode: grpcStatus.UNAVAILABLE, retryAfterMs: null, message });
}

/** @param {string} message */
export function timeoutAnswer(message) {
  return /** @type {const} */ ({ ok: false, httpStatus: 504, grpcCode: grpcStatus.DEADLINE_EXCEEDED, retryAfterMs: null, message });
}
