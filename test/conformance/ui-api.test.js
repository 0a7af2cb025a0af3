// The API the UI's resource page and per-record links use: GET /api/resources and the requestId filter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
const NOW = Date.now();

/** @param {string} instance */
const logsOf = (instance) => ({
  resourceLogs: [
    {
      resource: {
        attributes: kvs({
          'service.name': 'shop',
          'service.instance.id': instance,
          'telemetry.sdk.name': 'opentelemetry',
          'telemetry.sdk.language': 'python',
          'telemetry.sdk.version': '1.2.3',
        }),
      },
      scopeLogs: [{ scope: { name: 't' }, logRecords: [{ timeUnixNano: ns(NOW), severityNumber: 9, body: { stringValue: `hello from ${instance}` } }] }],
    },
  ],
});

before(async () => {
  collector = await startTestCollector();
  await postJson(collector.urls.http, 'logs', logsOf('a'));
  await postJson(collector.urls.http, 'logs', logsOf('b'));
  await postJson(collector.urls.http, 'logs', logsOf('a'));
  await postJson(collector.urls.http, 'traces', traceRequest('ab'.repeat(16), [{ service: 'shop', name: 'op', spanId: hex(1), startMs: NOW, durMs: 1 }]));
});

after(() => collector?.stop());

test('GET /api/resources has one row per instance, with its SDK, user agent, times and counts', async () => {
  const { resources } = await collector.api('/api/resources');
  const rows = resources.map((/** @type {any} */ r) => [r.service, r.attributes['service.instance.id'] ?? null, r.spans, r.logs, r.points]);
  assert.deepEqual(
    rows.sort(),
    [
      ['shop', 'a', 0, 2, 0],
      ['shop', 'b', 0, 1, 0],
      ['shop', null, 1, 0, 0],
    ].sort(),
  );
  const a = resources.find((/** @type {any} */ r) => r.attributes['service.instance.id'] === 'a');
  assert.deepEqual(a.sdk, { name: 'opentelemetry', language: 'python', version: '1.2.3' });
  assert.match(a.key, /^[0-9a-f]{16}$/);
  assert.deepEqual(a.userAgents, ['node']);
  assert.ok(Date.parse(a.firstSeen) <= Date.parse(a.lastSeen));
  const res = await fetch(`${collector.urls.ui}/api/resources?service=shop`);
  assert.equal(res.status, 400);
  assert.match((await res.json()).message, /takes no parameters, got service/);
});

test('requestId finds the log records and spans one request carried', async () => {
  const { requests } = await collector.api('/api/requests?signal=logs&order=asc');
  const [first, second] = requests;
  const logs = await collector.api(`/api/logs?requestId=${second.id}`);
  assert.deepEqual(
    logs.logs.map((/** @type {any} */ l) => l.body),
    ['hello from b'],
  );
  assert.equal((await collector.api(`/api/logs?requestId=${first.id}`)).total, 1);
  const { requests: traced } = await collector.api('/api/requests?signal=traces');
  assert.equal((await collector.api(`/api/spans?requestId=${traced[0].id}`)).total, 1);
  const bad = await fetch(`${collector.urls.ui}/api/logs?requestId=x`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /parameter 'requestId' must be an integer/);
});
