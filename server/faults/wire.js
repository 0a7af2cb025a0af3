// How each wire answers a verdict (DESIGN.md, "Fault actions and their wire mapping"). A wire is one entry of the
// WIRES table; `planOf` turns a verdict into a plan that the transport carries out as it stands: hold the request
// while its client stays, then write the answer it is given or drop the connection, and journal what the plan says.
import { status } from '@grpc/grpc-js';
import { ACTIONS } from './actions.js';
import { badRequestDetail, encodeExportResponse, encodeRetryInfo, encodeStatus, exportResponseJson, retryInfoDetail, statusJson } from '../otlp/schema.js';
import { wellFormed } from '../otlp/text.js';

/**
 * @typedef {import('./rules.js').FaultRule} FaultRule
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {import('../otlp/schema.js').Detail} Detail
 * @typedef {import('../store/journal.js').Outcome} Outcome
 * @typedef {{ rejected: number, errorMessage: string }} Partial
 * @typedef {Pick<FaultRule, 'id'|'action'|'httpStatus'|'grpcCode'|'retryAfterMs'|'message'>} AnswerRule
 *   what an error answer is made of: a fault rule, or a rule standing for a forward target's answer
 * @typedef {{ kind: 'invalid', message: string }
 *   | { kind: 'tooLarge', message: string }
 *   | { kind: 'accepted', partial: Partial|null, delayMs: number }
 *   | { kind: 'fault', rule: AnswerRule, outcome?: Outcome }
 *   | { kind: 'reset', rule: AnswerRule }
 *   | { kind: 'hang', rule: AnswerRule }} Verdict
 *   What becomes of a request (transport/receive.js decides it). `fault` answers with the error of `rule`: a fault
 *   rule's, or (outcome `rejected`) one standing for what the forward target answered, or for a request the forward
 *   target had no room for.
 * @typedef {{ httpStatus: number, grpcCode: number, message: string, retryAfterMs: number|null, details: Detail[]|null }} ErrorAnswer
 *   An error as every wire can say it. `details`: a fault's google.rpc.Status details; a refusal has none, and gRPC
 *   then sends no grpc-status-details-bin, as grpc-js sends none with its own errors.
 * @typedef {{ status: number, message: string, headers: Readonly<Record<string, string>>, body: Buffer }} HttpAnswer
 * @typedef {{ status: number, message: string, response: Uint8Array|null, trailers: Readonly<Record<string, string>> }} GrpcAnswer
 *   `status` is the gRPC code; `response` the Export response of an OK answer, null for an error (trailers only).
 * @typedef {{ status: number, message: string }} OtapAnswer
 *   An OTAP BatchStatus: `status` its status_code (gRPC's numbers), `message` its status_message.
 * @typedef {{ drop: 'reset'|'close', outcome: Outcome }} Drop
 *   No answer: the connection is reset (an RST) or closed, and the journal records `outcome` without a response.
 */

/**
 * One wire's answers. Each has a `status` (the HTTP status or the gRPC code) and a `message`, which the journal
 * records, and what the wire writes, in its own terms. `hangEnds`: when the hang limit passes, the wire answers
 * DEADLINE_EXCEEDED or closes the connection.
 * @template A
 * @typedef {{
 *   success: (signal: Signal, partial: Partial|null, json: boolean) => A,
 *   error: (error: ErrorAnswer, json: boolean) => A,
 *   hangEnds: 'answer'|'close',
 * }} Wire
 */

/**
 * What the transport does: hold the request up to `holdMs` (a client that leaves meanwhile is journaled `ifGone`
 * and gets nothing), then write the answer (`then`, journaled with its `outcome` and `partial`) or drop. A `paced`
 * answer is a refusal a client can loop on: it is written at the pace of refused bodies (receive.js bodyRefusals),
 * or, were it to wait too long, the client is closed unanswered.
 * @template A
 * @typedef {{ holdMs: number, ifGone: Outcome, then: (A & { outcome: Outcome, partial: Partial|null })|Drop, paced?: true }} Plan
 */

const PROTOBUF_HEADERS = Object.freeze({ 'content-type': 'application/x-protobuf' });
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });
const NO_TRAILERS = Object.freeze({});

/**
 * A Buffer, not a string: a plain success's answer is built once and written for every request it answers, as the
 * bytes they are, with no string to encode each time. @param {string|Uint8Array} body
 */
function bytesOf(body) {
  return typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** @param {Uint8Array} bytes */
const base64 = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** OTLP/HTTP: a status, headers, and the export response or a google.rpc.Status body in the request's encoding. @type {Wire<HttpAnswer>} */
const HTTP = {
  success: (signal, partial, json) => ({
    status: 200,
    message: partial ? partial.errorMessage : 'OK',
    headers: json ? JSON_HEADERS : PROTOBUF_HEADERS,
    body: bytesOf(json ? exportResponseJson(signal, partial) : encodeExportResponse(signal, partial)),
  }),
  error: ({ httpStatus, grpcCode, message, retryAfterMs, details }, json) => {
    let headers = json ? JSON_HEADERS : PROTOBUF_HEADERS;
    // Retry-After carries whole seconds: rounded up, so that a client never comes back early.
    if (retryAfterMs !== null) headers = Object.freeze({ ...headers, 'retry-after': String(Math.ceil(retryAfterMs / 1000)) });
    return {
      status: httpStatus,
      message,
      headers,
      body: bytesOf(json ? statusJson(grpcCode, message, details ?? []) : encodeStatus(grpcCode, message, details ?? [])),
    };
  },
  hangEnds: 'close',
};

/**
 * OTLP/gRPC: a code, grpc-message, and the Export response or trailers. A fault's trailers carry
 * `grpc-status-details-bin` (a google.rpc.Status with the same code, whose details hold RetryInfo or BadRequest) and,
 * with a retry hint, `google.rpc.retryinfo-bin`, which the Python exporter reads.
 * @type {Wire<GrpcAnswer>}
 */
const GRPC = {
  success: (signal, partial) => ({
    status: status.OK,
    message: partial ? partial.errorMessage : 'OK',
    response: encodeExportResponse(signal, partial),
    trailers: NO_TRAILERS,
  }),
  error: ({ grpcCode, message, retryAfterMs, details }) => {
    /** @type {Record<string, string>} */
    const trailers = {};
    if (details) trailers['grpc-status-details-bin'] = base64(encodeStatus(grpcCode, message, details));
    if (retryAfterMs !== null) trailers['google.rpc.retryinfo-bin'] = base64(encodeRetryInfo(retryAfterMs));
    return { status: grpcCode, message, response: null, trailers: Object.freeze(trailers) };
  },
  hangEnds: 'answer',
};

/**
 * OTAP: one BatchStatus per batch, a code and a message only. A BatchStatus has no details and no partial success,
 * so the retry hint goes in the message, and a partial success is an OK whose message is its error message.
 * A reset ends the stream (the transport cancels it); a hang withholds the batch's status.
 * @type {Wire<OtapAnswer>}
 */
const OTAP = {
  success: (_signal, partial) => ({ status: status.OK, message: partial ? partial.errorMessage : '' }),
  error: ({ grpcCode, message, retryAfterMs }) => ({
    status: grpcCode,
    message: retryAfterMs === null ? message : `${message} (retry after ${retryAfterMs / 1000} s)`,
  }),
  hangEnds: 'answer',
};

/**
 * @typedef {{ http: HttpAnswer, grpc: GrpcAnswer, otap: OtapAnswer }} AnswerOf
 * @typedef {keyof AnswerOf} WireName
 */

/** @type {Readonly<{ [W in WireName]: Wire<AnswerOf[W]> }>} */
export const WIRES = Object.freeze({ http: HTTP, grpc: GRPC, otap: OTAP });

/** What the transport does with a decided rule: answer with an error, answer OK with partial success, or wait/tear down/hold. @param {AnswerRule} rule */
export function answerOf(rule) {
  return ACTIONS[rule.action].answer;
}

/** Whether the request's data is kept when this rule faults it (`partial` and `delay`). @param {FaultRule} rule */
export function storesData(rule) {
  return ACTIONS[rule.action].stored;
}

/**
 * The partial-success payload of a `partial` rule, for `encodeExportResponse` / `exportResponseJson`.
 * @param {FaultRule} rule @returns {Partial}
 */
export function partialOf(rule) {
  if (rule.action !== 'partial') throw new TypeError(`fault ${rule.id} (${rule.action}) is not a partial success`);
  return { rejected: /** @type {number} */ (rule.rejectItems), errorMessage: /** @type {string} */ (rule.message) };
}

/** google.protobuf.Duration's largest value (10,000 years), in milliseconds. */
const MAX_RETRY_MS = 315_576_000_000_000;

/**
 * The rule's retry hint as every wire can carry it: a whole number of milliseconds within a Duration's range. An
 * upstream's answer gives the rules that stand in for it (forward/), whose hints may be fractions or endless.
 * @param {AnswerRule} rule @returns {number|null}
 */
function retryAfterOf(rule) {
  const ms = rule.retryAfterMs;
  if (ms == null || Number.isNaN(ms)) return null;
  return Math.min(MAX_RETRY_MS, Math.max(0, Math.ceil(ms)));
}

/**
 * The gRPC code a rule answers with on a wire: its own, or on OTAP the action's `otapCode` while the rule keeps the
 * action's default code.
 * @param {AnswerRule} rule @param {WireName} wire @returns {number}
 */
export function grpcCodeOn(rule, wire) {
  const spec = ACTIONS[rule.action];
  const code = /** @type {number} */ (rule.grpcCode);
  return wire === 'otap' && spec.otapCode !== undefined && code === spec.grpcCode ? spec.otapCode : code;
}

/** @param {AnswerRule} rule @param {WireName} wire @returns {ErrorAnswer} */
function errorOf(rule, wire) {
  if (answerOf(rule) !== 'error') throw new TypeError(`fault ${rule.id} (${rule.action}) is not answered with an error status`);
  const retryAfterMs = retryAfterOf(rule);
  // Rules made from an upstream's answer carry its text, which no rule validation has seen.
  const message = wellFormed(/** @type {string} */ (rule.message));
  const details = [];
  if (retryAfterMs !== null) details.push(retryInfoDetail(retryAfterMs));
  if (rule.action === 'reject') details.push(badRequestDetail(message));
  return { httpStatus: /** @type {number} */ (rule.httpStatus), grpcCode: grpcCodeOn(rule, wire), message, retryAfterMs, details };
}

// A rule never changes once added, so each of its answers is built once and handed out again.
/** @type {WeakMap<AnswerRule, Map<string, Readonly<AnswerOf[WireName]>>>} */
const built = new WeakMap();

/**
 * A rule's error answer on a wire (in the request's encoding, where the wire has more than one). The result is
 * shared between requests: send it, never modify it.
 * @template {WireName} W
 * @param {AnswerRule} rule @param {W} wire @param {boolean} [json] whether the request was OTLP/JSON
 * @returns {AnswerOf[W]}
 */
export function faultAnswer(rule, wire, json = false) {
  let answers = built.get(rule);
  if (!answers) built.set(rule, (answers = new Map()));
  const key = json ? `${wire}+json` : wire;
  let answer = answers.get(key);
  if (!answer) {
    const fresh = Object.freeze(/** @type {AnswerOf[WireName]} */ (WIRES[wire].error(errorOf(rule, wire), json)));
    answers.set(key, fresh);
    answer = fresh;
  }
  return /** @type {any} */ (answer);
}

/**
 * A refusal's answer on a wire: no details, no retry hint.
 * @template {WireName} W
 * @param {W} wire @param {number} httpStatus @param {number} grpcCode @param {string} message @param {boolean} json
 * @returns {AnswerOf[W]}
 */
export function refusalAnswer(wire, httpStatus, grpcCode, message, json) {
  /** @type {Wire<AnswerOf[W]>} */
  const answers = WIRES[wire];
  return answers.error({ httpStatus, grpcCode, message, retryAfterMs: null, details: null }, json);
}

/** @type {Plan<never>} */
const RESET = Object.freeze({ holdMs: 0, ifGone: 'reset', then: Object.freeze({ drop: 'reset', outcome: 'reset' }) });
/** @type {Drop} */
const HANG_CLOSED = Object.freeze({ drop: 'close', outcome: 'hang' });

/**
 * An answer as the plan writes it: with what the journal records of it.
 * @template A
 * @param {A} answer @param {Outcome} outcome @param {Partial|null} [partial]
 * @returns {A & { outcome: Outcome, partial: Partial|null }}
 */
function reply(answer, outcome, partial = null) {
  return { ...answer, outcome, partial };
}

/**
 * @template A
 * @param {A} answer @param {Outcome} outcome
 * @returns {Plan<A>}
 */
function answerNow(answer, outcome) {
  return { holdMs: 0, ifGone: 'abandoned', then: reply(answer, outcome) };
}

/** The plain success, the receive path's usual answer: one plan per wire, encoding and signal, built on first use. */
const successPlans = {
  http: [new Map(), new Map()],
  grpc: [new Map(), new Map()],
  otap: [new Map(), new Map()],
};

/**
 * @template {WireName} W
 * @param {W} wire @param {Signal} signal @param {boolean} json
 * @returns {Plan<AnswerOf[W]>}
 */
function successPlan(wire, signal, json) {
  const plans = successPlans[wire][json ? 1 : 0];
  let plan = plans.get(signal.name);
  if (!plan) {
    plan = Object.freeze(answerNow(WIRES[wire].success(signal, null, json), 'accepted'));
    plans.set(signal.name, plan);
  }
  return plan;
}

/**
 * What a wire does with a verdict.
 * @template {WireName} W
 * @param {Verdict} verdict @param {W} wire @param {Signal} signal @param {boolean} json whether the request was OTLP/JSON
 * @param {number} hangLimitMs how long a hang holds a request whose client stays
 * @returns {Plan<AnswerOf[W]>}
 */
export function planOf(verdict, wire, signal, json, hangLimitMs) {
  /** @type {Wire<AnswerOf[W]>} */
  const answers = WIRES[wire];
  switch (verdict.kind) {
    case 'accepted': {
      const { partial, delayMs } = verdict;
      if (partial === null && delayMs === 0) return successPlan(wire, signal, json);
      return { holdMs: delayMs, ifGone: 'abandoned', then: reply(answers.success(signal, partial, json), partial ? 'partial' : 'accepted', partial) };
    }
    case 'invalid':
      return answerNow(refusalAnswer(wire, 400, status.INVALID_ARGUMENT, verdict.message, json), 'rejected');
    case 'tooLarge':
      return { ...answerNow(refusalAnswer(wire, 413, status.RESOURCE_EXHAUSTED, verdict.message, json), 'rejected'), paced: true };
    case 'fault':
      return answerNow(faultAnswer(verdict.rule, wire, json), verdict.outcome ?? 'faulted');
    case 'reset':
      return RESET;
    case 'hang': {
      const end = answers.hangEnds === 'close' ? HANG_CLOSED : reply(refusalAnswer(wire, 504, status.DEADLINE_EXCEEDED, 'hang limit reached', json), 'hang');
      return { holdMs: hangLimitMs, ifGone: 'hang', then: end };
    }
  }
}
