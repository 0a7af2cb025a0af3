// Selectors of POST /api/verify: the list queries' own filters (`where`, parsed by the query engine, so a
// typo is refused the same way) plus what a list query cannot say: attribute operators, span kind and
// status, and tree relations. Every criterion can also say what an item has instead, which is what makes
// a near miss readable ("name is "POST /payment", wanted name=POST /pay").
import { hasList, itemWords, listing } from '../query/engine.js';
import { durationNs, logTime } from '../query/filters.js';
import { plainValue } from '../query/views.js';
import { attributeIn } from '../otlp/items.js';
import { compilePattern, PatternError } from '../query/pattern.js';
import { PARAMS } from '../query/params.js';
import { SIGNALS_SHOWN } from '../otlp/signals.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../otlp/model.js').SpanEntry} SpanEntry
 * @typedef {import('../otlp/model.js').LogEntry} LogEntry
 * @typedef {import('../otlp/model.js').PointEntry} PointEntry
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/journal.js').Journal} Journal
 * @typedef {import('../otlp/signals.js').ListKind} ItemKind a signal's item list (its row's listKind)
 * @typedef {{ label: string, match: (e: any) => boolean, actual: (e: any) => string, costly?: boolean }} Criterion
 *   `e`: an item of the selector's kind, which its criteria may rely on (a span's, SpanEntry) and the types
 *   cannot see; `actual`: what an item has where the criterion looks, said so that it reads beside `label`; `costly`: one
 *   test may take long (a pattern, a walk up the trace), so the work is sliced after each
 * @typedef {{ criteria: Criterion[], match: (e: Entry) => boolean, label: string, related: boolean, costly: boolean }} Selector
 *   `related`: it looks at other spans of the trace (childOf, descendantOf), so any arriving span may change it;
 *   `costly`: some criterion is
 */

export class VerifyError extends Error {
  /** @param {string} path where in the body, e.g. expectations[0].where @param {string} message */
  constructor(path, message) {
    super(`${path}: ${message}`);
    this.path = path;
  }
}

/** @type {readonly ItemKind[]} */
export const ITEM_KINDS = SIGNALS_SHOWN.filter(hasList).map((s) => s.listKind);

/** Parameters of a list that choose a page or wait, or shape its rows, not items. */
const NOT_FILTERS = new Set([
  'limit',
  'cursor',
  'minCount',
  'timeoutMs',
  'sort',
  'order',
  'key',
  ...Object.values(PARAMS).flatMap((specs) => Object.keys(specs).filter((name) => specs[name].shapes)),
]);
const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS_CODES = ['unset', 'ok', 'error'];
const OPERATORS = ['equals', 'notEquals', 'contains', 'matches', 'exists', 'greaterThan', 'lessThan', 'atLeast', 'atMost'];

/** An attribute's value as the list filters compare it: text, arrays and maps as JSON. @param {any} v */
export const asText = (v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** The item's attribute, or its resource's, as a plain value; undefined when absent. @param {Entry} e @param {string} key */
function attributeOf(e, key) {
  const v = e.attribute(key) ?? attributeIn(e.ctx.resource.attributes, key);
  return v === undefined ? undefined : plainValue(v);
}

/** @param {SpanEntry} e */
const spanMs = (e) => {
  const o = e.outline();
  return durationNs(o.startTimeUnixNano, o.endTimeUnixNano) / 1e6;
};
/** @param {number} ms */
const ms = (ms) => `${Math.round(ms * 1000) / 1000} ms`;
/** @param {any} v */
const quoted = (v) => (v === undefined ? 'absent' : JSON.stringify(v));

/**
 * What an item has for each list filter, by parameter name.
 * A list that brings its own words says it instead (engine.js `itemWords`).
 * @type {{ spans: Record<string, (e: SpanEntry) => string>, logs: Record<string, (e: LogEntry) => string>,
 *   metrics: Record<string, (e: PointEntry) => string> }}
 */
const HAS = {
  spans: {
    service: (e) => `service ${quoted(e.ctx.service)}`,
    name: (e) => `name ${quoted(e.outline().name)}`,
    nameContains: (e) => `name ${quoted(e.outline().name)}`,
    traceId: (e) => `traceId ${e.traceId}`,
    spanId: (e) => `spanId ${e.item.spanId}`,
    error: (e) => `status code ${e.outline().statusCode}`,
    minDurationMs: (e) => `duration ${ms(spanMs(e))}`,
    maxDurationMs: (e) => `duration ${ms(spanMs(e))}`,
    from: (e) => `start ${e.outline().startTimeUnixNano}`,
    to: (e) => `start ${e.outline().startTimeUnixNano}`,
  },
  logs: {
    service: (e) => `service ${quoted(e.ctx.service)}`,
    severity: (e) => `severity ${e.item.severityNumber}`,
    maxSeverity: (e) => `severity ${e.item.severityNumber}`,
    body: (e) => `body ${quoted(plainValue(e.item.body))}`,
    traceId: (e) => `traceId ${e.item.traceId || '(none)'}`,
    spanId: (e) => `spanId ${e.item.spanId || '(none)'}`,
    from: (e) => `time ${logTime(e)}`,
    to: (e) => `time ${logTime(e)}`,
  },
  metrics: {
    service: (e) => `service ${quoted(e.ctx.service)}`,
    name: (e) => `metric ${quoted(e.ctx.metric?.name)}`,
    nameContains: (e) => `metric ${quoted(e.ctx.metric?.name)}`,
    from: (e) => `time ${e.item.timeUnixNano}`,
    to: (e) => `time ${e.item.timeUnixNano}`,
  },
};

/**
 * A selector's `where` as the query string would give it: `attributes: { k: v }` (the JS client's form) is
 * `attr.k=v`; values are text.
 * @param {unknown} where @param {string} path @returns {Record<string, string>}
 */
function whereParams(where, path) {
  if (where === undefined) return {};
  if (!isObject(where)) throw new VerifyError(path, 'must be an object of list filters, e.g. {"service": "checkout", "name": "POST /pay"}');
  /** @type {Record<string, string>} */
  const out = {};
  for (const [key, value] of Object.entries(where)) {
    if (key === 'attributes' && isObject(value)) {
      for (const [name, v] of Object.entries(value)) out[`attr.${name}`] = scalarText(v, `${path}.attributes.${name}`);
      continue;
    }
    if (NOT_FILTERS.has(key))
      throw new VerifyError(`${path}.${key}`, 'chooses a page or waits; where takes filters only (the expectation has count, the request timeoutMs)');
    out[key] = scalarText(value, `${path}.${key}`);
  }
  return out;
}

/** @param {unknown} v @param {string} path */
function scalarText(v, path) {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new VerifyError(path, `must be a string, number or boolean, got ${JSON.stringify(v)}`);
}

/** @param {unknown} v @returns {v is Record<string, any>} */
export const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The most criteria one request may hold, relations' included: each is run on every stored item. */
export const MAX_CRITERIA = 1000;
/** How deep childOf and descendantOf may nest. */
export const MAX_NESTING = 8;

/**
 * What compiling a request's selectors may still spend: criteria left, and a slicer that lets the event
 * loop run between them (a pattern may take milliseconds to compile).
 * @typedef {{ criteriaLeft: number, slicer: import('../query/scan.js').Slicer }} Budget
 */

/**
 * @param {ItemKind} kind @param {Record<string, any>} spec the selector's fields (of an expectation, or of childOf/descendantOf)
 * @param {string} path @param {{ store: Store, journal: Journal }} sources @param {Budget} budget
 * @param {Set<string>} [own] the fields of `spec` that are the expectation's, not the selector's
 * @param {number} [depth] how many relations this selector is inside
 * @returns {Promise<Selector>} @throws {VerifyError}
 */
export async function compileSelector(kind, spec, path, sources, budget, own = new Set(), depth = 0) {
  const known = new Set(['where', 'attributes', ...(kind === 'spans' ? ['kind', 'status', 'root', 'childOf', 'descendantOf'] : [])]);
  for (const key of Object.keys(spec)) {
    if (own.has(key) || known.has(key)) continue;
    const hint = kind !== 'spans' && ['kind', 'status', 'root', 'childOf', 'descendantOf'].includes(key) ? ` (only spans have ${key})` : '';
    throw new VerifyError(`${path}.${key}`, `unknown field${hint}; a ${kind} expectation takes ${[...own, ...known].join(', ')}`);
  }
  /** @type {Criterion[]} */
  const criteria = [];
  const spend = async (/** @type {string} */ at) => {
    if (--budget.criteriaLeft < 0)
      throw new VerifyError(at, `is more than ${MAX_CRITERIA} criteria in one request, the limit: split the expectations over several requests`);
    if (budget.slicer.due()) await budget.slicer.pause();
  };
  let related = false;
  const where = whereParams(spec.where, `${path}.where`);
  for (const [key, value] of Object.entries(where)) {
    await spend(`${path}.where.${key}`);
    let filters;
    try {
      filters = listing(kind, { [key]: value }, sources).filters;
    } catch (err) {
      throw new VerifyError(`${path}.where`, /** @type {Error} */ (err).message.replace(`(/api/${kind} takes`, '(where takes the filters of GET /api/' + kind + ':'));
    }
    const attr = key.startsWith('attr.') ? key.slice(5) : null;
    const has =
      attr !== null
        ? (/** @type {Entry} */ e) => `${attr} ${quoted(attributeOf(e, attr))}`
        : (itemWords(kind)?.has ?? /** @type {Record<string, Record<string, (e: any) => string>>} */ (HAS)[kind])[key];
    for (const f of filters) criteria.push({ label: f.label, match: f.match, actual: has });
  }
  if (spec.attributes !== undefined) criteria.push(...(await attributeCriteria(spec.attributes, `${path}.attributes`, spend)));
  if (spec.kind !== undefined) criteria.push(kindCriterion(spec.kind, `${path}.kind`));
  if (spec.status !== undefined) criteria.push(statusCriterion(spec.status, `${path}.status`));
  if (spec.root !== undefined) {
    if (typeof spec.root !== 'boolean') throw new VerifyError(`${path}.root`, 'must be true (a span without a parent) or false');
    const want = spec.root;
    /** @type {Criterion} */
    const root = {
      label: want ? 'root' : 'not root',
      match: (/** @type {SpanEntry} */ e) => e.outline().isRoot === want,
      actual: (/** @type {SpanEntry} */ e) => (e.outline().isRoot ? 'a root span' : 'a child span'),
    };
    criteria.push(root);
  }
  for (const relation of /** @type {const} */ (['childOf', 'descendantOf'])) {
    if (spec[relation] === undefined) continue;
    if (!isObject(spec[relation])) throw new VerifyError(`${path}.${relation}`, 'must be a selector of the parent: {"where": {...}, "attributes": {...}, ...}');
    if (depth >= MAX_NESTING) throw new VerifyError(`${path}.${relation}`, `nests relations more than ${MAX_NESTING} deep, the limit`);
    await spend(`${path}.${relation}`);
    const parent = await compileSelector('spans', spec[relation], `${path}.${relation}`, sources, budget, undefined, depth + 1);
    criteria.push(relationCriterion(relation, parent));
    related = true;
  }
  const predicates = criteria.map((c) => c.match);
  return {
    criteria,
    match: (e) => predicates.every((p) => p(e)),
    label: criteria.map((c) => c.label).join(', '),
    related,
    costly: criteria.some((c) => c.costly),
  };
}

/**
 * `{"http.status_code": {"atLeast": 500}, "db.system": "postgres", "user.id": {"exists": false}}`
 * @param {unknown} spec @param {string} path @param {(path: string) => Promise<void>} spend counts each criterion
 * @returns {Promise<Criterion[]>}
 */
async function attributeCriteria(spec, path, spend) {
  if (!isObject(spec)) throw new VerifyError(path, 'must map attribute names to a value or to operators, e.g. {"http.response.status_code": {"atLeast": 500}}');
  /** @type {Criterion[]} */
  const out = [];
  for (const [key, given] of Object.entries(spec)) {
    const at = `${path}.${key}`;
    const ops = isObject(given) ? given : { equals: given };
    if (Object.keys(ops).length === 0) throw new VerifyError(at, `give a value or one of ${OPERATORS.join(', ')}`);
    const actual = (/** @type {Entry} */ e) => `${key} ${quoted(attributeOf(e, key))}`;
    for (const [op, operand] of Object.entries(ops)) {
      await spend(`${at}.${op}`);
      const test = attributeTest(op, operand, `${at}.${op}`);
      const { pattern } = test;
      // A value too long for its pattern is never run on; the message says so rather than show the value.
      const said = pattern
        ? (/** @type {Entry} */ e) => {
            const v = attributeOf(e, key);
            const text = v === undefined ? '' : asText(v);
            return text.length > pattern.maxChars ? `${key} is ${text.length} characters, longer than /${pattern.source}/ is run on (${pattern.maxChars})` : actual(e);
          }
        : actual;
      out.push({ label: test.label(key), match: (e) => test.match(attributeOf(e, key)), actual: said, costly: pattern !== undefined });
    }
  }
  return out;
}

/**
 * @param {string} op @param {unknown} operand @param {string} path
 * @returns {{ label: (key: string) => string, match: (value: any) => boolean, pattern?: import('../query/pattern.js').Pattern }}
 */
function attributeTest(op, operand, path) {
  const scalar = () => scalarText(operand, path);
  const number = () => {
    if (typeof operand !== 'number' || !Number.isFinite(operand)) throw new VerifyError(path, `must be a number, got ${JSON.stringify(operand)}`);
    return operand;
  };
  /** @param {any} v */
  const numeric = (v) => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
  switch (op) {
    case 'equals': {
      const text = scalar();
      return { label: (k) => `${k}=${text}`, match: (v) => v !== undefined && asText(v) === text };
    }
    case 'notEquals': {
      const text = scalar();
      return { label: (k) => `${k}!=${text}`, match: (v) => v === undefined || asText(v) !== text };
    }
    case 'contains': {
      const text = scalar();
      return {
        label: (k) => `${k} contains ${JSON.stringify(text)}`,
        match: (v) => (Array.isArray(v) ? v.some((x) => asText(x) === text) : v !== undefined && asText(v).includes(text)),
      };
    }
    case 'matches': {
      let re;
      try {
        re = compilePattern(scalar());
      } catch (err) {
        if (!(err instanceof PatternError)) throw err;
        throw new VerifyError(path, err.message);
      }
      return { label: (k) => `${k} matches /${re.source}/`, match: (v) => v !== undefined && re.test(asText(v)), pattern: re };
    }
    case 'exists': {
      if (typeof operand !== 'boolean') throw new VerifyError(path, 'must be true or false');
      return { label: (k) => `${k} ${operand ? 'present' : 'absent'}`, match: (v) => (v !== undefined) === operand };
    }
    case 'greaterThan':
    case 'lessThan':
    case 'atLeast':
    case 'atMost': {
      const n = number();
      const sign = { greaterThan: '>', lessThan: '<', atLeast: '>=', atMost: '<=' }[op];
      const holds = {
        greaterThan: (/** @type {number} */ x) => x > n,
        lessThan: (/** @type {number} */ x) => x < n,
        atLeast: (/** @type {number} */ x) => x >= n,
        atMost: (/** @type {number} */ x) => x <= n,
      }[op];
      return { label: (k) => `${k}${sign}${n}`, match: (v) => holds(numeric(v)) };
    }
    default:
      throw new VerifyError(path, `unknown operator; attributes take ${OPERATORS.join(', ')}`);
  }
}

/** @param {unknown} given @param {string[]} names @param {string} path @param {string} what */
function enumValue(given, names, path, what) {
  if (typeof given === 'number' && Number.isInteger(given) && given >= 0 && given < names.length) return given;
  if (typeof given === 'string') {
    const i = names.indexOf(given.toLowerCase().replace(/^(span_kind_|status_code_)/, ''));
    if (i >= 0) return i;
  }
  throw new VerifyError(path, `must be a ${what}: ${names.join(', ')} (or 0-${names.length - 1})`);
}

/** @param {unknown} given @param {string} path @returns {Criterion} */
function kindCriterion(given, path) {
  const kind = enumValue(given, SPAN_KINDS, path, 'span kind');
  return {
    label: `kind=${SPAN_KINDS[kind]}`,
    match: (/** @type {SpanEntry} */ e) => e.item.kind === kind,
    actual: (/** @type {SpanEntry} */ e) => `kind ${SPAN_KINDS[e.item.kind] ?? e.item.kind}`,
  };
}

/** @param {unknown} given @param {string} path @returns {Criterion} */
function statusCriterion(given, path) {
  const code = enumValue(given, STATUS_CODES, path, 'status code');
  return {
    label: `status=${STATUS_CODES[code]}`,
    match: (/** @type {SpanEntry} */ e) => e.outline().statusCode === code,
    actual: (/** @type {SpanEntry} */ e) => `status ${STATUS_CODES[e.outline().statusCode] ?? e.outline().statusCode}`,
  };
}

/** A trace's spans by span id, kept while the trace's list is unchanged. @type {WeakMap<object, { length: number, head: number, byId: Map<string, SpanEntry> }>} */
const spanIndexes = new WeakMap();

/** The stored parent of a span, or undefined. @param {SpanEntry} e */
export function parentOf(e) {
  const trace = e.trace;
  const parentId = e.item.parentSpanId;
  if (!trace || !parentId) return undefined;
  let index = spanIndexes.get(trace);
  if (!index || index.length !== trace.entries.length || index.head !== trace.head) {
    index = { length: trace.entries.length, head: trace.head, byId: new Map() };
    for (const span of trace.stored()) index.byId.set(span.item.spanId, span);
    spanIndexes.set(trace, index);
  }
  return index.byId.get(parentId);
}

/** @param {'childOf'|'descendantOf'} relation @param {Selector} parent @returns {Criterion} */
function relationCriterion(relation, parent) {
  const words = relation === 'childOf' ? 'child of' : 'descendant of';
  /** @param {SpanEntry} e */
  const ancestors = function* (e) {
    const seen = new Set();
    for (let p = parentOf(e); p && !seen.has(p); p = parentOf(p)) {
      seen.add(p);
      yield p;
      if (relation === 'childOf') return;
    }
  };
  return {
    label: `${words} (${parent.label || 'any span'})`,
    costly: true,
    match: (e) => {
      for (const p of ancestors(e)) if (parent.match(p)) return true;
      return false;
    },
    actual: (e) => {
      const p = parentOf(e);
      if (!p) return e.outline().isRoot ? 'no parent (a root span)' : 'its parent is not stored';
      return `parent ${quoted(p.outline().name)} (${p.ctx.service})`;
    },
  };
}
