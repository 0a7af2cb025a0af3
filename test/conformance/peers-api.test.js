// GET /api/operations and GET /api/dependencies over everything stored: counts a hand count agrees with, every
// filter applied, and strict parameters (an unknown name or a bad value is a 400 that names it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { hex, postJson, traceRequest } from '../helpers/ui-data.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
const NOW = Date.now();
const OLD = NOW - 3_600_000;

/**
 * frontend GET /cart → checkout POST /checkout → payment charge (failed when `fail`), and checkout → checkout
 * (a span of the same service: no edge). @param {number} i @param {number} at @param {boolean} fail
 */
function cart(i, at, fail) {
  return traceRequest(hex(0xd00 + i, 32), [
    { service: 'frontend', name: 'GET /cart', spanId: hex(1), startMs: at, durMs: 40 },
    { service: 'checkout', name: 'POST /checkout', spanId: hex(2), parentSpanId: hex(1), startMs: at + 1, durMs: 30, attrs: { 'http.route': '/checkout' } },
    { service: 'checkout', name: 'validate', spanId: hex(3), parentSpanId: hex(2), startMs: at + 2, durMs: 2 },
    { service: 'payment', name: 'charge', spanId: hex(4), parentSpanId: hex(2), startMs: at + 5, durMs: 20, error: fail },
  ]);
}

before(async () => {
  collector = await startTestCollector();
  // 4 recent traces (one failed charge), 2 an hour old, and one whose parent never arrived.
  for (let i = 0; i < 4; i++) await postJson(collector.urls.http, 'traces', cart(i, NOW - 10_000 + i, i === 3));
  for (let i = 4; i < 6; i++) await postJson(collector.urls.http, 'traces', cart(i, OLD + i, false));
  await postJson(
    collector.urls.http,
    'traces',
    traceRequest(hex(0xe00, 32), [{ service: 'payment', name: 'charge', spanId: hex(9), parentSpanId: hex(8), startMs: NOW - 5000, durMs: 1 }]),
  );
});
after(() => collector?.stop());

const get = async (/** @type {string} */ path) => {
  const res = await fetch(collector.urls.ui + path);
  return { status: res.status, body: await res.json() };
};

test('operations: each span name of each service, counted over everything stored', async () => {
  const { body } = await get('/api/operations');
  assert.deepEqual(
    body.operations.map((/** @type {any} */ o) => [o.service, o.name, o.spans, o.errors, o.maxMs]),
    [
      ['checkout', 'POST /checkout', 6, 0, 30],
      ['checkout', 'validate', 6, 0, 2],
      ['frontend', 'GET /cart', 6, 0, 40],
      ['payment', 'charge', 7, 1, 20],
    ],
  );
  assert.equal(body.total, 4);
  assert.equal(body.operations[0].totalMs, 180);
  const payment = await get('/api/operations?service=payment');
  assert.deepEqual(
    payment.body.operations.map((/** @type {any} */ o) => o.name),
    ['charge'],
  );
  const recent = await get(`/api/operations?service=checkout&from=${NOW - 60_000}&nameContains=CHECK`);
  assert.deepEqual(
    recent.body.operations.map((/** @type {any} */ o) => [o.name, o.spans]),
    [['POST /checkout', 4]],
  );
  const failed = await get('/api/operations?error=true');
  assert.deepEqual(
    failed.body.operations.map((/** @type {any} */ o) => [o.service, o.name, o.spans]),
    [['payment', 'charge', 1]],
  );
});

test('dependencies: an edge per pair of services with calls, errors and traces, under any filter', async () => {
  const { body } = await get('/api/dependencies');
  assert.deepEqual(
    body.edges.map((/** @type {any} */ e) => [e.parent, e.child, e.calls, e.errors, e.traces]),
    [
      ['checkout', 'payment', 6, 1, 6],
      ['frontend', 'checkout', 6, 0, 6],
    ],
  );
  assert.deepEqual(body.services, ['checkout', 'frontend', 'payment']);
  assert.equal(body.total, 2);
  // The newest to arrive first.
  assert.equal(body.edges[0].traceIds[0], hex(0xd00 + 5, 32));
  assert.equal(body.edges[0].traceIds.length, 6);

  const recent = await get(`/api/dependencies?from=${NOW - 60_000}`);
  assert.deepEqual(
    recent.body.edges.map((/** @type {any} */ e) => [e.parent, e.child, e.calls]),
    [
      ['checkout', 'payment', 4],
      ['frontend', 'checkout', 4],
    ],
  );
  const errors = await get('/api/dependencies?error=true');
  assert.deepEqual(
    errors.body.edges.map((/** @type {any} */ e) => [e.parent, e.child, e.calls, e.traceIds]),
    [['checkout', 'payment', 1, 1, [hex(0xd00 + 3, 32)]]].map(([p, c, n, , ids]) => [p, c, n, ids]),
  );
  const frontend = await get('/api/dependencies?service=frontend');
  assert.deepEqual(
    frontend.body.edges.map((/** @type {any} */ e) => e.child),
    ['checkout'],
  );
  const route = await get('/api/dependencies?attr.http.route=/checkout');
  assert.deepEqual(
    route.body.edges.map((/** @type {any} */ e) => [e.parent, e.child, e.calls]),
    [['frontend', 'checkout', 6]],
  );
});

test('unknown parameters and bad values are a 400 that names them; the routes are documented', async () => {
  for (const [path, words] of [
    ['/api/operations?servce=a', ["unknown parameter 'servce'", "did you mean 'service'", '/api/operations takes service']],
    ['/api/operations?error=maybe', ["parameter 'error' must be true or false"]],
    ['/api/operations?service=', ["parameter 'service' is empty"]],
    ['/api/dependencies?limit=5', ["unknown parameter 'limit'", '/api/dependencies takes service']],
    ['/api/dependencies?from=yesterday&minDurationMs=-1', ["parameter 'from'", "parameter 'minDurationMs'"]],
    ['/api/dependencies?service=a&service=b', ["parameter 'service' is given 2 times"]],
  ]) {
    const { status, body } = await get(/** @type {string} */ (path));
    assert.equal(status, 400, String(path));
    for (const w of words) assert.ok(body.message.includes(w), `${path}: ${body.message} should name ${w}`);
  }
  const doc = (await get('/api/openapi.json')).body;
  for (const kind of ['operations', 'dependencies']) {
    const op = doc.paths[`/api/${kind}`].get;
    assert.ok(op.responses['400'] && op.responses['200'].content['application/json'].schema.properties.total, kind);
    assert.ok(
      op.parameters.some((/** @type {any} */ p) => p.name === 'attr.<key>'),
      kind,
    );
  }
});
