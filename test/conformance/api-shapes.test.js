// Every admin route's answers against its response schema, over a varied store. A reply is written by
// fast-json-stringify from the route's schema, which would drop a field the schema does not name and
// coerce one it types wrongly: each reply written that way must say exactly what its handler returned.
// Each answer, streamed or not, must also validate against the route's schema in /api/openapi.json,
// whose item shapes are closed, so a field the schemas do not describe fails too.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestCollector } from '../helpers/collector.js';
import { fixtureJson, fixturePb, SIGNAL_NAMES } from '../helpers/payloads.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { requestType } from '../../server/otlp/schema.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { startApi } from '../../server/api/index.js';
import { registerFaultRoutes } from '../../server/api/faults.js';
import { registerForwardRoutes } from '../../server/api/forward.js';

const RANDOM_REQUESTS = 30;

/** What each handler returned, by request, and the replies that differ from it. */
function replyWatch() {
  /** @type {Map<string, string>} */
  const returned = new Map();
  /** @type {string[]} */
  const differ = [];
  let compared = 0;
  /** @param {import('fastify').FastifyInstance} app */
  const extension = (app) => {
    app.addHook('preSerialization', async (request, _reply, payload) => {
      returned.set(request.id, JSON.stringify(payload));
      return payload;
    });
    app.addHook('onSend', async (request, reply, payload) => {
      const before = returned.get(request.id);
      returned.delete(request.id);
      if (before === undefined || typeof payload !== 'string') return payload;
      compared++;
      try {
        assert.deepStrictEqual(JSON.parse(payload), JSON.parse(before));
      } catch (err) {
        differ.push(`${request.method} ${request.url} ${reply.statusCode}: ${/** @type {Error} */ (err).message}`);
      }
      return payload;
    });
  };
  return { extension, differ, compared: () => compared };
}

test('every answer of the admin API is what its handler returned, and what the OpenAPI document says', async (t) => {
  const collector = await startTestCollector();
  const watch = replyWatch();
  const api = await startApi({
    store: collector.store,
    journal: collector.journal,
    faults: collector.faults,
    host: '127.0.0.1',
    port: 0,
    extensions: [(app) => registerFaultRoutes(app, collector.faults), (app) => registerForwardRoutes(app, collector.forwarder), watch.extension],
    moreStats: () => ({ forward: collector.forwarder.stats() }),
  });
  t.after(async () => {
    await api.close();
    await collector.stop();
  });
  const base = `http://127.0.0.1:${api.port}`;

  // A varied store: the fixtures in both encodings, and random requests that use every field the schema has.
  for (const signal of SIGNAL_NAMES) {
    const path = SIGNALS[signal].httpPath;
    await post(collector.urls.http + path, fixtureJson(signal), 'application/json');
    await post(collector.urls.http + path, fixturePb(signal), 'application/x-protobuf');
    const r = createRandom(0x5ca1 + signal.length);
    const type = requestType(signal);
    for (let i = 0; i < RANDOM_REQUESTS; i++)
      await post(collector.urls.http + path, encodeLiberally(r, type, randomRequest(r, type, { maxDepth: 4 })), 'application/x-protobuf');
  }

  const doc = await (await fetch(`${base}/api/openapi.json`)).json();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi');
  /** @type {string[]} */
  const invalid = [];
  let validated = 0;

  /** Asks a route and checks the answer against the document. @param {string} method @param {string} route the path as the document names it @param {string} url @param {unknown} [body] */
  async function ask(method, route, url, body) {
    const res = await fetch(base + url, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const responses = doc.paths[route]?.[method.toLowerCase()]?.responses;
    assert.ok(responses, `the document has ${method} ${route}`);
    const answer = responses[res.status];
    assert.ok(answer, `the document has ${method} ${route} answering ${res.status}: ${text.slice(0, 300)}`);
    const json = answer.content?.['application/json'];
    if (!json) return text;
    const pointer = `openapi#/paths/${route.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${res.status}/content/application~1json/schema`;
    const validate = ajv.getSchema(pointer);
    assert.ok(validate, pointer);
    const value = JSON.parse(text);
    validated++;
    if (!validate(value)) invalid.push(`${method} ${url} ${res.status}: ${ajv.errorsText(validate.errors)}`);
    return value;
  }

  const spans = await ask('GET', '/api/spans', '/api/spans?limit=1000');
  assert.ok(spans.spans.length > 20, `spans stored: ${spans.spans.length}`);
  const traces = await ask('GET', '/api/traces', '/api/traces?limit=1000');
  await ask('GET', '/api/logs', '/api/logs?limit=1000');
  await ask('GET', '/api/metrics', '/api/metrics');
  await ask('GET', '/api/metrics', '/api/metrics?points=none');
  const requests = await ask('GET', '/api/requests', '/api/requests?limit=1000');
  await ask('GET', '/api/spans', '/api/spans?limit=2');
  await ask('GET', '/api/spans', '/api/spans?bogus=1');
  await ask('GET', '/api/spans', '/api/spans?name=never&minCount=1&timeoutMs=1');
  for (const { traceId } of traces.traces.slice(0, 40)) await ask('GET', '/api/traces/{traceId}', `/api/traces/${traceId}`);
  await ask('GET', '/api/traces/{traceId}', '/api/traces/zz');
  await ask('GET', '/api/traces/{traceId}', '/api/traces/0123456789abcdef0123456789abcdef');
  for (const { id } of requests.requests) await ask('GET', '/api/requests/{id}', `/api/requests/${id}`);
  await ask('GET', '/api/requests/{id}', '/api/requests/999999');
  await ask('GET', '/api/requests/{id}', '/api/requests/abc');
  for (const { id } of requests.requests.slice(0, 5)) await ask('GET', '/api/requests/{id}/attempts', `/api/requests/${id}/attempts`);
  await ask('GET', '/api/requests/{id}/attempts', '/api/requests/999999/attempts');
  await ask('GET', '/api/services', '/api/services');
  await ask('GET', '/api/services', '/api/services?x=1');
  await ask('GET', '/api/resources', '/api/resources');
  await ask('GET', '/api/resources', '/api/resources?x=1');
  await ask('GET', '/api/signals', '/api/signals');
  await ask('GET', '/api/health', '/api/health');
  await ask('GET', '/api/snapshot', '/api/snapshot?signal=logs');
  await ask('GET', '/api/snapshot', '/api/snapshot?times=sometimes');

  const rule = await ask('POST', '/api/faults', '/api/faults', { action: 'throttle', signals: 'traces', times: 2, match: { resource: { 'service.name': 'checkout' } } });
  await ask('POST', '/api/faults', '/api/faults', { action: 'partial', rejectItems: 1, side: 'upstream', message: 'some' });
  await ask('POST', '/api/faults', '/api/faults', { action: 'nonsense' });
  for (const signal of SIGNAL_NAMES) await post(collector.urls.http + SIGNALS[signal].httpPath, fixtureJson(signal), 'application/json', { 'user-agent': 'checkout' });
  await ask('GET', '/api/faults', '/api/faults');
  await ask('GET', '/api/faults/{id}', `/api/faults/${rule.id}`);
  await ask('GET', '/api/faults/{id}', '/api/faults/f999');
  await ask('GET', '/api/faults/{id}/report', `/api/faults/${rule.id}/report`);
  await ask('GET', '/api/faults/{id}/report', '/api/faults/f999/report');
  for (const { id } of (await ask('GET', '/api/requests', '/api/requests?fault=*')).requests)
    await ask('GET', '/api/requests/{id}/attempts', `/api/requests/${id}/attempts`);

  const target = await ask('POST', '/api/forward', '/api/forward', {
    url: 'http://127.0.0.1:9/base',
    encoding: 'json',
    headers: { authorization: 'secret', 'x-team': 'a' },
  });
  await ask('POST', '/api/forward', '/api/forward', { url: 'ftp://nowhere' });
  await post(collector.urls.http + SIGNALS.traces.httpPath, fixtureJson('traces'), 'application/json');
  await ask('GET', '/api/forward', '/api/forward');
  await ask('GET', '/api/forward/{id}', `/api/forward/${target.id}`);
  await ask('GET', '/api/forward/{id}', '/api/forward/t999');
  await ask('GET', '/api/stats', '/api/stats');
  await ask('GET', '/api/requests', '/api/requests?limit=5');

  await ask('POST', '/api/verify', '/api/verify', {
    expectations: [
      { signal: 'spans', name: 'any span', where: { service: 'checkout' } },
      { signal: 'logs', count: 0 },
      { signal: 'metrics', count: { atMost: 1 } },
    ],
    nothingElse: 'checkout',
  });
  await ask('POST', '/api/verify', '/api/verify', { expectations: [{ signal: 'nope' }] });
  await ask('DELETE', '/api/forward/{id}', `/api/forward/${target.id}`);
  await ask('DELETE', '/api/forward/{id}', `/api/forward/${target.id}`);
  await ask('DELETE', '/api/faults/{id}', `/api/faults/${rule.id}`);
  await ask('DELETE', '/api/faults/{id}', `/api/faults/${rule.id}`);
  await ask('DELETE', '/api/faults', '/api/faults');
  const exported = await ask('GET', '/api/export', '/api/export?signal=logs');
  await ask('DELETE', '/api/telemetry', '/api/telemetry');
  await ask('POST', '/api/import', '/api/import', undefined);
  await fetch(`${base}/api/import`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: exported }).then((res) => assert.equal(res.status, 200));
  await ask('GET', '/api/stats', '/api/stats');

  assert.deepEqual(watch.differ, [], 'replies that differ from what their handler returned');
  assert.deepEqual(invalid, [], 'answers that do not validate against the OpenAPI document');
  assert.ok(watch.compared() > 100, `replies compared: ${watch.compared()}`);
  assert.ok(validated > 100, `answers validated: ${validated}`);
});

/** @param {string} url @param {string|Uint8Array} body @param {string} contentType @param {Record<string, string>} [headers] */
async function post(url, body, contentType, headers = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body: /** @type {BodyInit} */ (body) });
  await res.arrayBuffer();
}
