// With --admin-token, no spelling of an admin route is served without the token: authorisation is decided on the
// route the router matched, so percent-escapes, case, dot segments, repeated slashes, `;` and absolute-form
// targets cannot walk around it, nor around the content-type check that keeps cross-site forms out. Requests go
// over raw sockets so that no client normalises the target first.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { sampleRequest } from '../helpers/payloads.js';
import { rawHttp, rawUpgrade } from '../helpers/raw-http.js';

const TOKEN = 'walk-around-secret';
const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every spelling of an `/api/...` path tried: each names the same route to some reader (a browser, a proxy, a
 * router that decodes, collapses, lower-cases or resolves dot segments).
 * @param {string} path starting with /api/ @param {number} port
 * @returns {[string, string][]} [what, request target]
 */
function spellings(path, port) {
  const rest = path.slice('/api/'.length);
  const [first, ...more] = rest.split('/');
  const escapedFirst = `%${first.charCodeAt(0).toString(16)}${first.slice(1)}`;
  return [
    ['as is', path],
    ['an escaped letter', `/%61pi/${rest}`],
    ['every letter escaped', `/%61%70%69/${rest}`],
    ['an escaped letter in the route', `/api/${[escapedFirst, ...more].join('/')}`],
    ['upper case', `/API/${rest}`],
    ['mixed case', `/Api/${rest}`],
    ['an upper-case escape of upper case', `/%41PI/${rest}`],
    ['a doubled slash in front', `//api/${rest}`],
    ['a doubled slash inside', `/api//${rest}`],
    ['a dot segment', `/./api/${rest}`],
    ['an escaped dot segment', `/%2e/api/${rest}`],
    ['a dot-dot segment', `/x/../api/${rest}`],
    ['an escaped dot-dot segment', `/x/%2e%2e/api/${rest}`],
    ['an escaped slash', `/api%2f${rest}`],
    ['an escaped upper-case slash', `/api%2F${rest}`],
    ['a ; parameter on /api', `/api;v=1/${rest}`],
    ['a ; parameter at the end', `${path};v=1`],
    ['a trailing slash', `${path}/`],
    ['a trailing escaped slash', `${path}%2f`],
    ['absolute-form', `http://127.0.0.1:${port}${path}`],
    ['absolute-form, upper-case scheme', `HTTP://127.0.0.1:${port}${path}`],
    ['absolute-form, localhost', `http://localhost:${port}/%61pi/${rest}`],
    ['absolute-form without a port', `http://127.0.0.1${path}`],
    ['a query', `${path}?token=${TOKEN}`],
  ];
}

/** The spellings the router serves as the path they spell (it decodes escapes other than separators, and reads absolute-form). */
const ROUTED = new Set([
  'as is',
  'an escaped letter',
  'every letter escaped',
  'an escaped letter in the route',
  'absolute-form',
  'absolute-form, upper-case scheme',
  'absolute-form, localhost',
  'absolute-form without a port',
]);

/** @param {string} template an OpenAPI path @param {Record<string, string>} values */
const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_m, name) => values[name] ?? '1');

describe('no spelling of an admin route is served without the token', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  let port = 0;
  const auth = { authorization: `Bearer ${TOKEN}` };
  /** @type {{ method: string, path: string }[]} */
  const routes = [];
  /** @param {string} path */
  const admin = (path) => c.api(path, { headers: auth });

  before(async () => {
    c = await startTestCollector({ adminToken: TOKEN });
    port = Number(new URL(c.urls.ui).port);
    const res = await postOtlp(c.urls.http, '/v1/traces', JSON.stringify(sampleRequest('traces', { service: 'kept', traceId: TRACE_ID })), 'application/json');
    assert.equal(res.status, 200);
    const doc = await admin('/api/openapi.json');
    for (const [template, methods] of Object.entries(/** @type {Record<string, object>} */ (doc.paths))) {
      // Real ids, so that a route served by mistake answers 200 rather than a 404 that would hide it.
      const path = fill(template, { traceId: TRACE_ID, id: '1' });
      for (const method of Object.keys(methods)) {
        routes.push({ method: method.toUpperCase(), path });
        if (method === 'get') routes.push({ method: 'HEAD', path });
      }
    }
    // Routes the document leaves out are the admin API's too.
    routes.push({ method: 'GET', path: '/api/openapi.json' }, { method: 'GET', path: '/api/live' });
  });
  after(() => c.stop());

  /** What the walk must leave as it found it. */
  const unchanged = async () => {
    assert.equal((await admin('/api/stats')).signals.traces.stored, 1);
    assert.deepEqual((await admin('/api/faults')).faults, []);
    assert.deepEqual((await admin('/api/forward')).targets, []);
  };

  test('the document lists the routes the walk tries', () => {
    const listed = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const route of ['GET /api/stats', 'POST /api/faults', 'POST /api/forward', 'DELETE /api/telemetry', 'GET /api/spans']) {
      assert.ok(listed.has(route), `${route} is not in /api/openapi.json`);
    }
  });

  test('every route, every method, every spelling: 401 without the token, or 404 where it routes nowhere', async () => {
    /** @type {string[]} */
    const served = [];
    let tried = 0;
    for (const { method, path } of routes) {
      const open = path === '/api/health';
      for (const [what, target] of spellings(path, port)) {
        const body = CHANGES.has(method) ? '{"action":"unavailable","url":"http://127.0.0.1:9/"}' : '';
        const res = await rawHttp(port, method, target, { headers: body ? { 'Content-Type': 'application/json' } : {}, body });
        tried++;
        const allowed = open ? [200, 401, 404] : [401, 404];
        if (!allowed.includes(res.status)) served.push(`${method} ${target} (${what}): ${res.status} ${res.body.slice(0, 120)}`);
      }
    }
    assert.deepEqual(served, [], `${served.length} of ${tried} requests were answered other than 401/404`);
    await unchanged();
  });

  test('the content-type check that keeps cross-site forms out holds in every spelling, with the token', async () => {
    /** @type {string[]} */
    const passed = [];
    for (const { method, path } of routes.filter((r) => CHANGES.has(r.method))) {
      for (const [what, target] of spellings(path, port)) {
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
          const res = await rawHttp(port, method, target, { headers: { ...auth, 'Content-Type': type }, body: 'action=unavailable' });
          if (res.status !== 415 && res.status !== 404) passed.push(`${method} ${target} (${what}, ${type}): ${res.status}`);
        }
      }
    }
    assert.deepEqual(passed, []);
    await unchanged();
  });

  test('with the token, the spellings the router serves are served, and the others are 404s, never the page', async () => {
    /** @type {string[]} */
    const wrong = [];
    for (const [what, target] of spellings('/api/stats', port)) {
      const res = await rawHttp(port, 'GET', target, { headers: auth });
      if (ROUTED.has(what) || what === 'a query') {
        if (res.status !== 200 || JSON.parse(res.body).signals.traces.stored !== 1) wrong.push(`${target} (${what}): ${res.status}`);
      } else if (res.status !== 404 || !/no API route/.test(res.body)) wrong.push(`${target} (${what}): ${res.status} ${res.body.slice(0, 60)}`);
    }
    assert.deepEqual(wrong, []);
  });

  test("an absolute-form target's authority is the host the rebinding guard checks", async () => {
    for (const path of ['/api/health', '/api/stats']) {
      const res = await rawHttp(port, 'GET', `http://rebound.example:${port}${path}`, { headers: auth });
      assert.equal(res.status, 403, path);
      assert.match(res.body, /rebound\.example/);
    }
  });

  test('every spelling of the live feed: 401 without the token; with it, only those the router would serve', async () => {
    /** @type {string[]} */
    const wrong = [];
    for (const [what, target] of spellings('/api/live', port)) {
      if (target.includes('token=')) continue;
      const refused = await rawUpgrade(port, target);
      if (refused.status !== 401) wrong.push(`${target} (${what}) without the token: ${refused.status}`);
      const withToken = await rawUpgrade(port, `${target}${target.includes('?') ? '&' : '?'}token=${TOKEN}`);
      const routed = ROUTED.has(what);
      if (withToken.status !== (routed ? 101 : 404)) wrong.push(`${target} (${what}) with the token: ${withToken.status}, expected ${routed ? 101 : 404}`);
    }
    assert.deepEqual(wrong, []);
  });
});
