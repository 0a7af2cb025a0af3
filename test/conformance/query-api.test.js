// The query API answers over everything stored, never "nothing" while it holds the answer: every filter
// finds the oldest item under thousands of newer ones, pages with cursors cover everything exactly once
// while data keeps arriving, and a misspelled parameter or a bad value is a 400 that says what is wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { protoBody } from '../../bench/workload.js';
import { spans, logs } from '../testing/data.js';
import { PARAMS } from '../../server/query/params.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** the first trace stored, under every later one */
const oldest = spans('oldest-service', ['GET /oldest', 'SELECT oldest', 'fail oldest']);
const OLD_TRACE = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
for (const span of oldest.resourceSpans[0].scopeSpans[0].spans) span.traceId = OLD_TRACE;
const NEWER_REQUESTS = 24;

/** @param {'traces'|'logs'} signal @param {any} body */
async function post(signal, body) {
  const res = await postOtlp(collector.urls.http, `/v1/${signal}`, JSON.stringify(body), 'application/json');
  assert.equal(res.status, 200);
}

/** @param {string} path @returns {Promise<{ status: number, body: any }>} */
async function get(path) {
  const res = await fetch(collector.urls.ui + path);
  return { status: res.status, body: await res.json() };
}

before(async () => {
  collector = await startTestCollector({ print: 'none' });
  const span = oldest.resourceSpans[0].scopeSpans[0].spans[1];
  span.attributes = [{ key: 'db.statement', value: { stringValue: 'SELECT * FROM oldest' } }];
  span.endTimeUnixNano = String(BigInt(span.startTimeUnixNano) + 900_000_000n);
  await post('traces', oldest);
  const old = logs('oldest-service', ['The Oldest Record of all']);
  const record = /** @type {any} */ (old.resourceLogs[0].scopeLogs[0].logRecords[0]);
  record.traceId = OLD_TRACE;
  record.severityNumber = 21;
  await post('logs', old);
  for (let seed = 1; seed <= NEWER_REQUESTS; seed++) {
    const res = await postOtlp(collector.urls.http, '/v1/traces', protoBody(seed), 'application/x-protobuf');
    assert.equal(res.status, 200);
  }
  for (let i = 0; i < 12; i++)
    await post(
      'logs',
      logs(
        `svc-${i % 3}`,
        Array.from({ length: 1000 }, (_, j) => `record ${i}-${j}`),
      ),
    );
});

after(() => collector?.stop());

test('every span and trace filter finds the oldest trace under 12,288 newer spans', async () => {
  const expectations = [
    ['/api/spans?name=GET%20/oldest', 1],
    ['/api/spans?nameContains=select%20OLD', 1],
    ['/api/spans?attr.db.statement=', 1],
    ['/api/spans?attr.db.statement=SELECT%20*%20FROM%20oldest', 1],
    [`/api/spans?traceId=${OLD_TRACE.slice(0, 8)}`, 3],
    [`/api/spans?traceId=${OLD_TRACE}`, 3],
    [`/api/spans?spanId=${oldest.resourceSpans[0].scopeSpans[0].spans[2].spanId}`, 1],
    ['/api/spans?service=oldest-service&error=true', 1],
    ['/api/spans?service=oldest-service&minDurationMs=800', 1],
    ['/api/spans?service=oldest-service&maxDurationMs=3', 2],
    [`/api/traces?traceId=${OLD_TRACE.slice(0, 10)}`, 1],
    ['/api/traces?service=oldest-service', 1],
    ['/api/traces?rootName=GET%20/oldest', 1],
    ['/api/traces?rootNameContains=get%20/OLD', 1],
    ['/api/traces?name=SELECT%20oldest', 1],
    ['/api/traces?nameContains=fail%20old', 1],
    ['/api/traces?attr.db.statement=', 1],
    ['/api/traces?service=oldest-service&error=true&minDurationMs=899', 1],
    ['/api/traces?service=oldest-service&to=1768469400000', 1],
    ['/api/traces?service=oldest-service&from=2026-01-15T09:30:00.000000001Z', 0],
    ['/api/traces?service=oldest-service&from=1768469400000000000', 1],
  ];
  for (const [path, n] of /** @type {[string, number][]} */ (expectations)) {
    const { status, body } = await get(path);
    assert.equal(status, 200, path);
    assert.equal(body.total, n, path);
  }
  const { body } = await get(`/api/traces?traceId=${OLD_TRACE.slice(0, 8)}`);
  assert.deepEqual([body.traces[0].rootName, body.traces[0].spanCount, body.traces[0].errorCount, body.traces[0].services], ['GET /oldest', 3, 1, ['oldest-service']]);
});

test('log filters find the oldest record under 12,000 newer ones: body text ignoring case, trace, severity range', async () => {
  for (const path of [
    '/api/logs?body=the%20oldest%20RECORD',
    `/api/logs?traceId=${OLD_TRACE}`,
    `/api/logs?traceId=${OLD_TRACE.slice(0, 8)}`,
    '/api/logs?severity=21&maxSeverity=21',
    '/api/logs?service=oldest-service&to=1768469400000000000',
  ]) {
    const { body } = await get(path);
    assert.equal(body.total, 1, path);
    assert.equal(body.logs[0].body, 'The Oldest Record of all', path);
  }
  assert.equal((await get('/api/logs?severity=22')).body.total, 0);
  const services = (await get('/api/services')).body.services;
  // Each has its colour, in order of first arrival: told apart here from what is stored.
  assert.equal(new Set(services.map((/** @type {any} */ s) => s.color)).size, services.length);
  assert.deepEqual(
    services.filter((/** @type {any} */ s) => s.name !== 'frontend').map((/** @type {any} */ { color, ...s }) => s),
    [
      { name: 'oldest-service', spans: 3, logs: 1, points: 0, samples: 0 },
      { name: 'svc-0', spans: 0, logs: 4000, points: 0, samples: 0 },
      { name: 'svc-1', spans: 0, logs: 4000, points: 0, samples: 0 },
      { name: 'svc-2', spans: 0, logs: 4000, points: 0, samples: 0 },
    ],
  );
});

test('sorting by duration ranks every stored trace; order only orders the page', async () => {
  const longest = await get('/api/traces?sort=duration&limit=5&order=desc');
  const durations = longest.body.traces.map((/** @type {any} */ t) => Number(t.durationNanos));
  assert.deepEqual(
    durations,
    [...durations].sort((a, b) => b - a),
  );
  assert.equal(longest.body.traces[0].traceId, OLD_TRACE, 'the 900 ms trace is the longest');
  const asc = await get('/api/traces?sort=duration&limit=5');
  assert.deepEqual(asc.body.traces, [...longest.body.traces].reverse());
  const spansByStart = await get('/api/spans?sort=start&order=desc&limit=50');
  const starts = spansByStart.body.spans.map((/** @type {any} */ s) => BigInt(s.startTimeUnixNano));
  assert.deepEqual(
    starts,
    [...starts].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)),
  );
});

test('paging with cursors visits every match exactly once while new spans keep arriving', async () => {
  const { body: first } = await get('/api/spans?limit=1000&order=desc');
  const total = first.total;
  const seen = new Set(first.spans.map((/** @type {any} */ s) => s.spanId));
  let cursor = first.nextCursor;
  let pages = 1;
  while (cursor) {
    // New data between pages must neither shift nor repeat what the cursor has yet to visit.
    await post('traces', spans('late-arrival', ['late']));
    const { status, body } = await get(`/api/spans?limit=1000&order=desc&cursor=${cursor}`);
    assert.equal(status, 200);
    for (const s of body.spans) {
      assert.ok(!seen.has(s.spanId), `span ${s.spanId} was on an earlier page`);
      seen.add(s.spanId);
    }
    cursor = body.nextCursor;
    pages++;
  }
  assert.equal(seen.size, total);
  assert.equal(pages, Math.ceil(total / 1000));
  assert.ok(seen.has(oldest.resourceSpans[0].scopeSpans[0].spans[0].spanId), 'the last page ends with the oldest span');
});

test('GET /api/traces/:id loads one trace by its id or a unique prefix', async () => {
  const full = await get(`/api/traces/${OLD_TRACE}`);
  assert.equal(full.status, 200);
  assert.deepEqual(
    full.body.spans.map((/** @type {any} */ s) => s.name),
    ['GET /oldest', 'SELECT oldest', 'fail oldest'],
  );
  assert.equal(full.body.summary.spanCount, 3);
  assert.deepEqual((await get(`/api/traces/${OLD_TRACE.slice(0, 8).toUpperCase()}`)).body, full.body);
  assert.deepEqual(await get('/api/traces/ffffffffffffffffffffffffffffffff'), {
    status: 404,
    body: { statusCode: 404, error: 'Not Found', message: 'no stored trace has the id ffffffffffffffffffffffffffffffff' },
  });
  const ambiguous = await get('/api/traces/00000000');
  assert.equal(ambiguous.status, 400);
  assert.match(ambiguous.body.message, /^\d+ stored traces start with 00000000 \(0{31}\d, .*\): give more digits$/);
  assert.deepEqual(await get('/api/traces/xyz'), {
    status: 400,
    body: { statusCode: 400, error: 'Bad Request', message: "'xyz' is not a trace id: give 32 hex digits, or a prefix of at least 8" },
  });
});

test('an unknown parameter or a bad value is a 400 that names it, on every list', async () => {
  const cases = [
    [
      '/api/spans?servcie=nobody&minCount=2',
      "unknown parameter 'servcie'; did you mean 'service'? (/api/spans takes service, name, nameContains, traceId, spanId, requestId, error, minDurationMs, maxDurationMs, from, to, sort, order, limit, cursor, minCount, timeoutMs, attr.<key>)",
    ],
    [
      '/api/logs?sevrity=17',
      "unknown parameter 'sevrity'; did you mean 'severity'? (/api/logs takes service, severity, maxSeverity, body, traceId, spanId, requestId, from, to, sort, order, limit, cursor, minCount, timeoutMs, attr.<key>)",
    ],
    [
      '/api/traces?eror=true',
      "unknown parameter 'eror'; did you mean 'error'? (/api/traces takes service, name, nameContains, rootName, rootNameContains, traceId, error, minDurationMs, maxDurationMs, from, to, sort, order, limit, cursor, minCount, timeoutMs, attr.<key>)",
    ],
    [
      '/api/metrics?nmae=x',
      "unknown parameter 'nmae'; did you mean 'name'? (/api/metrics takes service, name, nameContains, key, from, to, points, order, limit, cursor, minCount, timeoutMs, attr.<key>)",
    ],
    [
      '/api/requests?attr.x=1',
      "unknown parameter 'attr.x' (/api/requests takes signal, transport, outcome, fault, service, stream, group, order, limit, cursor, minCount, timeoutMs)",
    ],
    ['/api/spans?limit=0', 'parameter \'limit\' must be an integer from 1 to 100000, got "0"'],
    ['/api/spans?limit=x&error=maybe', 'parameter \'limit\' must be an integer from 1 to 100000, got "x"; parameter \'error\' must be true or false, got "maybe"'],
    ['/api/spans?traceId=4bf92f', 'parameter \'traceId\' must be a trace id: 8 to 32 hex digits (a prefix finds every trace that starts with it), got "4bf92f"'],
    ['/api/spans?spanId=xyz', 'parameter \'spanId\' must be a span id: 16 hex digits, got "xyz"'],
    ['/api/logs?severity=25', 'parameter \'severity\' must be an integer from 0 to 24, got "25"'],
    ['/api/spans?minDurationMs=-1', 'parameter \'minDurationMs\' must be a number from 0 to ∞, got "-1"'],
    [
      '/api/traces?from=yesterday',
      'parameter \'from\' must be a time: ISO 8601 (2026-01-15T09:30:00Z), unix milliseconds (13 digits) or unix nanoseconds (19 digits), got "yesterday"',
    ],
    ['/api/traces?sort=name', 'parameter \'sort\' must be one of arrival, start, duration, spans, got "name"'],
    ['/api/spans?order=up', 'parameter \'order\' must be one of asc, desc, got "up"'],
    ['/api/spans?cursor=abc', 'parameter \'cursor\' is not a cursor this server gave out: pass the nextCursor of the previous answer as it is, got "abc"'],
    ['/api/spans?service=', 'parameter \'service\' is empty; leave it out to match everything, got ""'],
    ['/api/spans?service=a&service=b', "parameter 'service' is given 2 times; give it once"],
    ['/api/requests?signal=spans', 'parameter \'signal\' must be one of traces, metrics, logs, profiles, got "spans"'],
    ['/api/requests?timeoutMs=300001', 'parameter \'timeoutMs\' must be an integer from 0 to 300000, got "300001"'],
    ['/api/services?service=x', '/api/services takes no parameters, got service'],
  ];
  for (const [path, message] of cases) {
    assert.deepEqual(await get(path), { status: 400, body: { statusCode: 400, error: 'Bad Request', message } }, path);
  }
});

test('GET /api/traces waits with minCount/timeoutMs, and explains a timeout', async () => {
  const waiting = get('/api/traces?service=waited-for&minCount=2&timeoutMs=10000');
  await collector.api('/api/stats').then(async function until(/** @type {any} */ s) {
    if (s.waiters < 1) return until(await collector.api('/api/stats'));
  });
  await post('traces', spans('waited-for', ['first']));
  await post('traces', spans('waited-for', ['second', 'second child']));
  const { status, body } = await waiting;
  assert.equal(status, 200);
  assert.equal(body.total, 2);
  assert.deepEqual(
    body.traces.map((/** @type {any} */ t) => t.rootName),
    ['first', 'second'],
  );

  const late = await get('/api/traces?service=waited-for&error=true&timeoutMs=100');
  assert.equal(late.status, 408);
  assert.equal(late.body.total, 0);
  assert.match(
    late.body.error,
    /^0 of 1 traces with service=waited-for and error=true after 100 ms; of the \d+ traces stored, 2 have service=waited-for, \d+ have error=true; \d+ traces from other services \(frontend: \d+, .*\)$/,
  );
});

test('fault=true and fault=* find every faulted request; fault=none the others', async () => {
  await collector.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'unavailable', times: 1 }) });
  const res = await postOtlp(collector.urls.http, '/v1/traces', JSON.stringify(spans('faulted', ['x'])), 'application/json');
  assert.equal(res.status, 503);
  const all = (await get('/api/requests?limit=100000')).body.total;
  for (const any of ['true', '*', 'unavailable']) assert.equal((await get(`/api/requests?fault=${any}`)).body.total, 1, any);
  assert.equal((await get('/api/requests?fault=none')).body.total, all - 1);
});

test('/api/openapi.json documents every parameter of every list', async () => {
  const doc = (await get('/api/openapi.json')).body;
  for (const [kind, params] of Object.entries(PARAMS)) {
    const documented = doc.paths[`/api/${kind}`].get.parameters.map((/** @type {any} */ p) => p.name);
    assert.deepEqual(documented, [...Object.keys(params), ...(kind === 'requests' ? [] : ['attr.<key>'])], kind);
    assert.ok(doc.paths[`/api/${kind}`].get.responses['400'], `${kind} documents its 400`);
  }
  assert.ok(doc.paths['/api/traces/{traceId}'].get);
  assert.ok(doc.paths['/api/services'].get);
});
