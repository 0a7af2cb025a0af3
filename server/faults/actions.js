import { status } from '@grpc/grpc-js';

/**
 * The fault actions: which options each one takes and what it sends when the rule leaves them out.
 * DESIGN.md's wire table lives here as data so the rule model (validation, defaults shown in
 * `GET /api/faults`) and the wire encoders (`wire.js`) cannot disagree.
 *
 * @typedef {'unavailable'|'throttle'|'reject'|'status'|'partial'|'delay'|'reset'|'hang'} FaultAction
 * @typedef {'retryAfterMs'|'delayMs'|'httpStatus'|'grpcCode'|'rejectItems'|'message'} ActionOption
 * @typedef {{
 *   options: readonly ActionOption[],
 *   answer: 'error'|'partial'|'delay'|'reset'|'hang',
 *   stored: boolean,
 *   httpStatus?: number,
 *   grpcCode?: number,
 *   otapCode?: number,
 *   retryAfterMs?: number,
 *   delayMs?: number,
 *   rejectItems?: number,
 *   message?: string,
 * }} ActionSpec
 */

/** HTTP statuses an OTLP exporter retries (OTLP specification, "Retryable Response Codes"). */
export const RETRYABLE_HTTP = new Set([429, 502, 503, 504]);
/** gRPC codes it retries (and RESOURCE_EXHAUSTED, but only with RetryInfo). */
export const RETRYABLE_GRPC = new Set([status.CANCELLED, status.DEADLINE_EXCEEDED, status.ABORTED, status.OUT_OF_RANGE, status.UNAVAILABLE, status.DATA_LOSS]);

/** grpc-js's `status` enum read both ways: it maps each name to its code and each code back to its name. */
const CODE_TABLE = /** @type {Readonly<Record<string, number|string>>} */ (/** @type {unknown} */ (status));

/** The error codes' names, CANCELLED to UNAUTHENTICATED: what a rule may give as its `grpcCode`. */
export const GRPC_ERROR_NAMES = Object.freeze(Object.keys(CODE_TABLE).filter((name) => typeof CODE_TABLE[name] === 'number' && CODE_TABLE[name] !== status.OK));

/** The error code of a name such as UNAVAILABLE (any case); undefined for OK and unknown names. @param {string} name */
export function grpcCodeNamed(name) {
  const upper = name.toUpperCase();
  return GRPC_ERROR_NAMES.includes(upper) ? /** @type {number} */ (CODE_TABLE[upper]) : undefined;
}

/** The name of an error code (14 → UNAVAILABLE); undefined for OK and codes gRPC does not define. @param {number} code */
export function grpcCodeName(code) {
  const name = code === status.OK ? undefined : CODE_TABLE[code];
  return typeof name === 'string' ? name : undefined;
}

/** @type {Readonly<Record<FaultAction, ActionSpec>>} */
export const ACTIONS = Object.freeze({
  unavailable: {
    options: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 503,
    grpcCode: status.UNAVAILABLE,
    message: 'service unavailable',
  },
  // gRPC exporters retry UNAVAILABLE, waiting as its RetryInfo says; RESOURCE_EXHAUSTED (grpcCode 8) is the
  // stricter variant, retried only because RetryInfo is present, so it catches exporters that ignore it. A BatchStatus
  // has no RetryInfo to tell the two apart, so OTAP says "throttled" as RESOURCE_EXHAUSTED (`otapCode`, used while
  // the rule keeps the default grpcCode), with the wait in its message.
  throttle: {
    options: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 429,
    grpcCode: status.UNAVAILABLE,
    otapCode: status.RESOURCE_EXHAUSTED,
    retryAfterMs: 1000,
    message: 'too many requests, retry later',
  },
  reject: {
    options: ['httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 400,
    grpcCode: status.INVALID_ARGUMENT,
    message: 'request rejected as invalid',
  },
  status: {
    options: ['httpStatus', 'grpcCode', 'retryAfterMs', 'message'],
    answer: 'error',
    stored: false,
  },
  partial: {
    options: ['rejectItems', 'message'],
    answer: 'partial',
    stored: true,
    rejectItems: 1,
  },
  delay: {
    options: ['delayMs'],
    answer: 'delay',
    stored: true,
    delayMs: 1000,
  },
  reset: { options: [], answer: 'reset', stored: false },
  hang: { options: [], answer: 'hang', stored: false },
});

export const ACTION_NAMES = /** @type {FaultAction[]} */ (Object.keys(ACTIONS));

/** google.rpc.Code's HTTP mapping. */
const HTTP_OF_GRPC = /** @type {Readonly<Record<number, number>>} */ ({
  [status.OK]: 200,
  [status.CANCELLED]: 499,
  [status.UNKNOWN]: 500,
  [status.INVALID_ARGUMENT]: 400,
  [status.DEADLINE_EXCEEDED]: 504,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.PERMISSION_DENIED]: 403,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.FAILED_PRECONDITION]: 400,
  [status.ABORTED]: 409,
  [status.OUT_OF_RANGE]: 400,
  [status.UNIMPLEMENTED]: 501,
  [status.INTERNAL]: 500,
  [status.UNAVAILABLE]: 503,
  [status.DATA_LOSS]: 500,
  [status.UNAUTHENTICATED]: 401,
});

/** @type {Record<number, number>} */
const GRPC_OF_HTTP = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  409: status.ABORTED,
  429: status.RESOURCE_EXHAUSTED,
  499: status.CANCELLED,
  501: status.UNIMPLEMENTED,
  // 502 and 503 are retryable over HTTP; UNAVAILABLE keeps them retryable over gRPC.
  502: status.UNAVAILABLE,
  503: status.UNAVAILABLE,
  504: status.DEADLINE_EXCEEDED,
};

/** The HTTP status google.rpc.Code pairs with a gRPC code. @param {number} code */
export function httpStatusOfGrpc(code) {
  return HTTP_OF_GRPC[code] ?? 500;
}

/** The gRPC code for an HTTP error status (inverse of `httpStatusOfGrpc` where it is one-to-one). @param {number} httpStatus */
export function grpcCodeOfHttp(httpStatus) {
  return GRPC_OF_HTTP[httpStatus] ?? (httpStatus < 500 ? status.FAILED_PRECONDITION : status.INTERNAL);
}
