import { Metadata } from '@grpc/grpc-js';
import { ACTIONS } from './actions.js';
import { badRequestDetail, encodeRetryInfo, encodeStatus, retryInfoDetail, statusJson } from '../otlp/schema.js';
import { wellFormed } from '../otlp/text.js';

/**
 * How a fault rule's action looks on each wire (DESIGN.md, "Fault actions and their wire mapping").
 * Only the answers made of bytes are built here; `delay`, `reset` and `hang` are timing and socket
 * behaviour the transports carry out themselves.
 *
 * @typedef {import('./rules.js').FaultRule} FaultRule
 * @typedef {{ status: number, headers: Readonly<Record<string, string>>, body: Uint8Array|string }} HttpFault
 * @typedef {{ code: number, details: string, metadata: Metadata }} GrpcFault
 */

/** What the transport does with a decided rule: answer with an error, answer OK with partial success, or wait/tear down/hold. @param {FaultRule} rule */
export function answerOf(rule) {
  return ACTIONS[rule.action].answer;
}

/** Whether the request's data is kept when this rule faults it (`partial` and `delay`). @param {FaultRule} rule */
export function storesData(rule) {
  return ACTIONS[rule.action].stored;
}

/** google.protobuf.Duration's largest value (10,000 years), in milliseconds. */
const MAX_RETRY_MS = 315_576_000_000_000;

/**
 * The rule's retry hint as every wire can carry it: a whole number of milliseconds within a Duration's range. An
 * upstream's answer gives the rules that stand in for it (forward/), whose hints may be fractions or endless.
 * @param {FaultRule} rule @returns {number|null}
 */
function retryAfterOf(rule) {
  const ms = rule.retryAfterMs;
  if (ms == null || Number.isNaN(ms)) return null;
  return Math.min(MAX_RETRY_MS, Math.max(0, Math.ceil(ms)));
}

/** @param {FaultRule} rule */
function errorParts(rule) {
  if (answerOf(rule) !== 'error') throw new TypeError(`fault ${rule.id} (${rule.action}) is not answered with an error status`);
  const retryAfterMs = retryAfterOf(rule);
  // Rules made from an upstream's answer carry its text, which no rule validation has seen.
  const message = wellFormed(/** @type {string} */ (rule.message));
  const details = [];
  if (retryAfterMs !== null) details.push(retryInfoDetail(retryAfterMs));
  if (rule.action === 'reject') details.push(badRequestDetail(message));
  return { code: /** @type {number} */ (rule.grpcCode), message, details, retryAfterMs };
}

// A rule never changes once added, so each of its answers is built once and handed out again.
/** @type {WeakMap<FaultRule, { json?: HttpFault, proto?: HttpFault, grpc?: { message: string, metadata: Metadata } }>} */
const built = new WeakMap();

/** @param {FaultRule} rule */
function cacheOf(rule) {
  let cache = built.get(rule);
  if (!cache) built.set(rule, (cache = {}));
  return cache;
}

/**
 * The OTLP/HTTP answer for an error action: status, headers (`content-type`, and `retry-after` in
 * whole seconds rounded up when the rule has `retryAfterMs`) and a `google.rpc.Status` body in the
 * request's encoding. The result is shared between requests: send it, never modify it.
 * @param {FaultRule} rule @param {boolean} json whether the request was OTLP/JSON
 * @returns {HttpFault}
 */
export function httpFault(rule, json) {
  const cache = cacheOf(rule);
  const key = json ? 'json' : 'proto';
  const cached = cache[key];
  if (cached) return cached;
  const { code, message, details, retryAfterMs } = errorParts(rule);
  /** @type {Record<string, string>} */
  const headers = { 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  if (retryAfterMs !== null) headers['retry-after'] = String(Math.ceil(retryAfterMs / 1000));
  const fault = Object.freeze({
    status: /** @type {number} */ (rule.httpStatus),
    headers: Object.freeze(headers),
    body: json ? statusJson(code, message, details) : encodeStatus(code, message, details),
  });
  cache[key] = fault;
  return fault;
}

/**
 * The gRPC answer for an error action, in the shape a grpc-js unary handler passes to its callback
 * as the error: trailers carry `grpc-status-details-bin` (a `google.rpc.Status` with the same code,
 * whose details hold `RetryInfo` or `BadRequest`) and, with `retryAfterMs`, `google.rpc.retryinfo-bin`.
 * @param {FaultRule} rule @returns {GrpcFault}
 */
export function grpcFault(rule) {
  const cache = cacheOf(rule);
  let grpc = cache.grpc;
  if (!grpc) {
    const { code, message, details, retryAfterMs } = errorParts(rule);
    const metadata = new Metadata();
    metadata.set('grpc-status-details-bin', Buffer.from(encodeStatus(code, message, details)));
    if (retryAfterMs !== null) metadata.set('google.rpc.retryinfo-bin', Buffer.from(encodeRetryInfo(retryAfterMs)));
    grpc = { message, metadata };
    cache.grpc = grpc;
  }
  // grpc-js owns the Metadata it is given for the rest of the call, so each call gets its own copy.
  return {
    code: /** @type {number} */ (rule.grpcCode),
    details: grpc.message,
    metadata: grpc.metadata.clone(),
  };
}

/**
 * The partial-success payload of a `partial` rule, for `encodeExportResponse` / `exportResponseJson`.
 * @param {FaultRule} rule @returns {{ rejected: number, errorMessage: string }}
 */
export function partialOf(rule) {
  if (rule.action !== 'partial') throw new TypeError(`fault ${rule.id} (${rule.action}) is not a partial success`);
  return { rejected: /** @type {number} */ (rule.rejectItems), errorMessage: /** @type {string} */ (rule.message) };
}
