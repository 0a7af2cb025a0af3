// The MCP server on the UI port (/mcp), driven by the SDK's own client over streamable HTTP: the tools answer as
// the REST routes they are, with telemetry sent by the official exporters; the admin token and the Host/Origin
// rules refuse as they do for the REST API; malformed input gets a JSON-RPC error and the server stays up.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestCollector } from '../helpers/collector.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';
import { sdkSpans } from '../helpers/sdk-items.js';
import { rawHttp } from '../helpers/raw-http.js';

const TOKEN = 'mcp-test-token';
const ACCEPT = 'application/json, text/event-stream';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {Client} */
let client;

/** A connected client; headers go on every request it sends. @param {Record<string, string>} [headers] */
async function connect(headers = { authorization: `Bearer ${TOKEN}` }) {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${collector.urls.ui}/mcp`), { requestInit: { headers } }));
  return c;
}

/** A tool's answer, parsed; fails on a tool error. @param {string} name @param {Record<string, unknown>} [args] */
async function call(name, args = {}) {
  const result = /** @type {any} */ (await client.callTool({ name, arguments: args }));
  assert.ok(!result.isError, `${name} failed: ${result.content[0].text}`);
  const { text } = result.content[0];
  return text === 'done' ? text : JSON.parse(text);
}

/** A raw POST to /mcp. @param {string} body @param {Record<string, string>} [headers] */
async function post(body, headers = {}) {
  const res = await fetch(`${collector.urls.ui}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${TOKEN}`, ...headers },
    body,
  });
  return { status: res.status, body: await res.json() };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

before(async () => {
  collector = await startTestCollector({ adminToken: TOKEN, retryWindowMs: 1000 });
  client = await connect();
});
after(async () => {
  await client.close();
  await collector.stop();
});
beforeEach(async () => {
  await call('clear');
  for (const rule of (await call('list_fault_rules')).faults) await call('remove_fault_rule', { id: rule.id });
});

test("initialize names the server; the tools are listed with the REST routes' schemas", async () => {
  assert.equal(client.getServerVersion()?.name, 'otlp-mock');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'add_fault_rule',
    'clear',
    'fault_report',
    'get_trace',
    'list_fault_rules',
    'list_services',
    'remove_fault_rule',
    'search_logs',
    'search_metrics',
    'search_spans',
    'search_traces',
    'snapshot',
    'verify',
  ]);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const openapi = await collector.api('/api/openapi.json', { headers: { authorization: `Bearer ${TOKEN}` } });
  const spanParams = openapi.paths['/api/spans'].get.parameters.map((/** @type {any} */ p) => p.name).filter((/** @type {string} */ n) => n !== 'attr.<key>');
  assert.deepEqual(Object.keys(byName.search_spans.inputSchema.properties ?? {}), spanParams);
  /** The document's schema with its references to components written out, as a tool's must be. @param {any} s @returns {any} */
  const whole = (s) => {
    if (Array.isArray(s)) return s.map(whole);
    if (!s || typeof s !== 'object') return s;
    const { $ref, ...rest } = s;
    const out = $ref ? { ...whole(openapi.components.schemas[$ref.split('/').pop()]) } : {};
    for (const [k, v] of Object.entries(rest)) out[k] = whole(v);
    return out;
  };
  assert.deepEqual(byName.add_fault_rule.inputSchema, whole(openapi.paths['/api/faults'].post.requestBody.content['application/json'].schema));
  assert.ok(!JSON.stringify(tools.map((t) => t.inputSchema)).includes('$ref'), "a tool's input schema refers to nothing outside it");
  assert.deepEqual(byName.verify.inputSchema.required, ['expectations']);
  assert.deepEqual(byName.get_trace.inputSchema.required, ['traceId']);
});

test('spans from an official exporter: found, verified, their trace read, a snapshot taken', async () => {
  const exporter = createExporter('traces', { wire: 'proto', compression: 'none' }, collector.urls);
  const spans = await sdkSpans('mcp-shop');
  await exportOrThrow(exporter, spans);
  await exporter.shutdown();

  assert.deepEqual(
    (await call('list_services')).services.map((/** @type {any} */ s) => s.name),
    ['mcp-shop'],
  );
  const found = await call('search_spans', { service: 'mcp-shop', name: 'checkout', 'attr.cart.id': 'c-42' });
  assert.equal(found.total, 1);

  const verdict = await call('verify', { expectations: [{ signal: 'spans', where: { service: 'mcp-shop', name: 'charge' }, count: 1 }], nothingElse: 'mcp-shop' });
  assert.equal(verdict.ok, false, 'checkout is stored too and matches no expectation');
  const met = await call('verify', { expectations: [{ signal: 'spans', where: { service: 'mcp-shop' }, count: spans.length }], timeoutMs: 2000 });
  assert.equal(met.ok, true, met.message);

  const trace = await call('get_trace', { traceId: found.spans[0].traceId });
  assert.equal(trace.spans[0].name, 'checkout');
  const doc = await call('snapshot', { signal: 'traces', service: 'mcp-shop' });
  assert.equal(doc.traces.length, 2);
});

test('a throttle rule added as a tool is applied to the exporter, and its report says it honoured Retry-After', async () => {
  const rule = await call('add_fault_rule', { action: 'throttle', signals: ['traces'], times: 1, retryAfterMs: 1000 });
  const exporter = createExporter('traces', { wire: 'proto', compression: 'none' }, collector.urls);
  await exportOrThrow(exporter, await sdkSpans('mcp-retry'));
  await exporter.shutdown();

  const [state] = (await call('list_fault_rules')).faults;
  assert.deepEqual([state.id, state.applied, state.spent], [rule.id, 1, true]);
  const report = await call('fault_report', { id: rule.id });
  assert.equal(report.ok, true, report.message);
  assert.deepEqual(
    report.chains[0].attempts.map((/** @type {any} */ a) => a.status),
    [429, 200],
  );
  assert.match(report.message, /Retry-After/);
});

test('bad arguments and unknown tools: errors that name what is wrong', async () => {
  const bad = /** @type {any} */ (await client.callTool({ name: 'search_spans', arguments: { limit: 0, colour: 'red' } }));
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /^400 .*parameter 'limit'.*unknown parameter 'colour'/);
  const rule = /** @type {any} */ (await client.callTool({ name: 'add_fault_rule', arguments: { action: 'explode' } }));
  assert.equal(rule.isError, true);
  assert.match(rule.content[0].text, /^400 .*explode/);
  const nested = /** @type {any} */ (client.callTool({ name: 'search_logs', arguments: { service: { name: 'x' } } }));
  await assert.rejects(nested, /'service' must be a string, number or boolean/);
  await assert.rejects(client.callTool({ name: 'get_trace', arguments: {} }), /get_trace needs 'traceId'/);
  await assert.rejects(client.callTool({ name: 'drop_tables', arguments: {} }), /no tool 'drop_tables': the tools are list_services/);
  const waited = /** @type {any} */ (await client.callTool({ name: 'search_spans', arguments: { service: 'nobody', minCount: 1, timeoutMs: 200 } }));
  assert.equal(waited.isError, true);
  assert.match(waited.content[0].text, /^408 .*0 of 1 spans with service=nobody after 200 ms/);
  const gone = /** @type {any} */ (await client.callTool({ name: 'fault_report', arguments: { id: 'f999' } }));
  assert.match(gone.content[0].text, /^404 .*no fault rule f999/);
});

test('the admin token: refused without it and with a wrong one, as the REST API refuses', async () => {
  await assert.rejects(connect({}), /401|requires its admin token/);
  await assert.rejects(connect({ authorization: 'Bearer wrong' }), /401|does not match/);
  await assert.rejects(connect({ 'x-otlp-mock-token': 'wrong' }), /401|does not match/);
  const other = await connect({ 'x-otlp-mock-token': TOKEN });
  assert.ok(Array.isArray((await other.listTools()).tools));
  await other.close();
  const refused = await post(initialize, { authorization: '' });
  assert.equal(refused.status, 401);
  assert.match(refused.body.message, /requires its admin token/);
});

test('a page on another site, a rebinding Host and a form post are refused', async () => {
  const cross = await post(initialize, { origin: 'https://evil.example' });
  assert.deepEqual([cross.status, /requests from pages on https:\/\/evil\.example/.test(cross.body.message)], [403, true]);
  // The authority of an absolute-form target stands for the Host header, which fetch does not let a caller set.
  const port = Number(new URL(collector.urls.ui).port);
  const headers = { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${TOKEN}` };
  const rebound = await rawHttp(port, 'POST', 'http://evil.example/mcp', { headers, body: initialize });
  assert.equal(rebound.status, 403);
  assert.match(rebound.body, /DNS rebinding/);
  const form = await post(initialize, { 'content-type': 'text/plain' });
  assert.equal(form.status, 415);
});

test('malformed JSON, a non-JSON-RPC body, an oversized body, GET: JSON-RPC errors, and the server keeps answering', async () => {
  const malformed = await post('{"jsonrpc": "2.0", "id": 1,');
  assert.equal(malformed.status, 400);
  assert.deepEqual([malformed.body.jsonrpc, malformed.body.error.code], ['2.0', -32700]);
  assert.match(malformed.body.error.message, /not valid JSON/);
  const proto = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"__proto__":{"x":1}}}');
  assert.match(proto.body.error.message, /"__proto__" key/);
  const notRpc = await post('{"hello": "world"}');
  assert.deepEqual([notRpc.status, notRpc.body.error.code], [400, -32700]);
  const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1024 * 1024) } }));
  assert.equal(big.status, 413);
  assert.equal(big.body.jsonrpc, '2.0');
  const get = await fetch(`${collector.urls.ui}/mcp`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${TOKEN}` } });
  assert.equal(get.status, 405);
  assert.ok((await call('list_services')).services);
});
