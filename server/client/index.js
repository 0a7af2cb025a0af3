// `otlp-mock/client`: the REST API of a running otlp-mock from JavaScript, with nothing but `fetch`.
//
//   import { OtlpMock } from 'otlp-mock/client';
//   const mock = new OtlpMock('http://localhost:4319');
//   const spans = await mock.waitForSpans({ service: 'checkout' }, { count: 3 });

/**
 * The API's answers, generated from its OpenAPI document (npm run api-types):
 * @typedef {import('./api.generated.js').AnyValue} AttributeValue
 *   integers beyond 2^53 come as decimal strings, bytes as base64; arrays and maps hold the same kinds
 * @typedef {import('./api.generated.js').Attributes} Attributes
 * @typedef {import('./api.generated.js').Scope} Scope
 * @typedef {import('./api.generated.js').Span} Span
 * @typedef {import('./api.generated.js').LogRecord} LogRecord
 * @typedef {import('./api.generated.js').Metric} Metric
 * @typedef {import('./api.generated.js').DataPoint} DataPoint
 * @typedef {import('./api.generated.js').JournalEntry} JournalEntry
 * @typedef {import('./api.generated.js').TraceSummary} TraceSummary
 * @typedef {import('./api.generated.js').TraceDetail} TraceDetail
 * @typedef {import('./api.generated.js').ServiceInfo} ServiceInfo
 * @typedef {import('./api.generated.js').FaultRule} FaultRule
 * @typedef {import('./api.generated.js').RetryReport} RetryReport
 * @typedef {import('./api.generated.js').VerifyResult} VerifyResult
 * @typedef {import('./api.generated.js').Stats} Stats
 * @typedef {import('./api.generated.js').ProfileFrame} ProfileFrame
 * @typedef {import('./api.generated.js').ProfileSample} ProfileSample
 * @typedef {import('./api.generated.js').Profile} Profile
 * @typedef {import('./api.generated.js').ProfileDetail} ProfileDetail
 * @typedef {import('./api.generated.js').StackNode} StackNode
 * @typedef {import('./api.generated.js').ProfileAggregate} ProfileAggregate
 *
 * @typedef {object} CommonFilter
 * @property {string} [service] the resource's service.name
 * @property {Record<string, string|number|boolean>} [attributes] item (or resource) attributes, all must
 *   match; an empty string only asks that the attribute is present
 * @property {string|number} [from] at or after this time: ISO 8601, unix ms or unix ns
 * @property {string|number} [to] at or before this time
 * @property {number} [limit] page size (default 1000): the newest matches; counts and waits are over all that match
 * @property {'asc'|'desc'} [order] how the page is listed (default oldest first; requests newest first)
 * @property {string} [cursor] the `nextCursor` of a previous answer: the next page (see `page()`)
 *
 * @typedef {CommonFilter & { name?: string, nameContains?: string, traceId?: string, spanId?: string, error?: boolean,
 *   minDurationMs?: number, maxDurationMs?: number, sort?: 'arrival'|'start'|'duration' }} SpanFilter
 *   `traceId`: 32 hex digits, or a prefix of at least 8
 * @typedef {CommonFilter & { name?: string, nameContains?: string, rootName?: string, rootNameContains?: string,
 *   traceId?: string, error?: boolean, minDurationMs?: number, maxDurationMs?: number,
 *   sort?: 'arrival'|'start'|'duration'|'spans' }} TraceFilter
 *   `service`, `name`, `attributes`: any span of the trace; `error`: traces with an error span
 * @typedef {CommonFilter & { severity?: number, maxSeverity?: number, body?: string, traceId?: string, spanId?: string,
 *   sort?: 'arrival'|'time' }} LogFilter
 *   `severity`: minimum severity number; `body`: the body contains this, ignoring case
 * @typedef {CommonFilter & { name?: string, nameContains?: string, key?: string, points?: 'all'|'none' }} MetricFilter
 * @typedef {CommonFilter & { type?: string, profileId?: string, function?: string, functionContains?: string,
 *   traceId?: string, spanId?: string }} ProfileFilter
 *   `type`: the sample type, as `cpu` or `cpu:nanoseconds`; `function`: a function of the sample's stack, exact;
 *   `traceId`, `spanId`: samples linked to that trace or span; `from`, `to`: the profile's time; `attributes`:
 *   the sample's, its profile's or its resource's
 * @typedef {{ signal?: import('../otlp/signals.js').SignalName, transport?: 'http'|'grpc'|'import',
 *   outcome?: 'accepted'|'partial'|'rejected'|'faulted'|'reset'|'hang'|'abandoned', fault?: string, limit?: number, order?: 'asc'|'desc', cursor?: string }} RequestFilter
 *   `fault`: a fault rule's id or action, "*" for requests any fault was applied to, "none" for the others
 *
 * @typedef {{ count?: number, timeoutMs?: number }} WaitOptions
 *   `count`: how many matching items to wait for (default 1; for metrics, data points); `timeoutMs`:
 *   default 30000, at most 300000
 *
 * @typedef {import('./api.generated.js').paths['/api/faults']['post']['requestBody']['content']['application/json']} FaultRuleInput
 *   `side` upstream: fail, delay or drop the call to the forward target instead (docs/forward.md)
 *
 * @typedef {string|number|boolean|{ equals?: string|number|boolean, notEquals?: string|number|boolean, contains?: string|number|boolean,
 *   matches?: string, exists?: boolean, greaterThan?: number, lessThan?: number, atLeast?: number, atMost?: number }} AttributeTest
 *   a value alone means `equals`; attributes are compared as text (arrays and maps as JSON), numbers as numbers
 * @typedef {object} Selector
 * @property {Record<string, string|number|boolean> & { attributes?: Record<string, string|number|boolean> }} [where]
 *   the filters of the list query of the signal (`SpanFilter`, `LogFilter`, `MetricFilter`, without paging)
 * @property {Record<string, AttributeTest>} [attributes]
 * @property {'internal'|'server'|'client'|'producer'|'consumer'|number} [kind] spans only
 * @property {'unset'|'ok'|'error'|number} [status] spans only
 * @property {boolean} [root] spans only: true for a span without a parent
 * @property {Selector} [childOf] spans only: the parent matches this
 * @property {Selector} [descendantOf] spans only: some ancestor matches this
 * @typedef {Selector & { signal: 'spans'|'logs'|'metrics'|'profiles', name?: string,
 *   count?: number|{ exactly?: number, atLeast?: number, atMost?: number, none?: true } }} Expectation
 *   `count` defaults to `{ atLeast: 1 }`; a number means exactly that many
 * @typedef {{ expectations: Expectation[], timeoutMs?: number, nothingElse?: string|string[] }} VerifyRequest
 *   `timeoutMs`: wait up to this long for all to hold (default 0: check once); `nothingElse`: services whose
 *   every item (of the signals named) must match an expectation
 * @typedef {{ signal?: import('../otlp/signals.js').SignalName|string, mask?: string[], maskDefaults?: boolean, times?: 'drop'|'order'|'relative' } & Record<string, any>} SnapshotFilter
 *   the list queries' filters (`attributes` as in `SpanFilter`), plus: `signal` (default all three, or several joined
 *   by commas), `mask` (more attribute names to mask: exact, `host.*`, `/regex/`), `times`
 */

/** A request the API refused; `body` is its JSON answer. */
export class OtlpMockError extends Error {
  /** @param {string} message @param {number} status @param {any} body */
  constructor(message, status, body) {
    super(message);
    this.name = 'OtlpMockError';
    this.status = status;
    this.body = body;
  }
}

/**
 * A wait that ran out of time. The message is the server's explanation ("2 of 3 spans with
 * service=checkout after 5000 ms; ..."); `items` holds what did match.
 * @template T
 */
export class OtlpMockTimeoutError extends OtlpMockError {
  /** @param {string} message @param {any} body @param {T[]} items */
  constructor(message, body, items) {
    super(message, 408, body);
    this.name = 'OtlpMockTimeoutError';
    this.items = items;
  }
}

/** An expectation that did not hold: the message is the server's, as a test failure reads. */
export class OtlpMockAssertionError extends Error {
  /** @param {VerifyResult} result */
  constructor(result) {
    super(result.message);
    this.name = 'OtlpMockAssertionError';
    this.result = result;
  }
}

/** @param {Record<string, any>} filter @returns {URLSearchParams} */
function searchParams(filter) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined || value === null) continue;
    if (key === 'attributes') {
      for (const [name, v] of Object.entries(value)) params.append(`attr.${name}`, String(v));
    } else {
      params.append(key, String(value));
    }
  }
  return params;
}

export class OtlpMock {
  /**
   * @param {string|URL} [url] the UI/API address (default http://127.0.0.1:4319)
   * @param {{ fetch?: typeof fetch, token?: string, headers?: Record<string, string> }} [options] `token`: the
   *   server's admin token (`--admin-token`), sent as `Authorization: Bearer`; `headers`: sent with every request
   */
  constructor(url = 'http://127.0.0.1:4319', options = {}) {
    this.url = String(url).replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
    this.headers = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers };
    const call = this.call.bind(this);
    this.faults = {
      /** @param {FaultRuleInput} rule @returns {Promise<FaultRule>} */
      add: (rule) => call('POST', '/api/faults', rule),
      /** @returns {Promise<FaultRule[]>} in checking order */
      list: async () => (await call('GET', '/api/faults')).faults,
      /** @param {string} id @returns {Promise<void>} */
      remove: (id) => call('DELETE', `/api/faults/${encodeURIComponent(id)}`),
      /** @returns {Promise<void>} */
      clear: () => call('DELETE', '/api/faults'),
      /**
       * What the exporter did after the rule's faults, judged by the OTLP retry rules (`verdict`, `ok`, `message`).
       * A batch not retried yet is `waiting` until its exporter's wait has passed: `final` is false until then,
       * and `finalAt` says when; wait for `final` before asserting "did not retry".
       * @param {string} id @returns {Promise<RetryReport>}
       */
      report: (id) => call('GET', `/api/faults/${encodeURIComponent(id)}/report`),
    };
  }

  /**
   * @param {string} method @param {string} path @param {unknown} [body] JSON, or a string sent as is
   * @returns {Promise<any>}
   */
  async call(method, path, body) {
    /** @type {RequestInit} */
    const init = { method, headers: { ...this.headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      init.headers = { ...this.headers, 'content-type': typeof body === 'string' ? 'application/x-ndjson' : 'application/json' };
    }
    let res;
    try {
      res = await this.fetch(this.url + path, init);
    } catch (err) {
      const cause = /** @type {any} */ (err)?.cause;
      const why = cause?.code ?? cause?.message ?? /** @type {Error} */ (err)?.message;
      throw new OtlpMockError(`${method} ${path}: otlp-mock is not reachable at ${this.url} (${why}); is it running? (npx otlp-mock)`, 0, null);
    }
    const text = await res.text();
    let json = null;
    if (text && (res.headers.get('content-type') ?? '').includes('application/json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = null;
      }
    }
    if (res.ok) return json ?? (text || undefined);
    // A 408's `error` explains the miss; any other refusal says what was wrong in `message`.
    const reason = (res.status === 408 ? json?.error : (json?.message ?? json?.error)) ?? (text || res.statusText);
    if (res.status === 408) throw new OtlpMockTimeoutError(reason, json, json ? (Object.values(json).find(Array.isArray) ?? []) : []);
    throw new OtlpMockError(`${method} ${path}: ${res.status} ${reason}`, res.status, json ?? text);
  }

  /**
   * @param {import('../query/params.js').ListKind} kind @param {Record<string, any>} filter @param {WaitOptions} [wait]
   */
  async list(kind, filter = {}, wait) {
    const params = searchParams(filter);
    if (wait) {
      params.set('minCount', String(wait.count ?? 1));
      if (wait.timeoutMs !== undefined) params.set('timeoutMs', String(wait.timeoutMs));
    }
    const query = params.toString();
    return (await this.call('GET', `/api/${kind}${query ? `?${query}` : ''}`))[kind];
  }

  /**
   * One page of a list with its total and the cursor of the next page, for walking through everything
   * stored: `for (let p = await mock.page('spans', f); ; p = await mock.page('spans', { ...f, cursor: p.nextCursor })) { …; if (!p.nextCursor) break; }`
   * @param {import('../query/params.js').ListKind} kind @param {Record<string, any>} [filter]
   * @returns {Promise<{ items: any[], total: number, nextCursor?: string }>}
   */
  async page(kind, filter = {}) {
    const query = searchParams(filter).toString();
    const body = await this.call('GET', `/api/${kind}${query ? `?${query}` : ''}`);
    return { items: body[kind], total: body.total, ...(body.nextCursor ? { nextCursor: body.nextCursor } : {}) };
  }

  /**
   * One stored trace: every span, and its summary. @param {string} traceId 32 hex digits or a unique prefix of at least 8
   * @returns {Promise<TraceDetail>}
   */
  trace(traceId) {
    return this.call('GET', `/api/traces/${encodeURIComponent(traceId)}`);
  }

  /**
   * Every service with something stored; `color` is the index of its colour in the UI, given in order of first arrival.
   * @returns {Promise<ServiceInfo[]>}
   */
  async services() {
    return (await this.call('GET', '/api/services')).services;
  }

  /** Stored spans matching the filter, oldest first. @param {SpanFilter} [filter] @returns {Promise<Span[]>} */
  spans(filter) {
    return this.list('spans', filter);
  }

  /**
   * A summary of every stored trace (root span, services, span and error counts, times), in the order each
   * trace first arrived. @param {TraceFilter} [filter] @returns {Promise<TraceSummary[]>}
   */
  traces(filter) {
    return this.list('traces', filter);
  }

  /** Resolves as soon as `count` matching traces are stored. @param {TraceFilter} [filter] @param {WaitOptions} [wait] @returns {Promise<TraceSummary[]>} */
  waitForTraces(filter, wait = {}) {
    return this.list('traces', filter, wait);
  }

  /** @param {LogFilter} [filter] @returns {Promise<LogRecord[]>} */
  logs(filter) {
    return this.list('logs', filter);
  }

  /** @param {MetricFilter} [filter] @returns {Promise<Metric[]>} */
  metrics(filter) {
    return this.list('metrics', filter);
  }

  /** Stored profiles, a row each, with their matching samples when `samples: 'all'`. @param {ProfileFilter & { samples?: 'none'|'all' }} [filter] @returns {Promise<Profile[]>} */
  profiles(filter) {
    return this.list('profiles', filter);
  }

  /** `count` counts samples. @param {ProfileFilter & { samples?: 'none'|'all' }} [filter] @param {WaitOptions} [wait] @returns {Promise<Profile[]>} */
  waitForProfiles(filter, wait = {}) {
    return this.list('profiles', filter, wait);
  }

  /** One stored profile with every sample. @param {string} profileId 32 hex digits @returns {Promise<ProfileDetail>} */
  profile(profileId) {
    return this.call('GET', `/api/profiles/${encodeURIComponent(profileId)}`);
  }

  /**
   * The matching samples of one sample type merged: a flame graph's tree and the top functions.
   * @param {ProfileFilter & { top?: number }} [filter] @returns {Promise<ProfileAggregate>}
   */
  profileAggregate(filter = {}) {
    const query = searchParams(filter).toString();
    return this.call('GET', `/api/profiles/aggregate${query ? `?${query}` : ''}`);
  }

  /** The request journal, newest first. @param {RequestFilter} [filter] @returns {Promise<JournalEntry[]>} */
  requests(filter) {
    return this.list('requests', filter);
  }

  /**
   * Resolves as soon as `count` matching spans are stored (the server waits; nothing polls).
   * @param {SpanFilter} [filter] @param {WaitOptions} [wait]
   * @returns {Promise<Span[]>} @throws {OtlpMockTimeoutError} with the server's explanation
   */
  waitForSpans(filter, wait = {}) {
    return this.list('spans', filter, wait);
  }

  /** @param {LogFilter} [filter] @param {WaitOptions} [wait] @returns {Promise<LogRecord[]>} */
  waitForLogs(filter, wait = {}) {
    return this.list('logs', filter, wait);
  }

  /** `count` counts data points. @param {MetricFilter} [filter] @param {WaitOptions} [wait] @returns {Promise<Metric[]>} */
  waitForMetrics(filter, wait = {}) {
    return this.list('metrics', filter, wait);
  }

  /** @param {RequestFilter} [filter] @param {WaitOptions} [wait] @returns {Promise<JournalEntry[]>} */
  waitForRequests(filter, wait = {}) {
    return this.list('requests', filter, wait);
  }

  /**
   * Checks expectations on the server, waiting up to `timeoutMs` until all hold; resolves with the result
   * whether or not they hold (see `expect` for the throwing form).
   * @param {VerifyRequest} request @returns {Promise<VerifyResult>}
   */
  verify(request) {
    return this.call('POST', '/api/verify', request);
  }

  /**
   * Like `verify`, but throws `OtlpMockAssertionError` (the server's message) when an expectation does not hold.
   * @param {VerifyRequest|Expectation[]} request @returns {Promise<VerifyResult>}
   */
  async expect(request) {
    const result = await this.verify(Array.isArray(request) ? { expectations: request } : request);
    if (!result.ok) throw new OtlpMockAssertionError(result);
    return result;
  }

  /**
   * A normalized, deterministic document of what is stored, for a golden file; compare with `snapshotDiff`.
   * @param {SnapshotFilter} [filter] @returns {Promise<Record<string, any>>}
   */
  snapshot(filter = {}) {
    const { mask, ...rest } = filter;
    const query = searchParams(mask ? { ...rest, mask: mask.join(',') } : rest).toString();
    return this.call('GET', `/api/snapshot${query ? `?${query}` : ''}`);
  }

  /** Forgets stored telemetry and the journal (fault rules stay). @returns {Promise<void>} */
  async clear() {
    await this.call('DELETE', '/api/telemetry');
  }

  /** @returns {Promise<Stats>} */
  stats() {
    return this.call('GET', '/api/stats');
  }

  /**
   * Stored telemetry as OTLP/JSON lines, one Export*ServiceRequest per received request.
   * @param {{ signal?: import('../otlp/signals.js').SignalName }} [options] @returns {Promise<string>}
   */
  async export({ signal } = {}) {
    return (await this.call('GET', `/api/export${signal ? `?signal=${signal}` : ''}`)) ?? '';
  }

  /**
   * Stores OTLP/JSON lines (as `export` returns them) as if received.
   * @param {string} lines @returns {Promise<{ requests: number, items: Record<string, number> }>}
   */
  import(lines) {
    return this.call('POST', '/api/import', lines);
  }
}

/**
 * The lines that differ between two snapshots (or any JSON values), with three lines of context, as
 * `-` expected / `+` actual; "" when they are equal.
 * @param {unknown} expected @param {unknown} actual @returns {string}
 */
export function snapshotDiff(expected, actual) {
  const a = JSON.stringify(expected, null, 2).split('\n');
  const b = JSON.stringify(actual, null, 2).split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  if (start === a.length && start === b.length) return '';
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  // Longest common subsequence of the differing middle, which is small when little changed.
  const x = a.slice(start, endA);
  const y = b.slice(start, endB);
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  /** @type {{ op: ' '|'-'|'+', line: string, at: number }[]} every line, `at` its line in `expected` */
  const ops = a.slice(0, start).map((line, k) => ({ op: /** @type {const} */ (' '), line, at: k + 1 }));
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    const at = start + i + 1;
    if (i < x.length && j < y.length && x[i] === y[j]) {
      ops.push({ op: ' ', line: x[i++], at });
      j++;
    } else if (i < x.length && (j === y.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ op: '-', line: x[i++], at });
    else ops.push({ op: '+', line: y[j++], at });
  }
  a.slice(endA).forEach((line, k) => ops.push({ op: ' ', line, at: endA + k + 1 }));
  // Hunks: each change with three lines of context, headed by where it is in `expected`.
  const shown = new Set();
  ops.forEach((o, k) => {
    if (o.op !== ' ') for (let c = k - 3; c <= k + 3; c++) shown.add(c);
  });
  /** @type {string[]} */
  const out = [];
  ops.forEach((o, k) => {
    if (!shown.has(k)) return;
    if (!shown.has(k - 1)) out.push(`@@ line ${o.at} (- expected, + actual) @@`);
    out.push(`${o.op} ${o.line}`);
  });
  return out.join('\n');
}
