// The parameters of every list query, parsed strictly: a misspelled name or a bad value is an error that
// names it, so a test with a typo fails instead of passing on everything stored. The same specs document
// the routes in /api/openapi.json.
import { OUTCOMES, TRANSPORTS } from '../store/journal.js';
import { SIGNAL_NAMES } from '../otlp/signals.js';

export const DEFAULT_WAIT_MS = 30_000;
export const MAX_WAIT_MS = 300_000;
export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 100_000;
const MIN_TRACE_PREFIX = 8;

/**
 * @typedef {'string'|'boolean'|'integer'|'number'|'time'|'traceId'|'spanId'|'profileId'|'enum'|'cursor'} ParamType
 * @typedef {{ type: ParamType, description: string, values?: string[], min?: number, max?: number, default?: any, shapes?: boolean }} ParamSpec
 *   `shapes`: it shapes a list's rows (with or without their data points or samples) and selects nothing
 * @typedef {import('../otlp/signals.js').ListKind} ItemListKind the list of a signal's items (its row's listKind)
 * @typedef {ItemListKind|'profiles/aggregate'|'traces'|'requests'|'operations'|'dependencies'} ListKind
 *   the queries this file parses: the lists, the merge of profile samples, and the span aggregates (operations, dependencies)
 * @typedef {{ key: string, value: string|null }} AttributeFilter `value` null: the attribute is present
 * @typedef {Record<string, any> & { attributes: AttributeFilter[], limit: number, order: 'asc'|'desc', sort: string,
 *   cursor?: any[], minCount?: number, timeoutMs?: number }} ParsedQuery
 */

export class QueryError extends Error {}

/** @type {Record<string, ParamSpec>} */
const PAGE = {
  limit: { type: 'integer', min: 1, max: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'page size' },
  cursor: { type: 'cursor', description: 'the nextCursor of the previous page, asked with the same filters: continues after it' },
  minCount: { type: 'integer', min: 1, description: 'wait until at least this many match (counted over everything stored, before limit)' },
  timeoutMs: {
    type: 'integer',
    min: 0,
    max: MAX_WAIT_MS,
    description: `how long to wait for minCount (default ${DEFAULT_WAIT_MS}); on timeout the answer is 408 with what matched and why the rest did not. Alone it waits for one`,
  },
};

/** @param {'asc'|'desc'} fallback */
const order = (fallback) => ({
  type: /** @type {const} */ ('enum'),
  values: ['asc', 'desc'],
  default: fallback,
  description: `how one page is listed (default ${fallback}); pages always go from the top of the sort down`,
});

/** @param {string[]} values @param {string} what */
const sort = (values, what) => ({ type: /** @type {const} */ ('enum'), values, default: values[0], description: what });

const service = { type: /** @type {const} */ ('string'), description: "the resource's service.name" };
const traceId = { type: /** @type {const} */ ('traceId'), description: `a trace id: 32 hex digits, or a prefix of at least ${MIN_TRACE_PREFIX}` };
const spanId = { type: /** @type {const} */ ('spanId'), description: 'a span id: 16 hex digits' };
const from = { type: /** @type {const} */ ('time'), description: 'at or after this time: ISO 8601, unix milliseconds or unix nanoseconds' };
const to = { type: /** @type {const} */ ('time'), description: 'at or before this time: ISO 8601, unix milliseconds or unix nanoseconds' };
const minDurationMs = { type: /** @type {const} */ ('number'), min: 0, description: 'duration at least this many milliseconds' };
const maxDurationMs = { type: /** @type {const} */ ('number'), min: 0, description: 'duration at most this many milliseconds' };
const error = { type: /** @type {const} */ ('boolean'), description: 'true: only with status code 2 (error)' };
const requestId = { type: /** @type {const} */ ('integer'), min: 1, description: 'carried by this request: the id of its journal entry (GET /api/requests/<id>)' };

/** What selects profile samples, for their list and their aggregate alike. @type {Record<string, ParamSpec>} */
const PROFILE_FILTERS = {
  service,
  type: { type: 'string', description: 'sample type, as type (cpu) or type:unit (cpu:nanoseconds)' },
  profileId: { type: 'profileId', description: 'one profile by its id: 32 hex digits' },
  function: { type: 'string', description: 'samples whose stack has a function of this name, exact' },
  functionContains: { type: 'string', description: 'samples whose stack has a function whose name contains this, ignoring case' },
  traceId: { ...traceId, description: `samples linked to this trace: ${traceId.description}` },
  spanId: { ...spanId, description: `samples linked to this span: ${spanId.description}` },
  from: { ...from, description: `profile time ${from.description}` },
  to: { ...to, description: `profile time ${to.description}` },
};

/** The named parameters of each signal's item list, by its row's listKind. @type {Record<ItemListKind, Record<string, ParamSpec>>} */
const ITEM_PARAMS = {
  spans: {
    service,
    name: { type: 'string', description: 'span name, exact' },
    nameContains: { type: 'string', description: 'span name contains this, ignoring case' },
    traceId,
    spanId,
    requestId,
    error,
    minDurationMs,
    maxDurationMs,
    from: { ...from, description: `span start ${from.description}` },
    to: { ...to, description: `span start ${to.description}` },
    sort: sort(['arrival', 'start', 'duration'], 'arrival (newest first), start (latest first) or duration (longest first)'),
    order: order('asc'),
    ...PAGE,
  },
  logs: {
    service,
    severity: { type: 'integer', min: 0, max: 24, description: 'minimum severity number (9 info, 13 warn, 17 error)' },
    maxSeverity: { type: 'integer', min: 0, max: 24, description: 'maximum severity number' },
    body: { type: 'string', description: 'the body, as text, contains this, ignoring case' },
    traceId,
    spanId,
    requestId,
    from: { ...from, description: `record time (observed time when unset) ${from.description}` },
    to: { ...to, description: `record time (observed time when unset) ${to.description}` },
    sort: sort(['arrival', 'time'], 'arrival (newest first) or time (latest first)'),
    order: order('asc'),
    ...PAGE,
  },
  metrics: {
    service,
    name: { type: 'string', description: 'metric name, exact' },
    nameContains: { type: 'string', description: 'metric name contains this, ignoring case' },
    key: { type: 'string', description: 'one metric by the key a previous answer gave it' },
    from: { ...from, description: `data point time ${from.description}` },
    to: { ...to, description: `data point time ${to.description}` },
    points: {
      type: 'enum',
      values: ['all', 'none'],
      default: 'all',
      shapes: true,
      description: 'all: each metric with its matching data points; none: counts only (pointCount, seriesCount, lastTimeUnixNano)',
    },
    order: order('asc'),
    ...PAGE,
  },
  profiles: {
    ...PROFILE_FILTERS,
    samples: {
      type: 'enum',
      values: ['none', 'all'],
      default: 'none',
      shapes: true,
      description: 'none: one row per profile with counts and totals; all: each row with its matching samples (stack frames, values, timestamps, attributes, link)',
    },
    order: order('asc'),
    ...PAGE,
  },
};

/** The named parameters of the trace list (a signal's items grouped by trace id: its row's traceIndex). */
const TRACE_PARAMS = /** @type {Record<string, ParamSpec>} */ ({
  service: { type: 'string', description: 'traces with a span from this service' },
  name: { type: 'string', description: 'traces with a span of this name' },
  nameContains: { type: 'string', description: 'traces with a span whose name contains this, ignoring case' },
  rootName: { type: 'string', description: "the root span's name, exact" },
  rootNameContains: { type: 'string', description: "the root span's name contains this, ignoring case" },
  traceId,
  error: { type: 'boolean', description: 'true: traces with an error span' },
  minDurationMs,
  maxDurationMs,
  from: { ...from, description: `trace start ${from.description}` },
  to: { ...to, description: `trace start ${to.description}` },
  sort: sort(['arrival', 'start', 'duration', 'spans'], 'arrival (newest first), start (latest first), duration (longest first) or spans (most first)'),
  order: order('asc'),
  ...PAGE,
});

/** The named parameters of the request journal's list. */
const REQUEST_PARAMS = /** @type {Record<string, ParamSpec>} */ ({
  signal: { type: 'enum', values: [...SIGNAL_NAMES], description: 'the signal the request carried' },
  transport: { type: 'enum', values: [...TRANSPORTS], description: 'how it arrived' },
  outcome: { type: 'enum', values: [...OUTCOMES], description: 'what the client saw: an answer (accepted, partial, rejected, faulted) or none (reset, hang, abandoned)' },
  fault: { type: 'string', description: 'requests a fault rule was applied to: its id or action; * or true for any fault, none or false for none' },
  service: { type: 'string', description: 'requests that carried a resource of this service.name' },
  stream: { type: 'integer', min: 1, description: 'the batches of this OTAP stream, by its id (otap.stream)' },
  group: {
    type: 'enum',
    values: ['streams'],
    description:
      'streams: each OTAP stream is one row ({ stream, matched }) in the place it opened, in place of its batches; a stream is listed when one of its batches still held matches, or, with no filter but signal and transport, when none is held',
  },
  order: order('desc'),
  ...PAGE,
});

/** The named parameters of the merge of the profiles' samples (query/profiles.js aggregateOf). */
const PROFILE_AGGREGATE_PARAMS = /** @type {Record<string, ParamSpec>} */ ({
  ...PROFILE_FILTERS,
  top: { type: 'integer', min: 1, max: MAX_LIMIT, default: 100, description: 'how many functions the table lists, heaviest self value first' },
});

/** The named parameters of the span aggregates: a service's operations, and the service map's edges. */
const AGGREGATE_PARAMS = /** @type {Record<'operations'|'dependencies', Record<string, ParamSpec>>} */ ({
  operations: {
    service: { ...service, description: "operations of this service (the resource's service.name)" },
    nameContains: { type: 'string', description: 'span name contains this, ignoring case' },
    error,
    minDurationMs,
    maxDurationMs,
    from: { ...from, description: `span start ${from.description}` },
    to: { ...to, description: `span start ${to.description}` },
  },
  dependencies: {
    service: { ...service, description: 'edges with this service at either end' },
    nameContains: { type: 'string', description: "the called span's name contains this, ignoring case" },
    error: { ...error, description: 'true: only calls whose called span has status code 2 (error); false: only the others' },
    minDurationMs: { ...minDurationMs, description: `the called span's ${minDurationMs.description}` },
    maxDurationMs: { ...maxDurationMs, description: `the called span's ${maxDurationMs.description}` },
    from: { ...from, description: `the called span's start ${from.description}` },
    to: { ...to, description: `the called span's start ${to.description}` },
  },
});

/** The named parameters of each list; every list also takes `attr.<key>` except requests. */
export const PARAMS = /** @type {Record<ListKind, Record<string, ParamSpec>>} */ ({
  ...ITEM_PARAMS,
  'profiles/aggregate': PROFILE_AGGREGATE_PARAMS,
  traces: TRACE_PARAMS,
  requests: REQUEST_PARAMS,
  ...AGGREGATE_PARAMS,
});

const ATTR = 'attr.';

/**
 * @param {ListKind} kind @param {Record<string, unknown>} raw the query string, parsed into strings (or arrays of them)
 * @returns {ParsedQuery} @throws {QueryError} naming every unknown parameter and bad value
 */
export function parseQuery(kind, raw) {
  const specs = PARAMS[kind];
  /** @type {string[]} */
  const problems = [];
  /** @type {ParsedQuery} */
  const out = /** @type {any} */ ({ attributes: [] });
  for (const [name, given] of Object.entries(raw)) {
    if (Array.isArray(given)) {
      problems.push(`parameter '${name}' is given ${given.length} times; give it once`);
      continue;
    }
    const text = String(given ?? '');
    if (kind !== 'requests' && name.startsWith(ATTR) && name.length > ATTR.length) {
      out.attributes.push({ key: name.slice(ATTR.length), value: text === '' ? null : text });
      continue;
    }
    const spec = specs[name];
    if (!spec) {
      problems.push(unknownParameter(kind, name));
      continue;
    }
    try {
      out[name] = parseValue(spec, text);
    } catch (err) {
      problems.push(`parameter '${name}' ${/** @type {Error} */ (err).message}, got ${JSON.stringify(text)}`);
    }
  }
  if (problems.length) throw new QueryError(problems.join('; '));
  for (const [name, spec] of Object.entries(specs)) if (out[name] === undefined && spec.default !== undefined) out[name] = spec.default;
  out.sort ??= 'arrival';
  return out;
}

/** @param {ParamSpec} spec @param {string} text */
function parseValue(spec, text) {
  switch (spec.type) {
    case 'string':
      if (text === '') throw new Error('is empty; leave it out to match everything');
      return text;
    case 'boolean':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw new Error('must be true or false');
    case 'integer':
    case 'number': {
      const n = text.trim() === '' ? NaN : Number(text);
      const range = `${spec.min ?? '-∞'} to ${spec.max ?? '∞'}`;
      if (!Number.isFinite(n) || (spec.type === 'integer' && !Number.isInteger(n)) || n < (spec.min ?? -Infinity) || n > (spec.max ?? Infinity))
        throw new Error(`must be ${spec.type === 'integer' ? 'an integer' : 'a number'} from ${range}`);
      return n;
    }
    case 'enum':
      if (!spec.values?.includes(text)) throw new Error(`must be one of ${spec.values?.join(', ')}`);
      return text;
    case 'traceId': {
      const id = text.toLowerCase();
      if (!/^[0-9a-f]+$/.test(id) || id.length < MIN_TRACE_PREFIX || id.length > 32)
        throw new Error(`must be a trace id: ${MIN_TRACE_PREFIX} to 32 hex digits (a prefix finds every trace that starts with it)`);
      return id;
    }
    case 'spanId': {
      const id = text.toLowerCase();
      if (!/^[0-9a-f]{16}$/.test(id)) throw new Error('must be a span id: 16 hex digits');
      return id;
    }
    case 'profileId': {
      const id = text.toLowerCase();
      if (!/^[0-9a-f]{32}$/.test(id)) throw new Error('must be a profile id: 32 hex digits');
      return id;
    }
    case 'time':
      return parseTime(text);
    case 'cursor':
      return parseCursor(text);
  }
}

/**
 * A time as exact unix nanoseconds in the model's form (a decimal string), from ISO 8601, unix
 * milliseconds (up to 13 digits) or unix nanoseconds (16 digits or more).
 * @param {string} text
 */
export function parseTime(text) {
  if (/^\d{1,13}$/.test(text)) return String(BigInt(text) * 1_000_000n);
  if (/^\d{16,20}$/.test(text)) return String(BigInt(text));
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms) && ms >= 0) {
      // Date keeps milliseconds: take the fraction's further digits from the text itself.
      const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
      const subMs = fraction.length > 3 ? BigInt(fraction.slice(3, 9).padEnd(6, '0')) : 0n;
      return String(BigInt(ms) * 1_000_000n + subMs);
    }
  }
  throw new Error('must be a time: ISO 8601 (2026-01-15T09:30:00Z), unix milliseconds (13 digits) or unix nanoseconds (19 digits)');
}

/** Cursors are opaque to clients: base64url of the position after which the next page starts. */
/** @param {any[]} position */
export function makeCursor(position) {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** @param {string} text */
function parseCursor(text) {
  try {
    const position = JSON.parse(Buffer.from(text, 'base64url').toString());
    if (Array.isArray(position) && position.length === 2 && position.every((v) => typeof v === 'number' && Number.isFinite(v))) return position;
  } catch {
    // answered below
  }
  throw new Error('is not a cursor this server gave out: pass the nextCursor of the previous answer as it is');
}

/** @param {ListKind} kind @param {string} name */
function unknownParameter(kind, name) {
  const known = Object.keys(PARAMS[kind]);
  const near = known.filter((k) => distance(k.toLowerCase(), name.toLowerCase()) <= (k.length > 4 ? 2 : 1));
  const hint = near.length ? `; did you mean ${near.map((k) => `'${k}'`).join(' or ')}?` : '';
  const attr = kind === 'requests' ? '' : ', attr.<key>';
  return `unknown parameter '${name}'${hint} (/api/${kind} takes ${known.join(', ')}${attr})`;
}

/** Edits between two names, a swap of neighbours counting as one (optimal string alignment). @param {string} a @param {string} b */
function distance(a, b) {
  /** @type {number[][]} */
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The OpenAPI parameters of a list route. @param {ListKind} kind */
export function openApiParameters(kind) {
  const params = Object.entries(PARAMS[kind]).map(([name, spec]) => ({
    name,
    in: 'query',
    required: false,
    description: spec.description,
    schema: schemaOf(spec),
  }));
  if (kind !== 'requests')
    params.push({
      name: 'attr.<key>',
      in: 'query',
      required: false,
      description:
        'an attribute of the item (or of its resource) equals this value, compared as text (arrays and maps as JSON); an empty value: the attribute is present',
      schema: { type: 'string' },
    });
  return params;
}

/** @param {ParamSpec} spec */
function schemaOf(spec) {
  /** @type {Record<string, any>} */
  const schema = { type: spec.type === 'integer' || spec.type === 'number' || spec.type === 'boolean' ? spec.type : 'string' };
  if (spec.values) schema.enum = spec.values;
  if (spec.min !== undefined) schema.minimum = spec.min;
  if (spec.max !== undefined) schema.maximum = spec.max;
  if (spec.default !== undefined) schema.default = spec.default;
  if (spec.type === 'traceId') schema.pattern = '^[0-9a-fA-F]{8,32}$';
  if (spec.type === 'spanId') schema.pattern = '^[0-9a-fA-F]{16}$';
  if (spec.type === 'profileId') schema.pattern = '^[0-9a-fA-F]{32}$';
  return schema;
}
