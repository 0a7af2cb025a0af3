import { ACTIONS, ACTION_NAMES, grpcCodeName, grpcCodeNamed, grpcCodeOfHttp, httpStatusOfGrpc } from './actions.js';
import { wellFormed } from '../otlp/text.js';
import { RETRY_WINDOW_MS } from './report.js';
import { SIGNAL_NAMES, SIGNALS } from '../otlp/signals.js';
import { RuleIndex } from './rule-index.js';

/**
 * @typedef {import('./actions.js').FaultAction} FaultAction
 * @typedef {import('../otlp/signals.js').SignalName} FaultSignal
 * @typedef {'http'|'grpc'|'otap'} FaultTransport
 * @typedef {'client'|'upstream'} FaultSide
 *   where the rule acts: on the client's request to otlp-mock, or on otlp-mock's call to a forward target
 * @typedef {'request'|'call'} FaultCount
 *   what an upstream-side rule's `times`, `after` and `probability` count: client requests (one decision for all
 *   of a request's calls, primary first, so that a tee does not use up `times`) or each call to each target
 * @typedef {{ resource: Readonly<Record<string, string>>, headers: Readonly<Record<string, string>> }} FaultMatch
 * @typedef {{
 *   id: string,
 *   action: FaultAction,
 *   side: FaultSide,
 *   signals: readonly FaultSignal[],
 *   transports: readonly FaultTransport[],
 *   match: FaultMatch,
 *   times: number|null,
 *   after: number,
 *   probability: number,
 *   per?: FaultCount,
 *   retryAfterMs?: number|null,
 *   delayMs?: number,
 *   httpStatus?: number,
 *   grpcCode?: number,
 *   rejectItems?: number,
 *   message?: string,
 * }} FaultRule
 *   A validated rule with every default filled in; frozen, and the same object for the rule's whole life.
 * @typedef {FaultRule & { matched: number, applied: number, remaining: number|null, spent: boolean }} FaultRuleState
 *   `matched`: requests that passed the rule's filters while it was live (including those skipped by
 *   `after` or by chance); `applied`: faults actually injected; `remaining`: `times - applied`, null
 *   without `times`; `spent`: the rule has used up `times` and no longer matches.
 * @typedef {{
 *   signal: FaultSignal,
 *   transport: FaultTransport,
 *   headers: Readonly<Record<string, string|string[]|undefined>>,
 *   request?: any,
 *   side?: FaultSide,
 *   decided?: Set<string>,
 * }} FaultContext
 *   `transport` is the wire the rule would act on: the client's for the client side, the forward target's for
 *   the upstream side. `decided`: the upstream-side rules `per: request` already decided for an earlier call of
 *   the same client request (shared by its calls), which its later calls skip.
 */

export const FAULT_SIGNALS = SIGNAL_NAMES;
export const FAULT_TRANSPORTS = /** @type {readonly FaultTransport[]} */ (Object.freeze(['http', 'grpc', 'otap']));
export const FAULT_SIDES = /** @type {readonly FaultSide[]} */ (Object.freeze(['client', 'upstream']));
export const FAULT_COUNTS = /** @type {readonly FaultCount[]} */ (Object.freeze(['request', 'call']));

const FILTER_OPTIONS = ['action', 'side', 'signals', 'transports', 'match', 'times', 'after', 'probability', 'per'];
const ACTION_OPTIONS = ['retryAfterMs', 'delayMs', 'httpStatus', 'grpcCode', 'rejectItems', 'message'];
const MAX_MESSAGE_LENGTH = 2048;
const EMPTY_MAP = Object.freeze({});

/** A rule that cannot be accepted; `field` names the offending option (dotted for `match` entries). */
export class FaultRuleError extends Error {
  /** @param {string} field @param {string} message */
  constructor(field, message) {
    super(message);
    this.name = 'FaultRuleError';
    this.field = field;
  }
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isPlainObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value as an error message names it: a string quoted, a list or an object by its kind. @param {unknown} v */
export function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'a list';
  return v !== null && typeof v === 'object' ? 'an object' : String(v);
}

/**
 * A number option given as anything but a number. `null` is refused like the rest: JSON turns a NaN (a form's
 * `Number("abc")`) into null, so taking null for "left out" would turn a typo into the default, e.g. a
 * probability of 1.
 * @param {string} key @param {unknown} v @param {string} [what]
 */
function notANumber(key, v, what = 'a number') {
  const hint = v === null ? ' (leave the option out for its default)' : '';
  return new FaultRuleError(key, `${key} must be ${what}, got ${describe(v)}${hint}`);
}

/**
 * @param {Record<string, unknown>} input @param {string} key
 * @param {{ min: number, max?: number, fallback: number|null, range?: string }} limits
 */
function wholeNumber(input, key, { min, max = Number.MAX_SAFE_INTEGER, fallback, range }) {
  const v = input[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || Number.isNaN(v)) throw notANumber(key, v);
  if (range && (v < min || v > max || !Number.isInteger(v))) throw new FaultRuleError(key, `${key} ${range}, got ${v}`);
  if (!Number.isInteger(v)) throw new FaultRuleError(key, `${key} must be a whole number, got ${v}`);
  if (v < 0) throw new FaultRuleError(key, `${key} must not be negative, got ${v}`);
  if (v < min) throw new FaultRuleError(key, `${key} must be at least ${min}, got ${v}`);
  if (v > max) throw new FaultRuleError(key, `${key} must be at most ${max}, got ${v}`);
  return v;
}

/**
 * @template {string} T
 * @param {Record<string, unknown>} input @param {string} key @param {readonly T[]} allowed
 * @returns {readonly T[]}
 */
function nameList(input, key, allowed) {
  const v = input[key];
  if (v == null) return allowed;
  const names = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(names) || names.length === 0) {
    throw new FaultRuleError(key, `${key} must be a non-empty list of ${allowed.join(', ')}`);
  }
  for (const name of names) {
    if (!allowed.includes(name)) {
      throw new FaultRuleError(key, `${key} has ${describe(name)}, which is not one of ${allowed.join(', ')}`);
    }
  }
  return Object.freeze(allowed.filter((name) => names.includes(name)));
}

/** @param {unknown} v @param {string} field @param {boolean} lowerCaseNames */
function stringMap(v, field, lowerCaseNames) {
  if (v == null) return EMPTY_MAP;
  if (!isPlainObject(v)) throw new FaultRuleError(field, `${field} must be an object mapping names to string values`);
  /** @type {[string, string][]} */
  const entries = [];
  for (const [name, value] of Object.entries(v)) {
    if (name === '') throw new FaultRuleError(field, `${field} has an empty name`);
    if (typeof value !== 'string') {
      throw new FaultRuleError(`${field}.${name}`, `${field}.${name} must be a string, got ${describe(value)}`);
    }
    entries.push([lowerCaseNames ? name.toLowerCase() : name, value]);
  }
  return entries.length ? Object.freeze(Object.fromEntries(entries)) : EMPTY_MAP;
}

/** @param {unknown} v @returns {FaultMatch} */
function matchOf(v) {
  if (v == null) return Object.freeze({ resource: EMPTY_MAP, headers: EMPTY_MAP });
  if (!isPlainObject(v)) {
    throw new FaultRuleError('match', 'match must be an object with "resource" and/or "headers" maps of names to strings');
  }
  for (const key of Object.keys(v)) {
    if (key !== 'resource' && key !== 'headers') {
      throw new FaultRuleError(`match.${key}`, `match.${key} is unknown: match takes "resource" (resource attributes) and "headers"`);
    }
  }
  return Object.freeze({
    resource: stringMap(v.resource, 'match.resource', false),
    // Transports hand over header names lowercased, as both HTTP/1.1 and HTTP/2 treat them case-insensitively.
    headers: stringMap(v.headers, 'match.headers', true),
  });
}

/** @param {Record<string, unknown>} input @returns {number|undefined} */
function grpcCodeOf(input) {
  const v = input.grpcCode;
  if (v === undefined) return undefined;
  if (typeof v === 'string' && /^[a-z_]+$/i.test(v)) {
    const code = grpcCodeNamed(v);
    if (code === undefined) throw notANumber('grpcCode', v, 'an error code from 1 to 16 or a gRPC status code name such as UNAVAILABLE');
    return code;
  }
  return /** @type {number} */ (
    wholeNumber(input, 'grpcCode', { min: 1, max: 16, fallback: null, range: 'must be an error code from 1 to 16 (or a name such as UNAVAILABLE)' })
  );
}

/**
 * Validates a rule as given by a user (API body, `--fault`, faults file) and fills in the defaults.
 * @param {unknown} input @param {string} id @param {number} hangLimitMs
 * @returns {FaultRule}
 */
export function normalizeRule(input, id, hangLimitMs) {
  if (!isPlainObject(input)) throw new FaultRuleError('rule', 'a fault rule must be a JSON object such as {"action":"unavailable"}');
  const action = input.action;
  if (action == null) throw new FaultRuleError('action', `action is required: one of ${ACTION_NAMES.join(', ')}`);
  if (typeof action !== 'string' || !Object.hasOwn(ACTIONS, action)) {
    throw new FaultRuleError('action', `action ${describe(action)} is unknown: use one of ${ACTION_NAMES.join(', ')}`);
  }
  const spec = ACTIONS[/** @type {FaultAction} */ (action)];
  for (const key of Object.keys(input)) {
    if (FILTER_OPTIONS.includes(key) || /** @type {string[]} */ (spec.options).includes(key)) continue;
    if (ACTION_OPTIONS.includes(key)) {
      const takes = spec.options.length ? `${action} takes ${spec.options.join(', ')}` : `${action} takes none of the action options`;
      throw new FaultRuleError(key, `${key} does not apply to action ${action} (${takes})`);
    }
    throw new FaultRuleError(key, `${key} is not a fault rule option: use ${[...FILTER_OPTIONS, ...spec.options].join(', ')}`);
  }

  const probability = input.probability === undefined ? 1 : input.probability;
  if (typeof probability !== 'number' || !(probability > 0 && probability <= 1)) {
    throw notANumber('probability', probability, 'a number greater than 0 and at most 1');
  }
  const side = input.side ?? 'client';
  if (!FAULT_SIDES.includes(/** @type {FaultSide} */ (side))) {
    throw new FaultRuleError(
      'side',
      `side ${describe(side)} is not one of ${FAULT_SIDES.join(', ')} (client: the request to otlp-mock; upstream: otlp-mock's call to the forward target)`,
    );
  }
  /** @type {Record<string, unknown>} */
  const rule = {
    id,
    action,
    side,
    signals: nameList(input, 'signals', FAULT_SIGNALS),
    transports: nameList(input, 'transports', FAULT_TRANSPORTS),
    match: matchOf(input.match),
    times: wholeNumber(input, 'times', { min: 1, fallback: null, range: 'must be a whole number of at least 1 (leave it out for no limit)' }),
    after: wholeNumber(input, 'after', { min: 0, fallback: 0 }),
    probability,
  };
  if (side === 'upstream') {
    const per = input.per ?? 'request';
    if (!FAULT_COUNTS.includes(/** @type {FaultCount} */ (per))) {
      throw new FaultRuleError(
        'per',
        `per ${describe(per)} is not one of ${FAULT_COUNTS.join(', ')} (request: times, after and probability count client requests; call: each call to each forward target)`,
      );
    }
    rule.per = per;
  } else if (input.per !== undefined) {
    throw new FaultRuleError('per', 'per applies to side upstream only: on the client side, a request is one call');
  }

  if (spec.answer === 'error') {
    let httpStatus = wholeNumber(input, 'httpStatus', { min: 400, max: 599, fallback: null, range: `must be an error status from 400 to 599 for action ${action}` });
    let grpcCode = grpcCodeOf(input);
    if (httpStatus == null && grpcCode == null) {
      if (spec.httpStatus == null || spec.grpcCode == null) {
        throw new FaultRuleError('httpStatus', `action ${action} needs httpStatus (400-599) and/or grpcCode (1-16)`);
      }
      httpStatus = spec.httpStatus;
      grpcCode = spec.grpcCode;
    }
    rule.httpStatus = httpStatus ?? spec.httpStatus ?? httpStatusOfGrpc(/** @type {number} */ (grpcCode));
    rule.grpcCode = grpcCode ?? spec.grpcCode ?? grpcCodeOfHttp(/** @type {number} */ (httpStatus));
  }
  if (spec.options.includes('retryAfterMs')) {
    rule.retryAfterMs = wholeNumber(input, 'retryAfterMs', { min: 0, fallback: spec.retryAfterMs ?? null });
  }
  if (spec.options.includes('delayMs')) {
    rule.delayMs = wholeNumber(input, 'delayMs', { min: 0, max: hangLimitMs, fallback: spec.delayMs ?? 0 });
  }
  if (spec.options.includes('rejectItems')) {
    rule.rejectItems = wholeNumber(input, 'rejectItems', { min: 0, fallback: spec.rejectItems ?? 0 });
  }
  if (spec.options.includes('message')) {
    const message = input.message ?? defaultMessage(/** @type {FaultAction} */ (action), id, rule);
    if (typeof message !== 'string') throw new FaultRuleError('message', `message must be a string, got ${describe(message)}`);
    if (message.length > MAX_MESSAGE_LENGTH) {
      throw new FaultRuleError('message', `message must be at most ${MAX_MESSAGE_LENGTH} characters, got ${message.length}`);
    }
    // A lone surrogate has no UTF-8 form: the rule keeps what every wire will carry, so GET /api/faults shows it.
    rule.message = wellFormed(message);
  }
  return /** @type {FaultRule} */ (Object.freeze(rule));
}

/**
 * Names the rule, so whoever reads an exporter's log can tell an injected fault from a real one.
 * @param {FaultAction} action @param {string} id @param {Record<string, unknown>} rule
 */
function defaultMessage(action, id, rule) {
  const text =
    action === 'partial'
      ? `rejected ${rule.rejectItems} item(s)`
      : (ACTIONS[action].message ?? `injected error: HTTP ${rule.httpStatus}, gRPC ${grpcName(/** @type {number} */ (rule.grpcCode))}`);
  return `${text} (otlp-mock fault ${id})`;
}

/** @param {number} code */
function grpcName(code) {
  return grpcCodeName(code) ?? String(code);
}

/** @param {any} value an OTLP/JSON AnyValue @returns {string|undefined} */
function scalarText(value) {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return String(value.intValue);
  if (value.boolValue !== undefined) return String(value.boolValue);
  if (value.doubleValue !== undefined) return String(value.doubleValue);
  return undefined;
}

/** @typedef {readonly (readonly [string, string])[]} Pairs */

/** @param {any[]} attributes @param {Pairs} wanted */
function attributesHave(attributes, wanted) {
  for (const [key, text] of wanted) {
    const attribute = attributes.find((a) => a.key === key);
    if (!attribute || scalarText(attribute.value ?? EMPTY_MAP) !== text) return false;
  }
  return true;
}

/** A request matches when any one of its resources carries all the wanted attributes. @param {FaultContext} ctx @param {Pairs} wanted */
function resourceMatches(ctx, wanted) {
  const resources = ctx.request?.[SIGNALS[ctx.signal].rootField];
  if (!resources) return false;
  for (const r of resources) if (attributesHave(r.resource?.attributes ?? [], wanted)) return true;
  return false;
}

/** @param {FaultContext} ctx @param {Pairs} wanted */
function headersMatch(ctx, wanted) {
  for (const [name, text] of wanted) {
    const got = ctx.headers[name];
    if (Array.isArray(got) ? !got.includes(text) : got !== text) return false;
  }
  return true;
}

/**
 * A live rule with its counters; the match maps are kept as pairs too, since every request walks them.
 * @typedef {{ rule: FaultRule, headers: Pairs, resource: Pairs, matched: number, applied: number }} Entry
 */

/** Whether a request passes a rule's filters. @param {Entry} entry @param {FaultContext} ctx */
export function filtersPass(entry, ctx) {
  const { rule } = entry;
  return (
    rule.signals.includes(ctx.signal) &&
    rule.transports.includes(ctx.transport) &&
    (entry.headers.length === 0 || headersMatch(ctx, entry.headers)) &&
    (entry.resource.length === 0 || resourceMatches(ctx, entry.resource))
  );
}

/**
 * The live fault rules of one collector. `decide` is synchronous: counting and choosing happen in
 * one turn of the event loop, so concurrent requests can never both take a rule's last use.
 */
export class FaultRules {
  /** @type {Entry[]} */
  #entries = [];
  #nextId = 1;
  /** @type {RuleIndex<Entry>} the rules a request is checked against (rule-index.js) */
  #index = new RuleIndex([]);
  #random;
  #hangLimitMs;
  #maxRules;
  #retryWindowMs;

  /**
   * `retryWindowMs`: how long after a retryable fault the retry report waits for the exporter's retry before it
   * says "did not retry" (faults/report.js), at least.
   * @param {{ random?: () => number, hangLimitMs?: number, maxRules?: number, retryWindowMs?: number }} [options]
   */
  constructor({ random = Math.random, hangLimitMs = 300000, maxRules = 500, retryWindowMs = RETRY_WINDOW_MS } = {}) {
    if (typeof random !== 'function') throw new TypeError('random must be a function returning a number in [0, 1)');
    if (!Number.isInteger(hangLimitMs) || hangLimitMs <= 0) throw new TypeError(`hangLimitMs must be a positive whole number, got ${hangLimitMs}`);
    if (!Number.isInteger(retryWindowMs) || retryWindowMs <= 0) throw new TypeError(`retryWindowMs must be a positive whole number, got ${retryWindowMs}`);
    this.#random = random;
    this.#hangLimitMs = hangLimitMs;
    this.#maxRules = maxRules;
    this.#retryWindowMs = retryWindowMs;
  }

  #reindex() {
    this.#index = new RuleIndex(this.#entries);
  }

  /** The longest a `hang` fault holds a request (and the largest `delayMs` accepted). */
  get hangLimitMs() {
    return this.#hangLimitMs;
  }

  /** How long after a retryable fault its retry report waits for a retry before "did not retry" is final. */
  get retryWindowMs() {
    return this.#retryWindowMs;
  }

  /** Number of rules, spent ones included. */
  get size() {
    return this.#entries.length;
  }

  /**
   * Validates and appends a rule; it is checked after every rule added before it.
   * @param {unknown} input @returns {FaultRuleState} @throws {FaultRuleError}
   */
  add(input) {
    if (this.#entries.length >= this.#maxRules)
      throw new FaultRuleError(
        'rule',
        `there are already ${this.#entries.length} fault rules, the most this server keeps (--max-faults); remove some (DELETE /api/faults/:id) or all (DELETE /api/faults)`,
      );
    const rule = normalizeRule(input, `f${this.#nextId}`, this.#hangLimitMs);
    this.#nextId++;
    /** @type {Entry} */
    const entry = {
      rule,
      headers: Object.entries(rule.match.headers),
      resource: Object.entries(rule.match.resource),
      matched: 0,
      applied: 0,
    };
    this.#entries.push(entry);
    this.#reindex();
    return stateOf(entry);
  }

  /** @returns {FaultRuleState[]} in checking order */
  list() {
    return this.#entries.map(stateOf);
  }

  /** @param {string} id @returns {FaultRuleState|undefined} */
  get(id) {
    const entry = this.#entries.find((e) => e.rule.id === id);
    return entry && stateOf(entry);
  }

  /** @param {string} id @returns {boolean} whether a rule was removed */
  remove(id) {
    const i = this.#entries.findIndex((e) => e.rule.id === id);
    if (i < 0) return false;
    this.#entries.splice(i, 1);
    this.#reindex();
    return true;
  }

  /** Removes every rule; ids keep counting up so an old id never names a new rule. */
  clear() {
    this.#entries = [];
    this.#reindex();
  }

  /**
   * The fault to inject into one decoded request, or null to handle it normally. The first live rule
   * (in insertion order) whose filters pass, whose `after` is used up and whose chance comes up decides.
   * @param {FaultContext} ctx @returns {FaultRule|null}
   */
  decide(ctx) {
    for (const entry of this.#index.candidates(ctx)) {
      const { rule } = entry;
      if (rule.times !== null && entry.applied >= rule.times) continue;
      if (rule.per === 'request' && ctx.decided?.has(rule.id)) continue;
      if (!filtersPass(entry, ctx)) continue;
      if (rule.per === 'request') ctx.decided?.add(rule.id);
      entry.matched++;
      if (entry.matched <= rule.after) continue;
      if (rule.probability < 1 && !(this.#random() < rule.probability)) continue;
      entry.applied++;
      return rule;
    }
    return null;
  }
}

/** @param {Entry} entry @returns {FaultRuleState} */
function stateOf({ rule, matched, applied }) {
  const remaining = rule.times === null ? null : rule.times - applied;
  return { ...rule, matched, applied, remaining, spent: remaining === 0 };
}
