import { readFile } from 'node:fs/promises';
import { FaultRuleError, normalizeRule } from './rules.js';
import { signalWords } from '../otlp/signals.js';

/** The `--fault` syntax, for the CLI's `--help`. */
export const FAULT_HELP = `Fault rules (--fault, repeatable; checked in the order given, the first match decides):
  --fault ACTION[:OPTION=VALUE,OPTION=VALUE...]
  actions: unavailable, throttle, reject, status, partial, delay, reset, hang
  options:
    side=upstream              act on otlp-mock's call to the --forward target, as if it failed (default client)
    signals=traces+logs        only these signals (${signalWords()}; default all)
    transports=grpc            only these transports (http, grpc; default both)
    match.ATTRIBUTE=VALUE      a resource attribute, e.g. match.service.name=checkout
                               (match.resource.ATTRIBUTE=VALUE says the same explicitly)
    match.header.NAME=VALUE    a request header or gRPC metadata entry, e.g. match.header.x-tenant=a
    times=N                    fault the first N matching requests, then the rule is spent
    after=N                    let the first N matching requests through untouched
    probability=P              fault a matching request with chance P (0 < P <= 1)
    per=call                   side=upstream: count each call to each target, not each client request
    retryAfterMs=MS            unavailable, throttle (default 1000), status: Retry-After / RetryInfo
    httpStatus=CODE            unavailable, throttle, reject, status: HTTP status (400-599)
    grpcCode=CODE              unavailable, throttle, reject, status: gRPC code (1-16 or a name such as UNAVAILABLE)
    message=TEXT               the error or partial-success message
    rejectItems=N              partial: items reported rejected (default 1)
    delayMs=MS                 delay: answer normally after MS milliseconds (default 1000)
  A comma inside a value is written \\, (backslash comma).
  Examples:
    --fault unavailable:signals=traces,times=2,retryAfterMs=1000
    --fault throttle:signals=traces+logs,match.service.name=checkout,match.header.x-tenant=a
    --fault status:httpStatus=502,grpcCode=UNAVAILABLE,probability=0.25
    --fault unavailable:side=upstream,times=1
--faults-file FILE: a JSON array of rules as POST /api/faults takes them, e.g.
  [{"action":"throttle","signals":["traces"],"times":2,"retryAfterMs":1000}]`;

const NUMBER_OPTIONS = new Set(['times', 'after', 'probability', 'retryAfterMs', 'delayMs', 'httpStatus', 'grpcCode', 'rejectItems']);
const LIST_OPTIONS = new Set(['signals', 'transports']);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;
const HANG_LIMIT_MS = 300000;

/** Splits on commas that are not escaped as `\,`. @param {string} text */
function splitOptions(text) {
  const parts = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && text[i + 1] === ',') {
      current += ',';
      i++;
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/**
 * Turns one `--fault` value into a rule input (the same object `POST /api/faults` takes) and validates
 * it, so a mistake is reported with the part of the flag it came from.
 * @param {string} text e.g. `throttle:signals=traces,times=2,match.service.name=checkout`
 * @param {{ hangLimitMs?: number }} [options] the collector's hang limit, which bounds `delayMs`
 * @returns {Record<string, unknown>}
 * @throws {FaultRuleError}
 */
export function parseFault(text, { hangLimitMs = HANG_LIMIT_MS } = {}) {
  /** @param {string} field @param {string} message */
  const fail = (field, message) => new FaultRuleError(field, `--fault ${JSON.stringify(text)}: ${message}`);
  const colon = text.indexOf(':');
  const action = (colon < 0 ? text : text.slice(0, colon)).trim();
  if (!action) throw fail('action', 'starts with an action such as unavailable or throttle:times=2');
  /** @type {Record<string, any>} */
  const input = { action };
  /** @type {Map<string, string>} where each field came from, to point at it in errors */
  const origin = new Map([['action', action]]);
  const resource = {};
  const headers = {};
  const options = colon < 0 || colon === text.length - 1 ? [] : splitOptions(text.slice(colon + 1));
  for (const part of options) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw fail('rule', `${JSON.stringify(part)} is not OPTION=VALUE`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1);
    let field = key;
    if (key.startsWith('match.')) {
      const name = key.slice('match.'.length);
      const header = /^headers?\./.exec(name);
      const target = header ? headers : resource;
      const attribute = header ? name.slice(header[0].length) : name.replace(/^resource\./, '');
      if (!attribute) throw fail(key, `${JSON.stringify(part)} names no attribute or header`);
      field = header ? `match.headers.${attribute.toLowerCase()}` : `match.resource.${attribute}`;
      if (origin.has(field)) throw fail(field, `${key} is given twice`);
      /** @type {Record<string, string>} */ (target)[header ? attribute.toLowerCase() : attribute] = value;
    } else {
      if (origin.has(key)) throw fail(key, `${key} is given twice`);
      if (LIST_OPTIONS.has(key)) input[key] = value.split('+').map((s) => s.trim());
      else if (NUMBER_OPTIONS.has(key) && NUMBER.test(value.trim())) input[key] = Number(value);
      else input[key] = value;
    }
    origin.set(field, part);
  }
  if (Object.keys(resource).length || Object.keys(headers).length) input.match = { resource, headers };
  try {
    normalizeRule(input, 'check', hangLimitMs);
  } catch (err) {
    if (!(err instanceof FaultRuleError)) throw err;
    const part = origin.get(err.field);
    throw fail(err.field, part && part !== action ? `in ${JSON.stringify(part)}: ${err.message}` : err.message);
  }
  return input;
}

/**
 * Reads a JSON file holding an array of rules (as `POST /api/faults` takes them) and validates each.
 * @param {string} path @param {{ hangLimitMs?: number }} [options]
 * @returns {Promise<Record<string, unknown>[]>}
 * @throws {FaultRuleError} naming the file, the rule's position and the field
 */
export async function loadFaultsFile(path, { hangLimitMs = HANG_LIMIT_MS } = {}) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new FaultRuleError('file', `faults file ${path}: ${/** @type {Error} */ (err).message}`);
  }
  let rules;
  try {
    rules = JSON.parse(text);
  } catch (err) {
    throw new FaultRuleError('file', `faults file ${path} is not valid JSON: ${/** @type {Error} */ (err).message}`);
  }
  if (!Array.isArray(rules)) {
    throw new FaultRuleError('file', `faults file ${path} must hold a JSON array of rules, e.g. [{"action":"unavailable","times":2}]`);
  }
  rules.forEach((rule, i) => {
    try {
      normalizeRule(rule, 'check', hangLimitMs);
    } catch (err) {
      if (!(err instanceof FaultRuleError)) throw err;
      throw new FaultRuleError(err.field, `faults file ${path}, rule ${i + 1}: ${err.message}`);
    }
  });
  return rules;
}
