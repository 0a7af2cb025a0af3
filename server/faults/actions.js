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
 *   retryAfterMs?: number,
 *   delayMs?: number,
 *   rejectItems?: number,
 *   message?: string,
 * }} ActionSpec
 */

/** HTTP statuses an OTLP exporter retries (OTLP specification, "Retryable Response Codes"). */
export const RETRYABLE_HTTP = new Set([429, 502, 503, 504]);
/** gRPC codes it retries: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS (and RESOURCE_EXHAUSTED with RetryInfo). */
export const RETRYABLE_GRPC = new Set([1, 4, 10, 11, 14, 15]);

/** gRPC status codes by canonical name; a rule may give either form. */
export const GRPC_CODES = Object.freeze({
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
});

/** @type {Readonly<Record<FaultAction, ActionSpec>>} */
export const ACTIONS = Object.freeze({
  unavailable: {
    options: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 503,
    grpcCode: GRPC_CODES.UNAVAILABLE,
    message: 'service unavailable',
  },
  // gRPC exporters retry UNAVAILABLE, waiting as its RetryInfo says; RESOURCE_EXHAUSTED (grpcCode 8) is the
  // stricter variant, retried only because RetryInfo is present, so it catches exporters that ignore it.
  throttle: {
    options: ['retryAfterMs', 'httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 429,
    grpcCode: GRPC_CODES.UNAVAILABLE,
    retryAfterMs: 1000,
    message: 'too many requests, retry later',
  },
  reject: {
    options: ['httpStatus', 'grpcCode', 'message'],
    answer: 'error',
    stored: false,
    httpStatus: 400,
    grpcCode: GRPC_CODES.INVALID_ARGUMENT,
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

/** google.rpc.Code's HTTP mapping, index = gRPC code. */
const HTTP_OF_GRPC = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];

/** @type {Record<number, number>} */
const GRPC_OF_HTTP = {
  400: GRPC_CODES.INVALID_ARGUMENT,
  401: GRPC_CODES.UNAUTHENTICATED,
  403: GRPC_CODES.PERMISSION_DENIED,
  404: GRPC_CODES.NOT_FOUND,
  409: GRPC_CODES.ABORTED,
  429: GRPC_CODES.RESOURCE_EXHAUSTED,
  499: GRPC_CODES.CANCELLED,
  501: GRPC_CODES.UNIMPLEMENTED,
  // 502 and 503 are retryable over HTTP; UNAVAILABLE keeps them retryable over gRPC.
  502: GRPC_CODES.UNAVAILABLE,
  503: GRPC_CODES.UNAVAILABLE,
  504: GRPC_CODES.DEADLINE_EXCEEDED,
};

/** The HTTP status google.rpc.Code pairs with a gRPC code. @param {number} code */
export function httpStatusOfGrpc(code) {
  return HTTP_OF_GRPC[code] ?? 500;
}

/** The gRPC code for an HTTP error status (inverse of `httpStatusOfGrpc` where it is one-to-one). @param {number} status */
export function grpcCodeOfHttp(status) {
  return GRPC_OF_HTTP[status] ?? (status < 500 ? GRPC_CODES.FAILED_PRECONDITION : GRPC_CODES.INTERNAL);
}
