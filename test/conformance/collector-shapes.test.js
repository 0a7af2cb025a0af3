// What the official opentelemetry-proto examples carry (scope attributes, schema URLs) reaches the flat API views,
// and a successful OTLP/HTTP JSON export is answered with the same bytes the Collector sends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { encodePb } from '../helpers/payloads.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';
const RESOURCE_SCHEMA = 'https://opentelemetry.io/schemas/1.26.0';
const SCOPE_SCHEMA = 'https://opentelemetry.io/schemas/1.24.0';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;

before(async () => {
  collector = await startTestCollector();
});

after(async () => {
  await collector.stop();
});

/** The scope of opentelemetry-proto's examples/trace.json and examples/logs.json, plus a dropped count. */
const exampleScope = (/** @type {number} */ dropped) => ({
  name: 'my.library',
  version: '1.0.0',
  attributes: [{ key: 'my.scope.attribute', value: { stringValue: 'some scope attribute' } }],
  ...(dropped ? { droppedAttributesCount: dropped } : {}),
});

/** @param {string} service @param {number} dropped */
function traceRequest(service, dropped) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        schemaUrl: RESOURCE_SCHEMA,
        scopeSpans: [
          {
            scope: exampleScope(dropped),
            schemaUrl: SCOPE_SCHEMA,
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
                name: "I'm a server span",
                startTimeUnixNano: '1544712660000000000',
                endTimeUnixNano: '1544712661000000000',
                kind: 2,
              },
            ],
          },
        ],
      },
    ],
  };
}

/** @param {string} service */
function logsRequest(service) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeLogs: [
          {
            scope: exampleScope(0),
            logRecords: [{ timeUnixNano: '1544712660300000000', severityText: 'Information', body: { stringValue: 'Example log record' } }],
          },
        ],
      },
    ],
  };
}

for (const encoding of /** @type {const} */ (['json', 'protobuf'])) {
  /** @param {'traces'|'logs'} signal @param {any} body */
  const post = (signal, body) =>
    encoding === 'json'
      ? postOtlp(collector.urls.http, `/v1/${signal}`, JSON.stringify(body), JSON_TYPE)
      : postOtlp(collector.urls.http, `/v1/${signal}`, encodePb(signal, body), PROTOBUF);

  test(`${encoding}: a span's flat view carries its scope's attributes, dropped count and both schema URLs`, async () => {
    const service = `scope-spans-${encoding}`;
    assert.equal((await post('traces', traceRequest(service, 2))).status, 200);
    const [span] = await collector.waitForCount('spans', `service=${service}`, 1);
    assert.deepEqual(span.scope, {
      name: 'my.library',
      version: '1.0.0',
      attributes: { 'my.scope.attribute': 'some scope attribute' },
      droppedAttributesCount: 2,
    });
    assert.equal(span.resourceSchemaUrl, RESOURCE_SCHEMA);
    assert.equal(span.scopeSchemaUrl, SCOPE_SCHEMA);
  });

  test(`${encoding}: a log record's flat view carries its scope's attributes; unsent schema URLs and counts are left out`, async () => {
    const service = `scope-logs-${encoding}`;
    assert.equal((await post('logs', logsRequest(service))).status, 200);
    const [log] = await collector.waitForCount('logs', `service=${service}`, 1);
    assert.deepEqual(log.scope, { name: 'my.library', version: '1.0.0', attributes: { 'my.scope.attribute': 'some scope attribute' } });
    assert.equal('resourceSchemaUrl' in log, false);
    assert.equal('scopeSchemaUrl' in log, false);
  });
}

test('a span without a scope gets an empty one, with no attributes', async () => {
  const request = traceRequest('scope-none', 0);
  const { scope, schemaUrl, ...scopeSpans } = request.resourceSpans[0].scopeSpans[0];
  request.resourceSpans[0].scopeSpans[0] = /** @type {any} */ (scopeSpans);
  assert.equal((await postOtlp(collector.urls.http, '/v1/traces', JSON.stringify(request), JSON_TYPE)).status, 200);
  const [span] = await collector.waitForCount('spans', 'service=scope-none', 1);
  assert.deepEqual(span.scope, { name: '', version: '', attributes: {} });
});

test('a successful OTLP/HTTP JSON export is answered {"partialSuccess":{}}, as the Collector answers', async () => {
  for (const signal of ['traces', 'metrics', 'logs']) {
    const res = await postOtlp(collector.urls.http, `/v1/${signal}`, '{}', JSON_TYPE);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString('utf8'), '{"partialSuccess":{}}', signal);
  }
});
