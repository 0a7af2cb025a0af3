// Forward (tee) mode: every request otlp-mock accepts is sent on to each forward target. The first target is the
// primary: the client's answer follows its answer. The others are tees: they get the same data, their answers are
// journaled and otherwise ignored. Each target holds at most `maxInflight` requests and `maxInflightBytes` bytes
// at once, and each call ends within `timeoutMs`, so a slow or hung upstream costs bounded memory; what does not
// fit is shed, counted, and (on the primary) answered with a retryable error.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import { answerOf, partialOf as rulePartialOf } from '../faults/wire.js';
import { builtRequest } from '../otlp/items.js';
import { OFF_THREAD_AT, jsonOffThread } from '../otlp/json-off-thread.js';
import { encodeRequest } from '../otlp/schema.js';
import { requestJson } from '../transfer/otlp-json.js';
import { Slicer, joinInSlices } from '../transport/slices.js';
import { clientAnswerOf, failedAnswer, timeoutAnswer } from './answer.js';
import { upstreamHeaders } from './headers.js';
import { HttpUpstream } from './http-upstream.js';
import { GrpcUpstream } from './grpc-upstream.js';
import { ForwardTargetError, normalizeTarget } from './target.js';

/** How early a millisecond timer may fire against Date.now(): each side rounds to whole milliseconds. */
const TIMER_GRANULARITY_MS = 2;
const gzip = promisify(zlib.gzip);

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {import('../faults/rules.js').FaultRule} FaultRule
 * @typedef {import('../faults/rules.js').FaultRules} FaultRules
 * @typedef {import('./answer.js').UpstreamReply} UpstreamReply
 * @typedef {import('./answer.js').ClientAnswer} ClientAnswer
 * @typedef {import('./target.js').TargetSpec} TargetSpec
 * @typedef {'pending'|'accepted'|'partial'|'refused'|'failed'|'timeout'|'shed'|'faulted'} LegOutcome
 *   `refused`: the upstream answered an error; `failed`: no answer (connection refused or dropped);
 *   `timeout`: no answer within the timeout; `shed`: not sent, the target had too much in flight;
 *   `faulted`: an upstream-side fault rule stood in for the upstream's answer; `pending`: a tee still under way.
 * @typedef {{ target: string, url: string, transport: 'grpc'|'http', encoding: 'protobuf'|'json', bytes: number,
 *   status: number|null, message: string, outcome: LegOutcome, durationMs: number,
 *   fault?: { id: string, action: string }, partialSuccess?: { rejected: number, errorMessage: string } }} UpstreamLeg
 *   One call to one target as the journal shows it. `status` is the HTTP status or gRPC code the upstream answered
 *   (or the fault rule answered for it); null when no answer came.
 * @typedef {Record<Exclude<LegOutcome, 'pending'>, number>} OutcomeCounts
 * @typedef {{ id: string, spec: TargetSpec, upstream: HttpUpstream|GrpcUpstream, inflight: number,
 *   inflightBytes: number, counts: OutcomeCounts, shedBytes: number, lastFailure: LastFailure|null }} Target
 * @typedef {{ outcome: LegOutcome, status: number|null, message: string, time: string }} LastFailure
 *   the last call to a target that did not succeed, so that a target that keeps failing says why
 * @typedef {{ signal: Signal, transport: 'grpc'|'http'|'otap', json: boolean, body: Buffer, protobuf?: Buffer|null,
 *   request: any, headers: Readonly<Record<string, any>> }} ForwardContext
 *   one accepted request: its decoded body as received (`json` says which encoding), its protobuf encoding when the
 *   receive path has one at hand, the canonical request, and the client's headers
 * @typedef {{ answer: ClientAnswer, rule: FaultRule|null }} PrimaryResult
 *   `rule`: the upstream-side fault rule that decided the answer
 * @typedef {{ target: Target, record: UpstreamLeg, body: Buffer|Promise<Buffer>, rule: FaultRule|null, reserved: number }} Leg
 *   `body`: a promise while it is written on the worker thread
 */

const MAX_TARGETS = 16;
const OUTCOMES = /** @type {const} */ (['accepted', 'partial', 'refused', 'failed', 'timeout', 'shed', 'faulted']);

/** Counts a finished call to a target, and keeps it as the target's last failure when it did not succeed. @param {Target} target @param {UpstreamLeg} record */
function count(target, record) {
  const outcome = /** @type {Exclude<LegOutcome, 'pending'>} */ (record.outcome);
  target.counts[outcome]++;
  if (outcome !== 'accepted' && outcome !== 'partial') target.lastFailure = { outcome, status: record.status, message: record.message, time: new Date().toISOString() };
}

/** A value that tells a timed-out call from one that ended. */
const TIMED_OUT = Symbol('timed out');

export class Forwarder {
  /** @type {Target[]} */
  #targets = [];
  #nextId = 1;
  /** @type {Set<AbortController>} */
  #calls = new Set();

  /**
   * @param {{ faults: FaultRules, timeoutMs: number, maxInflight: number, maxInflightBytes: number,
   *   maxRequestBytes: number, onChange?: (active: boolean) => void }} options
   */
  constructor({ faults, timeoutMs, maxInflight, maxInflightBytes, maxRequestBytes, onChange = () => {} }) {
    this.faults = faults;
    this.timeoutMs = timeoutMs;
    this.maxInflight = maxInflight;
    this.maxInflightBytes = maxInflightBytes;
    this.maxRequestBytes = maxRequestBytes;
    this.onChange = onChange;
  }

  get active() {
    return this.#targets.length > 0;
  }

  /**
   * Adds a target after those present (the first one added is the primary).
   * @param {unknown} input a URL or { url, encoding, compression, headers } @throws {ForwardTargetError}
   */
  add(input) {
    if (this.#targets.length >= MAX_TARGETS) throw new ForwardTargetError('target', `there are already ${MAX_TARGETS} forward targets, the most otlp-mock keeps`);
    const spec = normalizeTarget(input);
    const upstream =
      spec.transport === 'grpc' ? new GrpcUpstream(spec, { maxRequestBytes: this.maxRequestBytes }) : new HttpUpstream(spec, { maxSockets: this.maxInflight });
    /** @type {Target} */
    const target = {
      id: `u${this.#nextId++}`,
      spec,
      upstream,
      inflight: 0,
      inflightBytes: 0,
      counts: /** @type {OutcomeCounts} */ (Object.fromEntries(OUTCOMES.map((o) => [o, 0]))),
      shedBytes: 0,
      lastFailure: null,
    };
    this.#targets.push(target);
    this.onChange(true);
    return this.#stateOf(target, this.#targets.length - 1);
  }

  /** @param {string} id @returns {boolean} whether a target was removed; calls under way finish */
  remove(id) {
    const i = this.#targets.findIndex((t) => t.id === id);
    if (i < 0) return false;
    const [target] = this.#targets.splice(i, 1);
    this.#closeWhenIdle(target);
    this.onChange(this.active);
    return true;
  }

  clear() {
    for (const target of this.#targets.splice(0)) this.#closeWhenIdle(target);
    this.onChange(false);
  }

  list() {
    return this.#targets.map((t, i) => this.#stateOf(t, i));
  }

  /** @param {string} id */
  get(id) {
    const i = this.#targets.findIndex((t) => t.id === id);
    return i < 0 ? undefined : this.#stateOf(this.#targets[i], i);
  }

  stats() {
    return {
      targets: this.#targets.map((t) => ({ id: t.id, url: t.spec.url, inflight: t.inflight, inflightBytes: t.inflightBytes, ...t.counts, shedBytes: t.shedBytes })),
      limits: { timeoutMs: this.timeoutMs, maxInflight: this.maxInflight, maxInflightBytes: this.maxInflightBytes },
    };
  }

  /**
   * Takes an accepted request: room on the primary target first (none: the whole request is shed), then on each
   * tee, and the upstream-side fault rule of each call, all in this turn of the event loop. `send` then starts the
   * calls; the caller stores the data in between, so a shed request is not stored.
   * @param {ForwardContext} ctx
   */
  begin(ctx) {
    const [primary, ...tees] = this.#targets;
    const bodies = new Map();
    /** @type {Set<string>} upstream-side rules that count client requests, decided by one of this request's calls */
    const decided = new Set();
    const first = this.#open(primary, ctx, bodies, decided);
    const legs = first.record.outcome === 'shed' ? [first] : [first, ...tees.map((t) => this.#open(t, ctx, bodies, decided))];
    return {
      shed: first.record.outcome === 'shed',
      primary: first.record,
      tees: legs.slice(1).map((l) => l.record),
      /** Starts every call; resolves with the client's answer once the primary has answered. @returns {Promise<PrimaryResult>} */
      send: () => {
        for (const tee of legs.slice(1)) if (tee.record.outcome === 'pending') void this.#run(tee, ctx);
        if (first.record.outcome === 'failed') return Promise.resolve({ answer: failedAnswer(first.record.message), rule: null });
        return this.#run(first, ctx);
      },
    };
  }

  /**
   * @param {Target} target @param {ForwardContext} ctx @param {Map<string, Buffer|Promise<Buffer>>} bodies re-encoded bodies by encoding
   * @param {Set<string>} decided shared by the request's calls (FaultContext)
   * @returns {Leg}
   */
  #open(target, ctx, bodies, decided) {
    const { spec } = target;
    const encoding = spec.transport === 'grpc' || spec.encoding === 'protobuf' ? 'protobuf' : spec.encoding === 'json' ? 'json' : ctx.json ? 'json' : 'protobuf';
    /** @type {UpstreamLeg} */
    const record = { target: target.id, url: spec.url, transport: spec.transport, encoding, bytes: 0, status: null, message: '', outcome: 'pending', durationMs: 0 };
    const size = ctx.body.length;
    if (target.inflight >= this.maxInflight || (target.inflight > 0 && target.inflightBytes + size > this.maxInflightBytes)) {
      record.outcome = 'shed';
      record.message = `not sent: ${target.inflight} requests (${target.inflightBytes} bytes) to ${spec.url} are under way, the most allowed (--forward-max-inflight, --forward-max-inflight-bytes)`;
      count(target, record);
      target.shedBytes += size;
      return { target, record, body: ctx.body, rule: null, reserved: 0 };
    }
    let body = bodies.get(encoding);
    if (!body) {
      try {
        body = encodedBody(ctx, encoding);
      } catch (err) {
        record.outcome = 'failed';
        record.message = `not sent: the request could not be encoded as ${encoding}: ${/** @type {Error} */ (err).message}`;
        count(target, record);
        return { target, record, body: ctx.body, rule: null, reserved: 0 };
      }
      bodies.set(encoding, body);
    }
    target.inflight++;
    target.inflightBytes += size;
    if (body instanceof Promise) void body.then((b) => (record.bytes = b.length), ignore);
    else record.bytes = body.length;
    const rule = this.faults.decide({ signal: ctx.signal.name, transport: spec.transport, headers: ctx.headers, request: ctx.request, side: 'upstream', decided });
    if (rule) record.fault = { id: rule.id, action: rule.action };
    return { target, record, body, rule, reserved: size };
  }

  /**
   * One call, from its upstream-side fault (if any) to the answer, within the timeout.
   * @param {Leg} leg @param {ForwardContext} ctx @returns {Promise<PrimaryResult>}
   */
  async #run(leg, ctx) {
    const { target, record, rule } = leg;
    const { spec } = target;
    const started = Date.now();
    const deadline = started + this.timeoutMs;
    const controller = new AbortController();
    this.#calls.add(controller);
    const timer = setTimeout(() => controller.abort(TIMED_OUT), this.timeoutMs);
    /** @type {UpstreamReply|typeof TIMED_OUT} */
    let reply;
    const action = rule ? answerOf(rule) : null;
    try {
      if (action === 'error') reply = ruleReply(/** @type {FaultRule} */ (rule), spec.transport);
      else if (action === 'reset') reply = { kind: 'failed', message: `connection dropped without an answer (otlp-mock fault ${rule?.id}, side upstream)` };
      else if (action === 'hang') reply = await aborted(controller.signal);
      else reply = await this.#call(leg, ctx, controller.signal, deadline, action === 'delay' ? /** @type {number} */ (rule?.delayMs) : 0);
      if (controller.signal.aborted)
        reply = controller.signal.reason === TIMED_OUT ? TIMED_OUT : { kind: 'failed', message: 'otlp-mock stopped before the upstream answered' };
    } catch (err) {
      reply = { kind: 'failed', message: `not sent: ${/** @type {Error} */ (err).message}` };
    } finally {
      clearTimeout(timer);
      this.#calls.delete(controller);
      target.inflight--;
      target.inflightBytes -= leg.reserved;
    }
    // The deadline also goes to grpc-js (as grpc-timeout), whose own timer may fire first: its DEADLINE_EXCEEDED,
    // made on this side once the deadline has passed, is the same timeout. Its timer may fire a millisecond before
    // this clock reads the deadline (whole-millisecond rounding on both sides), hence the clock's granularity.
    if (
      reply !== TIMED_OUT &&
      reply.kind === 'answer' &&
      spec.transport === 'grpc' &&
      reply.status === status.DEADLINE_EXCEEDED &&
      Date.now() >= deadline - TIMER_GRANULARITY_MS
    )
      reply = TIMED_OUT;
    /** @type {ClientAnswer} */
    let answer;
    if (reply === TIMED_OUT) {
      record.outcome = 'timeout';
      record.message = `no answer from ${spec.url} within ${this.timeoutMs} ms (--forward-timeout-ms)`;
      answer = timeoutAnswer(record.message);
    } else {
      answer = clientAnswerOf(reply, spec.transport);
      if (reply.kind === 'failed') {
        record.outcome = 'failed';
        record.message = reply.message;
      } else {
        record.status = reply.status;
        record.message = reply.message;
        record.outcome = !reply.ok ? 'refused' : reply.partial ? 'partial' : 'accepted';
        if (reply.partial) record.partialSuccess = reply.partial;
      }
    }
    // Every action but delay decides the answer in the upstream's place.
    const decided = action !== null && action !== 'delay';
    if (decided && action !== 'partial') record.outcome = 'faulted';
    if (action === 'partial' && answer.ok) {
      const partial = rulePartialOf(/** @type {FaultRule} */ (rule));
      answer = { ok: true, partial };
      record.outcome = 'faulted';
      record.partialSuccess = partial;
      record.message = partial.errorMessage;
    }
    record.durationMs = Date.now() - started;
    count(target, record);
    if (!this.#targets.includes(target)) this.#closeWhenIdle(target);
    // A partial rule stands in only for an upstream that accepted; a failed call speaks for itself.
    return { answer, rule: decided && (action !== 'partial' || record.outcome === 'faulted') ? rule : null };
  }

  /**
   * @param {Leg} leg @param {ForwardContext} ctx @param {AbortSignal} signal
   * @param {number} deadline @param {number} delayMs an upstream-side delay before sending
   * @returns {Promise<UpstreamReply|typeof TIMED_OUT>}
   */
  async #call(leg, ctx, signal, deadline, delayMs) {
    const { spec, upstream } = leg.target;
    if (delayMs > 0) {
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        return TIMED_OUT;
      }
    }
    const headers = upstreamHeaders(ctx.headers, spec.transport, spec.headers);
    let body = await leg.body;
    if (upstream instanceof GrpcUpstream) return upstream.send(ctx.signal, body, headers, signal, deadline);
    headers['content-type'] = leg.record.encoding === 'json' ? 'application/json' : 'application/x-protobuf';
    headers['user-agent'] ??= `otlp-mock`;
    if (spec.compression === 'gzip') {
      body = await gzip(body);
      headers['content-encoding'] = 'gzip';
      leg.record.bytes = body.length;
    }
    return upstream.send(ctx.signal, body, /** @type {Record<string, string>} */ (headers), signal);
  }

  /** @param {Target} target */
  #closeWhenIdle(target) {
    if (target.inflight === 0) target.upstream.close();
  }

  /** @param {Target} t @param {number} i */
  #stateOf(t, i) {
    const { url, transport, encoding, compression, headers } = t.spec;
    return {
      id: t.id,
      url,
      transport,
      encoding,
      compression,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, SECRET.test(k) && v !== '' ? '(redacted)' : v])),
      role: i === 0 ? 'primary' : 'tee',
      inflight: t.inflight,
      inflightBytes: t.inflightBytes,
      ...t.counts,
      shedBytes: t.shedBytes,
      lastFailure: t.lastFailure,
    };
  }

  /** Ends every call under way and closes every client. */
  close() {
    for (const controller of this.#calls) controller.abort();
    for (const target of this.#targets) target.upstream.close();
  }
}

/** Header values worth hiding when the targets are listed. */
const SECRET = /authorization|cookie|token|key|secret|password/i;

/** @param {AbortSignal} signal @returns {Promise<typeof TIMED_OUT>} */
function aborted(signal) {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(TIMED_OUT), { once: true }));
}

/**
 * The answer an upstream-side error rule stands in for, on the target's wire (Retry-After carries whole seconds).
 * @param {FaultRule} rule @param {'grpc'|'http'} transport @returns {UpstreamReply}
 */
function ruleReply(rule, transport) {
  const hinted = rule.retryAfterMs !== undefined && rule.retryAfterMs !== null;
  const http = transport === 'http';
  return {
    kind: 'answer',
    ok: false,
    status: /** @type {number} */ (http ? rule.httpStatus : rule.grpcCode),
    code: /** @type {number} */ (rule.grpcCode),
    message: /** @type {string} */ (rule.message),
    retryAfterMs: hinted ? (http ? Math.ceil(/** @type {number} */ (rule.retryAfterMs) / 1000) * 1000 : /** @type {number} */ (rule.retryAfterMs)) : null,
    partial: null,
  };
}

/**
 * The request in the encoding a target wants: the bytes as received when the encodings match, else re-encoded from
 * the canonical request; a large protobuf request's JSON is written on the worker thread, from a copy of its bytes
 * made in slices (the worker takes what it is given), and a failure there fails only the calls that wait for it.
 * @param {ForwardContext} ctx @param {'protobuf'|'json'} encoding @returns {Buffer|Promise<Buffer>}
 */
function encodedBody(ctx, encoding) {
  if ((encoding === 'json') === ctx.json) return ctx.body;
  if (encoding === 'protobuf' && ctx.protobuf) return ctx.protobuf;
  if (encoding === 'json' && ctx.body.length >= OFF_THREAD_AT) {
    const wire = ctx.body;
    const json = joinInSlices([wire], wire.length, new Slicer(), false)
      .then((copy) => jsonOffThread(ctx.signal, copy))
      .catch((err) => {
        throw new Error(`the request could not be encoded as json: ${err instanceof Error ? err.message : String(err)}`);
      });
    // Left unread when no call sends it (an upstream-side fault decides them all): its failure is no one's.
    json.catch(ignore);
    return json;
  }
  const request = builtRequest(ctx.signal, ctx.request);
  return Buffer.from(encoding === 'protobuf' ? encodeRequest(ctx.signal, request) : requestJson(request));
}

function ignore() {
  // A promise settled for its own waiters, who see how; this one only marks it handled.
}
