import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerFaultRoutes } from '../../server/api/faults.js';
import { FaultRules } from '../../server/faults/rules.js';

const app = Fastify();
const faults = new FaultRules();
registerFaultRoutes(app, faults);
let base = '';

before(async () => {
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
after(() => app.close());

/** @param {string} method @param {string} path @param {unknown} [body] */
async function call(method, path, body) {
  const init = /** @type {RequestInit} */ ({ method });
  if (body !== undefined) {
    init.headers = { 'content-type': 'application/json' };
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

test('POST /api/faults adds a rule: 201 with its id, defaults and counters', async () => {
  await call('DELETE', '/api/faults');
  const res = await call('POST', '/api/faults', { action: 'throttle', signals: ['traces'], times: 2, match: { headers: { 'X-Tenant': 'a' } } });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('location'), `/api/faults/${res.body.id}`);
  assert.match(res.body.id, /^f\d+$/);
  assert.deepEqual(
    { ...res.body, id: 'x', message: 'x' },
    {
      id: 'x',
      action: 'throttle',
      side: 'client',
      signals: ['traces'],
      transports: ['http', 'grpc', 'otap'],
      match: { resource: {}, headers: { 'x-tenant': 'a' } },
      times: 2,
      after: 0,
      probability: 1,
      retryAfterMs: 1000,
      httpStatus: 429,
      grpcCode: 14,
      message: 'x',
      matched: 0,
      applied: 0,
      remaining: 2,
      spent: false,
    },
  );
});

test('GET /api/faults lists rules in order with matched and remaining', async () => {
  await call('DELETE', '/api/faults');
  const a = (await call('POST', '/api/faults', { action: 'unavailable', times: 1 })).body;
  const b = (await call('POST', '/api/faults', { action: 'delay', delayMs: 5 })).body;
  faults.decide({ signal: 'logs', transport: 'grpc', headers: {}, request: { resourceLogs: [] } });
  const res = await call('GET', '/api/faults');
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.faults.map((/** @type {any} */ r) => [r.id, r.action, r.matched, r.remaining, r.spent]),
    [
      [a.id, 'unavailable', 1, 0, true],
      [b.id, 'delay', 0, null, false],
    ],
  );
  assert.equal(res.body.faults[1].delayMs, 5);
  const one = await call('GET', `/api/faults/${a.id}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.spent, true);
  assert.equal((await call('GET', '/api/faults/nope')).status, 404);
});

test('DELETE /api/faults/:id removes one rule (204), then 404', async () => {
  await call('DELETE', '/api/faults');
  const { id } = (await call('POST', '/api/faults', { action: 'reset' })).body;
  const gone = await call('DELETE', `/api/faults/${id}`);
  assert.equal(gone.status, 204);
  assert.equal(gone.body, undefined);
  const again = await call('DELETE', `/api/faults/${id}`);
  assert.equal(again.status, 404);
  assert.match(again.body.error, new RegExp(id));
});

test('DELETE /api/faults removes every rule', async () => {
  await call('POST', '/api/faults', { action: 'hang' });
  await call('POST', '/api/faults', { action: 'reset' });
  assert.equal((await call('DELETE', '/api/faults')).status, 204);
  assert.deepEqual((await call('GET', '/api/faults')).body, { faults: [] });
});

/** @type {[string, unknown, string][]} */
const BAD = [
  ['unknown action', { action: 'explode' }, 'action'],
  ['negative number', { action: 'throttle', retryAfterMs: -5 }, 'retryAfterMs'],
  ['httpStatus 200 for an error action', { action: 'unavailable', httpStatus: 200 }, 'httpStatus'],
  ['times 0', { action: 'unavailable', times: 0 }, 'times'],
  ['probability 0', { action: 'unavailable', probability: 0 }, 'probability'],
  ['unknown option', { action: 'unavailable', retries: 3 }, 'retries'],
  ['a number as a string is not coerced', { action: 'unavailable', times: '2' }, 'times'],
  ['match value not a string', { action: 'reject', match: { resource: { 'service.name': 7 } } }, 'match.resource.service.name'],
  ['not an object', [{ action: 'reset' }], 'rule'],
];

for (const [name, body, field] of BAD) {
  test(`POST /api/faults with a bad rule (${name}): 400 naming ${field}`, async () => {
    await call('DELETE', '/api/faults');
    const res = await call('POST', '/api/faults', body);
    assert.equal(res.status, 400);
    assert.equal(res.body.field, field);
    assert.equal(typeof res.body.error, 'string');
    assert.ok(res.body.error.includes(field.split('.')[0]), res.body.error);
    assert.deepEqual((await call('GET', '/api/faults')).body, { faults: [] });
  });
}

/** Every number option of a rule, with an action that takes it. */
const NUMBER_OPTIONS = /** @type {const} */ ([
  ['probability', 'unavailable'],
  ['times', 'unavailable'],
  ['after', 'unavailable'],
  ['retryAfterMs', 'throttle'],
  ['delayMs', 'delay'],
  ['httpStatus', 'status'],
  ['grpcCode', 'status'],
  ['rejectItems', 'partial'],
]);

/** Values that are not numbers, and what the error says was given. */
const NOT_NUMBERS = [
  // What a form sends for Number("abc"): JSON carries NaN (and Infinity) as null.
  ['NaN, sent as null', Number.NaN, 'got null'],
  ['null', null, 'got null'],
  ['a word', 'abc', 'got "abc"'],
  ['a number as a string', '0.5', 'got "0.5"'],
  ['"NaN"', 'NaN', 'got "NaN"'],
  ['an empty string', '', 'got ""'],
  ['true', true, 'got true'],
  ['a list', [1], 'got a list'],
  ['an object', { value: 1 }, 'got an object'],
];

for (const [field, action] of NUMBER_OPTIONS) {
  for (const [name, value, given] of NOT_NUMBERS) {
    test(`POST /api/faults with ${field} ${name}: 400 naming ${field} and what was given, no rule added`, async () => {
      await call('DELETE', '/api/faults');
      const res = await call('POST', '/api/faults', { action, [field]: value });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.field, field);
      assert.ok(res.body.error.startsWith(`${field} must be`), res.body.error);
      assert.ok(res.body.error.includes(given), res.body.error);
      assert.deepEqual((await call('GET', '/api/faults')).body, { faults: [] });
    });
  }
  test(`POST /api/faults with ${field} negative: 400 naming ${field}`, async () => {
    await call('DELETE', '/api/faults');
    const res = await call('POST', '/api/faults', { action, [field]: field === 'probability' ? -0.5 : -1 });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.field, field);
    assert.match(res.body.error, /got -/);
    assert.deepEqual((await call('GET', '/api/faults')).body, { faults: [] });
  });
}

test('POST /api/faults with "probability": null never becomes a rule that faults every request', async () => {
  await call('DELETE', '/api/faults');
  const res = await call('POST', '/api/faults', { action: 'unavailable', probability: null });
  assert.equal(res.status, 400);
  assert.equal(res.body.error, 'probability must be a number greater than 0 and at most 1, got null (leave the option out for its default)');
  // Left out, it is 1, as documented.
  const ok = await call('POST', '/api/faults', { action: 'unavailable' });
  assert.equal(ok.status, 201);
  assert.equal(ok.body.probability, 1);
});

test('POST /api/faults with a null option of another action: 400, as with any value', async () => {
  await call('DELETE', '/api/faults');
  const res = await call('POST', '/api/faults', { action: 'reset', delayMs: null });
  assert.equal(res.status, 400);
  assert.equal(res.body.field, 'delayMs');
  assert.match(res.body.error, /does not apply to action reset/);
});

test('the schema of a rule allows no null for a number option', async () => {
  /** @type {any} */
  let body;
  const probe = Fastify();
  probe.addHook('onRoute', (route) => {
    if (route.method === 'POST') body = route.schema?.body;
  });
  registerFaultRoutes(probe, new FaultRules());
  for (const [field] of NUMBER_OPTIONS) {
    const prop = body.properties[field];
    const types = JSON.stringify(prop.anyOf ?? prop.type);
    assert.ok(!types.includes('null'), `${field}: ${types}`);
  }
  await probe.close();
});

test('POST /api/faults without a body: 400', async () => {
  const res = await fetch(`${base}/api/faults`, { method: 'POST' });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).field, 'rule');
});

test('every route carries a JSON schema', () => {
  /** @type {{ method: string|string[], url: string, schema: any }[]} */
  const routes = [];
  const probe = Fastify();
  probe.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push({ method: route.method, url: route.url, schema: route.schema });
  });
  registerFaultRoutes(probe, new FaultRules());
  assert.equal(routes.length, 5);
  for (const r of routes) {
    assert.ok(r.schema?.response, `${r.method} ${r.url}`);
    assert.deepEqual(r.schema.tags, ['faults']);
  }
  assert.equal(routes.find((r) => r.method === 'POST')?.schema?.body?.properties?.action?.enum.length, 8);
  return probe.close();
});
