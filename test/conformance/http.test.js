// OTLP/HTTP conformance: every rule of the OTLP/HTTP binding the collector promises, checked over real sockets.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestCollector } from '../helpers/collector.js';
import { rawRequest, postOtlp } from '../helpers/http.js';
import { readFields } from '../helpers/otlp-pb.js';
import { gzipZeros } from '../helpers/gzip-bomb.js';
import { SIGNAL_NAMES, API_KIND, HTTP_PATH, fixtureJson, fixturePb, sampleRequest, encodePb, toSnakeCase, withoutRequestIds } from '../helpers/payloads.js';
import { decodeStatus } from '../../server/otlp/schema.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';
const LIMIT = 4 * 1024 * 1024;
const INVALID_ARGUMENT = 3;

/** @param {string|undefined} header */
const mediaType = (header) => (header ?? '').split(';')[0].trim().toLowerCase();

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {string} */
let base;

before(async () => {
  collector = await startTestCollector({ maxRequestBytes: LIMIT });
  base = collector.urls.http;
});

after(async () => {
  await collector.stop();
});

/**
 * Checks a success body is the signal's Export*ServiceResponse in the given encoding with nothing rejected.
 * @param {import('../helpers/http.js').RawResponse} res @param {'protobuf'|'json'} encoding
 */
function assertExportResponse(res, encoding) {
  assert.equal(res.status, 200, `status 200, body ${res.body.toString('utf8').slice(0, 200)}`);
  // As the Collector's: the body's length, not chunked framing (minimal clients, the soak's among them, read that).
  assert.equal(res.headers['content-length'], String(res.body.length));
  assert.equal(res.headers['transfer-encoding'], undefined);
  if (encoding === 'protobuf') {
    assert.equal(mediaType(res.headers['content-type']), PROTOBUF);
    const fields = readFields(res.body);
    for (const f of fields) assert.equal(f.field, 1, 'only partial_success may be present');
    const partial = fields.length ? readFields(/** @type {Uint8Array} */ (fields[0].value)) : [];
    for (const f of partial) if (f.field === 1) assert.equal(f.value, 0n, 'nothing rejected');
  } else {
    assert.equal(mediaType(res.headers['content-type']), JSON_TYPE);
    const body = JSON.parse(res.body.toString('utf8'));
    assert.equal(typeof body, 'object');
    assert.ok(body !== null && !Array.isArray(body));
    const partial = body.partialSuccess ?? {};
    for (const key of ['rejectedSpans', 'rejectedDataPoints', 'rejectedLogRecords']) assert.ok(!Number(partial[key] ?? 0), `${key} is 0`);
  }
}

/**
 * Decodes a google.rpc.Status error body in the encoding its Content-Type names.
 * @param {import('../helpers/http.js').RawResponse} res @param {'protobuf'|'json'} encoding
 * @returns {{ code: number, message: string }}
 */
function errorStatus(res, encoding) {
  const type = mediaType(res.headers['content-type']);
  if (encoding === 'protobuf') {
    assert.equal(type, PROTOBUF, 'error body in the request encoding');
    return decodeStatus(res.body);
  }
  assert.equal(type, JSON_TYPE, 'error body in the request encoding');
  const status = JSON.parse(res.body.toString('utf8'));
  assert.equal(typeof status.code, 'number', 'Status.code is a number');
  assert.equal(typeof status.message, 'string', 'Status.message is a string');
  return status;
}

/** @param {'traces'|'metrics'|'logs'} signal @param {string} service */
async function stored(signal, service) {
  const kind = API_KIND[signal];
  const body = await collector.api(`/api/${kind}?service=${encodeURIComponent(service)}&limit=1000`);
  return /** @type {any[]} */ (body[kind]);
}

/** How many items each fixture carries, counted from its JSON. @param {'traces'|'metrics'|'logs'} signal */
function fixtureItemCount(signal) {
  const json = JSON.parse(fixtureJson(signal));
  let n = 0;
  if (signal === 'traces') for (const r of json.resourceSpans) for (const s of r.scopeSpans) n += s.spans.length;
  if (signal === 'logs') for (const r of json.resourceLogs) for (const s of r.scopeLogs) n += s.logRecords.length;
  if (signal === 'metrics') for (const r of json.resourceMetrics) for (const s of r.scopeMetrics) n += s.metrics.length;
  return n;
}

describe('accepted requests', () => {
  for (const signal of SIGNAL_NAMES) {
    const kind = API_KIND[signal];

    test(`${signal}: the protobuf and JSON fixtures are accepted and read back identically`, async () => {
      await collector.clear();
      const pb = await postOtlp(base, HTTP_PATH[signal], fixturePb(signal), PROTOBUF);
      assertExportResponse(pb, 'protobuf');
      const fromPb = (await collector.api(`/api/${kind}?limit=1000`))[kind];
      assert.equal(fromPb.length, fixtureItemCount(signal));

      await collector.clear();
      const json = await postOtlp(base, HTTP_PATH[signal], fixtureJson(signal), JSON_TYPE);
      assertExportResponse(json, 'json');
      const fromJson = (await collector.api(`/api/${kind}?limit=1000`))[kind];
      assert.deepEqual(withoutRequestIds(fromJson), withoutRequestIds(fromPb));
    });

    test(`${signal}: "application/json; charset=utf-8" is accepted and answered as JSON`, async () => {
      const service = `charset-${signal}`;
      const res = await postOtlp(base, HTTP_PATH[signal], JSON.stringify(sampleRequest(signal, { service })), 'application/json; charset=utf-8');
      assertExportResponse(res, 'json');
      assert.equal((await stored(signal, service)).length, 1);
    });

    test(`${signal}: a chunked body without Content-Length and a body with Content-Length both work`, async () => {
      for (const chunked of [true, false]) {
        const service = `framing-${signal}-${chunked ? 'chunked' : 'length'}`;
        const body = encodePb(signal, sampleRequest(signal, { service }));
        const res = await postOtlp(base, HTTP_PATH[signal], body, PROTOBUF, {}, { chunked });
        assertExportResponse(res, 'protobuf');
        const jsonRes = await postOtlp(base, HTTP_PATH[signal], JSON.stringify(sampleRequest(signal, { service: `${service}-json` })), JSON_TYPE, {}, { chunked });
        assertExportResponse(jsonRes, 'json');
        assert.equal((await stored(signal, service)).length, 1);
        assert.equal((await stored(signal, `${service}-json`)).length, 1);
      }
    });

    test(`${signal}: the same content in protobuf and JSON is stored identically`, async () => {
      const pbService = `same-${signal}-pb`;
      const jsonService = `same-${signal}-json`;
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], encodePb(signal, sampleRequest(signal, { service: pbService })), PROTOBUF), 'protobuf');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], JSON.stringify(sampleRequest(signal, { service: jsonService })), JSON_TYPE), 'json');
      // A metric's key is a hash of its identity, service name included: it differs with the service.
      /** @param {any[]} items @param {string} service */
      const normalise = (items, service) => withoutRequestIds(items).map(({ key, ...item }) => JSON.parse(JSON.stringify(item).replaceAll(service, 'SERVICE')));
      assert.deepEqual(normalise(await stored(signal, jsonService), jsonService), normalise(await stored(signal, pbService), pbService));
    });

    test(`${signal}: empty requests succeed (0 bytes, {} and an empty list)`, async () => {
      const root = { traces: 'resourceSpans', metrics: 'resourceMetrics', logs: 'resourceLogs' }[signal];
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], new Uint8Array(0), PROTOBUF), 'protobuf');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], new Uint8Array(0), PROTOBUF, {}, { chunked: true }), 'protobuf');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], '', JSON_TYPE), 'json');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], '{}', JSON_TYPE), 'json');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], JSON.stringify({ [root]: [] }), JSON_TYPE), 'json');
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], zlib.gzipSync(Buffer.alloc(0)), PROTOBUF, { 'content-encoding': 'gzip' }), 'protobuf');
    });
  }
});

describe('methods and content types', () => {
  test('a path spelt with escapes or a query is its endpoint; another is 404 naming the endpoints, a malformed escape 400', async () => {
    const body = encodePb('traces', sampleRequest('traces', { service: 'path-spelling' }));
    assertExportResponse(await postOtlp(base, '/v1/%74races?from=test', body, PROTOBUF), 'protobuf');
    assert.equal((await stored('traces', 'path-spelling')).length, 1);
    const missing = await postOtlp(base, '/v1/trace', '{}', JSON_TYPE);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-length'], String(missing.body.length));
    const status = JSON.parse(missing.body.toString('utf8'));
    assert.equal(status.code, 5);
    for (const path of Object.values(HTTP_PATH)) assert.ok(status.message.includes(path), status.message);
    const malformed = await postOtlp(base, '/v1/%zz', body, PROTOBUF);
    assert.equal(malformed.status, 400);
    assert.equal(decodeStatus(malformed.body).code, INVALID_ARGUMENT);
    const webdav = await rawRequest(base + HTTP_PATH.logs, { method: 'PROPFIND' });
    assert.equal(webdav.status, 405, 'a method the port has no use for, on an endpoint');
  });

  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: methods other than POST get 405`, async () => {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        const res = await rawRequest(base + HTTP_PATH[signal], { method, headers: { 'content-type': PROTOBUF } });
        assert.equal(res.status, 405, `${method} ${HTTP_PATH[signal]}`);
      }
    });

    test(`${signal}: 405 answers name the allowed method`, async () => {
      const res = await rawRequest(base + HTTP_PATH[signal], { method: 'GET' });
      assert.equal(res.status, 405);
      assert.match(String(res.headers.allow), /POST/, 'RFC 9110: a 405 response carries Allow');
    });

    test(`${signal}: unsupported content types get 415`, async () => {
      const body = JSON.stringify(sampleRequest(signal, { service: `unsupported-${signal}` }));
      for (const type of ['text/plain', 'application/xml', 'application/protobuf-json', 'multipart/form-data; boundary=x']) {
        const res = await postOtlp(base, HTTP_PATH[signal], body, type);
        assert.equal(res.status, 415, type);
      }
      const none = await rawRequest(base + HTTP_PATH[signal], { body });
      assert.equal(none.status, 415, 'no Content-Type');
      assert.equal((await stored(signal, `unsupported-${signal}`)).length, 0, 'nothing stored');
    });
  }

  test('the response Content-Type is the request media type', async () => {
    for (const signal of SIGNAL_NAMES) {
      const pb = await postOtlp(base, HTTP_PATH[signal], fixturePb(signal), PROTOBUF);
      assert.equal(mediaType(pb.headers['content-type']), PROTOBUF);
      const json = await postOtlp(base, HTTP_PATH[signal], fixtureJson(signal), JSON_TYPE);
      assert.equal(mediaType(json.headers['content-type']), JSON_TYPE);
      const badPb = await postOtlp(base, HTTP_PATH[signal], Uint8Array.from([0xff, 0xff, 0xff]), PROTOBUF);
      assert.equal(mediaType(badPb.headers['content-type']), PROTOBUF);
      const badJson = await postOtlp(base, HTTP_PATH[signal], '{', JSON_TYPE);
      assert.equal(mediaType(badJson.headers['content-type']), JSON_TYPE);
    }
  });
});

describe('undecodable bodies', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: bad protobuf gets 400 with a protobuf google.rpc.Status`, async () => {
      const res = await postOtlp(base, HTTP_PATH[signal], Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), PROTOBUF);
      assert.equal(res.status, 400);
      const status = errorStatus(res, 'protobuf');
      assert.equal(status.code, INVALID_ARGUMENT);
      assert.ok(status.message.length > 0, 'the message says what was wrong');
    });

    test(`${signal}: bad JSON gets 400 with a JSON google.rpc.Status`, async () => {
      for (const body of ['{"resource', 'not json', '[1,2]', '"str"', 'null']) {
        const res = await postOtlp(base, HTTP_PATH[signal], body, JSON_TYPE);
        assert.equal(res.status, 400, body);
        const status = errorStatus(res, 'json');
        assert.equal(status.code, INVALID_ARGUMENT, body);
        assert.ok(status.message.length > 0, body);
      }
    });
  }
});

describe('compression', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: gzip and deflate bodies are accepted in both encodings`, async () => {
      for (const [encoding, compress] of /** @type {const} */ ([
        ['gzip', zlib.gzipSync],
        ['deflate', zlib.deflateSync],
        ['identity', (/** @type {Buffer} */ b) => b],
      ])) {
        const pbService = `${encoding}-${signal}-pb`;
        const jsonService = `${encoding}-${signal}-json`;
        const pb = compress(Buffer.from(encodePb(signal, sampleRequest(signal, { service: pbService }))));
        assertExportResponse(await postOtlp(base, HTTP_PATH[signal], pb, PROTOBUF, { 'content-encoding': encoding }), 'protobuf');
        const json = compress(Buffer.from(JSON.stringify(sampleRequest(signal, { service: jsonService }))));
        assertExportResponse(await postOtlp(base, HTTP_PATH[signal], json, JSON_TYPE, { 'content-encoding': encoding }, { chunked: true }), 'json');
        assert.equal((await stored(signal, pbService)).length, 1, `${encoding} protobuf stored`);
        assert.equal((await stored(signal, jsonService)).length, 1, `${encoding} JSON stored`);
      }
    });

    test(`${signal}: an unknown Content-Encoding gets 400 with a Status`, async () => {
      const body = zlib.brotliCompressSync(Buffer.from(encodePb(signal, sampleRequest(signal, { service: `br-${signal}` }))));
      const pb = await postOtlp(base, HTTP_PATH[signal], body, PROTOBUF, { 'content-encoding': 'br' });
      assert.equal(pb.status, 400);
      assert.ok(errorStatus(pb, 'protobuf').message.length > 0);
      const json = await postOtlp(base, HTTP_PATH[signal], '{}', JSON_TYPE, { 'content-encoding': 'x-unknown' });
      assert.equal(json.status, 400);
      assert.ok(errorStatus(json, 'json').message.length > 0);
      assert.equal((await stored(signal, `br-${signal}`)).length, 0);
    });

    test(`${signal}: a body that is not what its Content-Encoding says gets 400`, async () => {
      const plain = Buffer.from(encodePb(signal, sampleRequest(signal, { service: `notgzip-${signal}` })));
      const res = await postOtlp(base, HTTP_PATH[signal], plain, PROTOBUF, { 'content-encoding': 'gzip' });
      assert.equal(res.status, 400);
      errorStatus(res, 'protobuf');
      const truncated = zlib.gzipSync(Buffer.from(fixtureJson(signal)));
      const cut = await postOtlp(base, HTTP_PATH[signal], truncated.subarray(0, truncated.length >> 1), JSON_TYPE, { 'content-encoding': 'gzip' });
      assert.equal(cut.status, 400);
      errorStatus(cut, 'json');
    });
  }
});

describe('size limit', () => {
  test('a body just under the limit is accepted', async () => {
    const request = sampleRequest('logs', { service: 'under-limit' });
    const overhead = Buffer.byteLength(JSON.stringify(request));
    request.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: 'x'.repeat(LIMIT - overhead - 64) };
    const text = JSON.stringify(request);
    assert.ok(text.length < LIMIT && text.length > LIMIT - 1024);
    assertExportResponse(await postOtlp(base, '/v1/logs', text, JSON_TYPE, {}, { chunked: true }), 'json');
    assert.equal((await stored('logs', 'under-limit')).length, 1);
  });

  test('a protobuf body of megabytes, received in many pieces and joined in slices, arrives intact', async () => {
    const request = sampleRequest('logs', { service: 'megabytes' });
    const text = Array.from({ length: 3 * 1024 }, (_, i) => `${i}`.padEnd(1024, '.')).join('');
    request.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: text };
    const body = encodePb('logs', request);
    for (const chunked of [false, true]) {
      assertExportResponse(await postOtlp(base, '/v1/logs', body, PROTOBUF, {}, { chunked }), 'protobuf');
    }
    const logs = await stored('logs', 'megabytes');
    assert.equal(logs.length, 2);
    for (const log of logs) assert.ok(log.body === text, 'the body arrives byte for byte');
  });

  for (const [encoding, type] of /** @type {const} */ ([
    ['protobuf', PROTOBUF],
    ['json', JSON_TYPE],
  ])) {
    test(`a ${encoding} body over the limit gets 413 with a decodable Status, with and without Content-Length`, async () => {
      const body = Buffer.alloc(LIMIT + 1, encoding === 'json' ? 0x20 : 0);
      for (const chunked of [false, true]) {
        const res = await postOtlp(base, '/v1/traces', body, type, {}, { chunked });
        assert.equal(res.status, 413, `chunked=${chunked}`);
        const status = errorStatus(res, encoding);
        assert.ok(status.code > 0 && status.message.length > 0);
      }
    });

    test(`a gzip ${encoding} body that inflates past the limit gets 413`, async () => {
      const request = sampleRequest('logs', { service: 'over-limit-gzip' });
      request.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: 'y'.repeat(LIMIT + 10) };
      const raw = encoding === 'json' ? Buffer.from(JSON.stringify(request)) : Buffer.from(encodePb('logs', request));
      const compressed = zlib.gzipSync(raw);
      assert.ok(compressed.length < LIMIT / 100);
      const res = await postOtlp(base, '/v1/logs', compressed, type, { 'content-encoding': 'gzip' });
      assert.equal(res.status, 413);
      errorStatus(res, encoding);
      assert.equal((await stored('logs', 'over-limit-gzip')).length, 0);
    });
  }

  test('a gzip bomb (1 GiB of zeros) is stopped at the limit: 413 quickly, memory stays low', async (t) => {
    const bomb = await gzipZeros(1024);
    assert.ok(bomb.compressedBytes < LIMIT, 'the compressed bomb itself is under the limit');
    globalThis.gc?.();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let answeredMs;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 5);
    try {
      const res = await rawRequest(`${base}/v1/traces`, {
        headers: { 'content-type': PROTOBUF, 'content-encoding': 'gzip' },
        body: bomb.stream(),
        timeoutMs: 15000,
      });
      assert.equal(res.status, 413);
      errorStatus(res, 'protobuf');
      answeredMs = res.ms;
      assert.ok(res.ms < 5000, `answered in ${res.ms} ms`);
    } finally {
      clearInterval(sampler);
    }
    const grownMiB = (peakRss - before.rss) / 2 ** 20;
    t.diagnostic(`${(bomb.compressedBytes / 2 ** 20).toFixed(2)} MiB bomb answered 413 in ${answeredMs} ms; peak RSS grew ${grownMiB.toFixed(1)} MiB`);
    assert.ok(grownMiB < 128, `resident memory grew by ${grownMiB.toFixed(1)} MiB`);
    const health = await collector.api('/api/health');
    assert.deepEqual(health, { status: 'ok' });
  });
});

describe('OTLP/JSON mapping', () => {
  test('snake_case field names are accepted and mean the same as lowerCamelCase', async () => {
    for (const signal of SIGNAL_NAMES) {
      const camel = JSON.parse(fixtureJson(signal));
      await collector.clear();
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], JSON.stringify(camel), JSON_TYPE), 'json');
      const kind = API_KIND[signal];
      const fromCamel = (await collector.api(`/api/${kind}?limit=1000`))[kind];
      await collector.clear();
      assertExportResponse(await postOtlp(base, HTTP_PATH[signal], JSON.stringify(toSnakeCase(camel)), JSON_TYPE), 'json');
      const fromSnake = (await collector.api(`/api/${kind}?limit=1000`))[kind];
      assert.ok(fromCamel.length > 0);
      assert.deepEqual(withoutRequestIds(fromSnake), withoutRequestIds(fromCamel), signal);
    }
  });

  test('64-bit integers may be JSON numbers', async () => {
    const text = JSON.stringify(sampleRequest('traces', { service: 'int64-numbers', timeUnixNano: '1700000000000000000' }))
      .replace(/"(startTimeUnixNano|timeUnixNano)":"(\d+)"/g, '"$1":$2')
      .replace('"intValue":"-42"', '"intValue":-42');
    assert.match(text, /"startTimeUnixNano":1700000000000000000/);
    assertExportResponse(await postOtlp(base, '/v1/traces', text, JSON_TYPE), 'json');
    const [span] = await stored('traces', 'int64-numbers');
    assert.equal(span.startTimeUnixNano, '1700000000000000000');
    assert.equal(span.endTimeUnixNano, '1700000000001000000');
    assert.equal(span.events[0].timeUnixNano, '1700000000000000000');
    assert.equal(span.attributes.int, -42);

    const metric = JSON.stringify(sampleRequest('metrics', { service: 'int64-numbers-metric' })).replace('"asInt":"9007199254740993"', '"asInt":12');
    assertExportResponse(await postOtlp(base, '/v1/metrics', metric, JSON_TYPE), 'json');
    const [m] = await stored('metrics', 'int64-numbers-metric');
    assert.equal(m.dataPoints[0].asInt, '12');
  });

  test('64-bit JSON numbers beyond 2^53 keep every digit', async () => {
    const text = JSON.stringify(sampleRequest('traces', { service: 'int64-exact' })).replace(
      '"startTimeUnixNano":"1700000000123456789"',
      '"startTimeUnixNano":1700000000123456789',
    );
    assert.match(text, /"startTimeUnixNano":1700000000123456789/);
    assertExportResponse(await postOtlp(base, '/v1/traces', text, JSON_TYPE), 'json');
    const [span] = await stored('traces', 'int64-exact');
    assert.equal(span.startTimeUnixNano, '1700000000123456789', 'a nanosecond timestamp is never rounded');
  });

  test('64-bit integers as strings keep every digit', async () => {
    assertExportResponse(await postOtlp(base, '/v1/traces', JSON.stringify(sampleRequest('traces', { service: 'int64-strings' })), JSON_TYPE), 'json');
    const [span] = await stored('traces', 'int64-strings');
    assert.equal(span.startTimeUnixNano, '1700000000123456789');
    assert.equal(span.attributes.big, '9223372036854775807');
    assertExportResponse(await postOtlp(base, '/v1/metrics', JSON.stringify(sampleRequest('metrics', { service: 'int64-strings' })), JSON_TYPE), 'json');
    const [m] = await stored('metrics', 'int64-strings');
    assert.equal(m.dataPoints[0].asInt, '9007199254740993');
  });

  test('enums may be given by name', async () => {
    const traces = sampleRequest('traces', { service: 'enum-names' });
    const span = /** @type {any} */ (traces.resourceSpans[0].scopeSpans[0].spans[0]);
    span.kind = 'SPAN_KIND_SERVER';
    span.status.code = 'STATUS_CODE_ERROR';
    assertExportResponse(await postOtlp(base, '/v1/traces', JSON.stringify(traces), JSON_TYPE), 'json');
    const [s] = await stored('traces', 'enum-names');
    assert.equal(s.kind, 2);
    assert.equal(s.status.code, 2);

    const logs = sampleRequest('logs', { service: 'enum-names' });
    /** @type {any} */ (logs.resourceLogs[0].scopeLogs[0].logRecords[0]).severityNumber = 'SEVERITY_NUMBER_ERROR3';
    assertExportResponse(await postOtlp(base, '/v1/logs', JSON.stringify(logs), JSON_TYPE), 'json');
    const [l] = await stored('logs', 'enum-names');
    assert.equal(l.severityNumber, 19);

    const metrics = sampleRequest('metrics', { service: 'enum-names' });
    /** @type {any} */ (metrics.resourceMetrics[0].scopeMetrics[0].metrics[0].sum).aggregationTemporality = 'AGGREGATION_TEMPORALITY_DELTA';
    assertExportResponse(await postOtlp(base, '/v1/metrics', JSON.stringify(metrics), JSON_TYPE), 'json');
    const [m] = await stored('metrics', 'enum-names');
    assert.equal(m.aggregationTemporality, 1);
  });

  test('unknown fields are ignored at every level', async () => {
    const request = /** @type {any} */ (sampleRequest('traces', { service: 'unknown-fields' }));
    request.futureTopLevel = { a: [1, 2, { b: null }] };
    request.resourceSpans[0].someNewField = 'x';
    request.resourceSpans[0].resource.future_resource_field = 7;
    request.resourceSpans[0].scopeSpans[0].scope.extra = true;
    const span = request.resourceSpans[0].scopeSpans[0].spans[0];
    span.notInTheSpec = { nested: { deeper: 'yes' } };
    span.attributes[0].value.futureValueKind = 1;
    span.events[0].whatever = [];
    assertExportResponse(await postOtlp(base, '/v1/traces', JSON.stringify(request), JSON_TYPE), 'json');
    const [s] = await stored('traces', 'unknown-fields');
    assert.equal(s.name, 'op');
    assert.equal(s.attributes.str, 'v');
    assert.equal(s.events[0].name, 'evt');
  });

  test('ids are hex (either case) and stored lowercase; bytes values are base64', async () => {
    const request = sampleRequest('traces', { service: 'hex-ids', traceId: '5B8EFFF798038103D269B633813FC60C', spanId: 'EEE19B7EC3C1B174' });
    /** @type {any} */ (request.resourceSpans[0].scopeSpans[0].spans[0]).parentSpanId = '00f067aa0ba902b7';
    assertExportResponse(await postOtlp(base, '/v1/traces', JSON.stringify(request), JSON_TYPE), 'json');
    const [s] = await stored('traces', 'hex-ids');
    assert.equal(s.traceId, '5b8efff798038103d269b633813fc60c');
    assert.equal(s.spanId, 'eee19b7ec3c1b174');
    assert.equal(s.parentSpanId, '00f067aa0ba902b7');

    const pbRequest = sampleRequest('traces', { service: 'hex-ids-pb' });
    assertExportResponse(await postOtlp(base, '/v1/traces', encodePb('traces', pbRequest), PROTOBUF), 'protobuf');
    const [p] = await stored('traces', 'hex-ids-pb');
    assert.deepEqual(s.attributes.raw, p.attributes.raw, 'base64 in JSON is the same bytes as in protobuf');
    assert.ok(s.attributes.raw !== undefined && s.attributes.raw !== '');
  });

  test('NaN and ±Infinity may be given as strings for doubles', async () => {
    const request = /** @type {any} */ (sampleRequest('metrics', { service: 'non-finite' }));
    const metric = request.resourceMetrics[0].scopeMetrics[0].metrics[0];
    metric.gauge = {
      dataPoints: [
        { timeUnixNano: '1700000000000000001', asDouble: 'NaN', attributes: [{ key: 'v', value: { stringValue: 'nan' } }] },
        { timeUnixNano: '1700000000000000002', asDouble: 'Infinity', attributes: [{ key: 'v', value: { stringValue: 'inf' } }] },
        { timeUnixNano: '1700000000000000003', asDouble: '-Infinity', attributes: [{ key: 'v', value: { stringValue: '-inf' } }] },
      ],
    };
    delete metric.sum;
    request.resourceMetrics[0].scopeMetrics[0].metrics[0].name = 'non.finite';
    const traces = /** @type {any} */ (sampleRequest('traces', { service: 'non-finite' }));
    traces.resourceSpans[0].scopeSpans[0].spans[0].attributes.push(
      { key: 'nan', value: { doubleValue: 'NaN' } },
      { key: 'inf', value: { doubleValue: 'Infinity' } },
      { key: 'ninf', value: { doubleValue: '-Infinity' } },
    );
    assertExportResponse(await postOtlp(base, '/v1/metrics', JSON.stringify(request), JSON_TYPE), 'json');
    assertExportResponse(await postOtlp(base, '/v1/traces', JSON.stringify(traces), JSON_TYPE), 'json');

    const pbRequest = JSON.parse(JSON.stringify(request).replaceAll('non-finite', 'non-finite-pb'));
    for (const p of pbRequest.resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints) p.asDouble = Number(p.asDouble);
    const pbTraces = JSON.parse(JSON.stringify(traces).replaceAll('non-finite', 'non-finite-pb'));
    for (const a of pbTraces.resourceSpans[0].scopeSpans[0].spans[0].attributes)
      if (typeof a.value.doubleValue === 'string') a.value.doubleValue = Number(a.value.doubleValue);
    assertExportResponse(await postOtlp(base, '/v1/metrics', encodePb('metrics', pbRequest), PROTOBUF), 'protobuf');
    assertExportResponse(await postOtlp(base, '/v1/traces', encodePb('traces', pbTraces), PROTOBUF), 'protobuf');

    const [fromJson] = await stored('metrics', 'non-finite');
    const [fromPb] = await stored('metrics', 'non-finite-pb');
    assert.equal(fromJson.dataPoints.length, 3);
    assert.deepEqual(fromJson.dataPoints, fromPb.dataPoints, 'JSON strings and protobuf doubles read back the same');
    const values = Object.fromEntries(fromJson.dataPoints.map((/** @type {any} */ p) => [p.attributes.v, p.asDouble]));
    assert.deepEqual(values, { nan: 'NaN', inf: 'Infinity', '-inf': '-Infinity' }, 'OTLP/JSON spelling of non-finite doubles');

    const [spanJson] = await stored('traces', 'non-finite');
    const [spanPb] = await stored('traces', 'non-finite-pb');
    assert.deepEqual(
      [spanJson.attributes.nan, spanJson.attributes.inf, spanJson.attributes.ninf],
      [spanPb.attributes.nan, spanPb.attributes.inf, spanPb.attributes.ninf],
    );
    assert.notEqual(spanJson.attributes.inf, spanJson.attributes.ninf, 'the sign of infinity survives');
  });
});

describe('CORS', () => {
  test('a preflight from any origin is answered, allowing POST and the requested headers', async () => {
    for (const signal of SIGNAL_NAMES) {
      const res = await rawRequest(base + HTTP_PATH[signal], {
        method: 'OPTIONS',
        headers: {
          origin: 'http://app.example.test:3000',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,content-encoding,x-custom',
        },
      });
      assert.ok(res.status === 204 || res.status === 200, `preflight status ${res.status}`);
      const allowOrigin = res.headers['access-control-allow-origin'];
      assert.ok(allowOrigin === '*' || allowOrigin === 'http://app.example.test:3000', `allow-origin ${allowOrigin}`);
      const methods = String(res.headers['access-control-allow-methods'] ?? '');
      assert.ok(methods === '*' || /\bPOST\b/i.test(methods), `allow-methods ${methods}`);
      const allowed = String(res.headers['access-control-allow-headers'] ?? '').toLowerCase();
      if (allowed !== '*')
        for (const h of ['content-type', 'content-encoding', 'x-custom']) assert.ok(allowed.split(/\s*,\s*/).includes(h), `allow-headers ${allowed} covers ${h}`);
    }
  });

  test('the actual cross-origin POST carries Access-Control-Allow-Origin', async () => {
    const res = await postOtlp(base, '/v1/traces', JSON.stringify(sampleRequest('traces', { service: 'cors-post' })), JSON_TYPE, {
      origin: 'http://app.example.test:3000',
    });
    assertExportResponse(res, 'json');
    const allowOrigin = res.headers['access-control-allow-origin'];
    assert.ok(allowOrigin === '*' || allowOrigin === 'http://app.example.test:3000', `allow-origin ${allowOrigin}`);
  });
});
