// Hostile input on every endpoint of both transports: malformed, truncated, random, wrongly typed and oversized.
// Each must get the right error, the process must keep serving, and data stored before must be untouched.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { seededRandom, randomBytes } from '../helpers/random.js';
import { SIGNAL_NAMES, API_KIND, HTTP_PATH, GRPC_SERVICE, fixtureJson, fixturePb, sampleRequest, encodePb } from '../helpers/payloads.js';
import { decodeStatus } from '../../server/otlp/schema.js';

const LIMIT = 1024 * 1024;
const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {ReturnType<typeof rawGrpcClient>} */
let grpc;
/** What the API showed for each signal right after seeding. @type {Record<string, any[]>} */
const seeded = {};

/** @param {'traces'|'metrics'|'logs'} signal */
async function all(signal) {
  const kind = API_KIND[signal];
  return /** @type {any[]} */ ((await collector.api(`/api/${kind}?limit=100000`))[kind]);
}

before(async () => {
  collector = await startTestCollector({ maxRequestBytes: LIMIT });
  grpc = rawGrpcClient(collector.urls.grpc);
  for (const signal of SIGNAL_NAMES) {
    const res = await postOtlp(collector.urls.http, HTTP_PATH[signal], fixturePb(signal), PROTOBUF);
    assert.equal(res.status, 200);
    const viaGrpc = await grpc.exportRaw(GRPC_SERVICE[signal], encodePb(signal, sampleRequest(signal, { service: 'seed-grpc' })));
    assert.equal(viaGrpc.error, null);
    seeded[signal] = await all(signal);
    assert.ok(seeded[signal].length > 1);
  }
});

after(async () => {
  grpc.close();
  await collector.stop();
});

/**
 * The length of the first top-level field (tag, length varint and payload) of a protobuf message: any shorter,
 * non-empty prefix cuts that field and cannot be valid.
 * @param {Uint8Array} bytes
 */
function firstFieldLength(bytes) {
  assert.equal(bytes[0] & 7, 2, 'the first field is length-delimited');
  let i = 1;
  let length = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[i++];
    length += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) break;
    shift += 7;
  }
  return i + length;
}

/** @param {Uint8Array} bytes */
function truncations(bytes) {
  const end = firstFieldLength(bytes);
  return [...new Set([1, 2, 3, 5, Math.floor(end / 3), Math.floor(end / 2), end - 1])].filter((n) => n > 0 && n < end).map((n) => bytes.subarray(0, n));
}

/** Byte strings that no OTLP request decoder may accept. */
const MALFORMED_PB = [
  ['a varint that never ends', [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]],
  ['a length past the end', [0x0a, 0x7f, 0x00]],
  ['a tag without a value', [0x0a]],
  ['field number 0', [0x02, 0x00]],
  ['deprecated group wire type', [0x0b, 0x0c]],
  ['invalid wire type 7', [0x0f, 0x00]],
  ['a nested length past its parent', [0x0a, 0x02, 0x12, 0x05]],
  ['a fixed64 cut short', [0x09, 0x01, 0x02]],
  ['a length varint over 64 bits', [0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]],
].map(([name, bytes]) => /** @type {[string, Uint8Array]} */ ([/** @type {string} */ (name), Uint8Array.from(/** @type {number[]} */ (bytes))]));

/**
 * A request whose one id has the wrong byte length; trace and span ids are exactly 16 and 8 bytes.
 * @param {'traces'|'logs'} signal @param {'traceId'|'spanId'} field @param {string} hex
 */
function wrongIdLength(signal, field, hex) {
  const request = /** @type {any} */ (sampleRequest(signal, { service: 'bad-id' }));
  const item = signal === 'traces' ? request.resourceSpans[0].scopeSpans[0].spans[0] : request.resourceLogs[0].scopeLogs[0].logRecords[0];
  item[field] = hex;
  return encodePb(signal, request);
}

/** Wrongly typed OTLP/JSON per signal: every one must be refused with 400. @type {Record<'traces'|'metrics'|'logs', string[]>} */
const WRONG_JSON = {
  traces: [
    '{"resourceSpans": 5}',
    '{"resourceSpans": "x"}',
    '{"resourceSpans": [5]}',
    '{"resourceSpans": {}}',
    '{"resourceSpans": [{"resource": []}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": {"name": "x"}}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": 1.5}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "-1"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"endTimeUnixNano": "18446744073709551616"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": "SPAN_KIND_NOPE"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": {}}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz8efff798038103d269b633813fc60c"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "eee19b7ec3c1b174ab"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"parentSpanId": 12}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": {"k": "v"}}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "k", "value": {"intValue": "x"}}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "k", "value": {"boolValue": "true"}}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "k", "value": {"doubleValue": "fast"}}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": 7, "value": {}}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"status": {"code": "STATUS_CODE_MAYBE"}}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"events": [{"timeUnixNano": true}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"links": [{"traceId": "abcd", "spanId": "eee19b7ec3c1b174"}]}]}]}]}',
  ],
  logs: [
    '{"resourceLogs": 5}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"severityNumber": "loud"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"severityNumber": 1.5}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "yesterday"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": "plain string instead of AnyValue"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"bytesValue": "not base64!"}}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "0123"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"spanId": "gggggggggggggggg"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"flags": "x"}]}]}]}',
    '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"flags": -1}]}]}]}',
  ],
  metrics: [
    '{"resourceMetrics": 5}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": ["a"]}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"gauge": {"dataPoints": [{"asDouble": "much"}]}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"gauge": {"dataPoints": [{"asInt": 1.25}]}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"sum": {"aggregationTemporality": "SOMETIMES"}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"sum": {"isMonotonic": "yes"}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"histogram": {"dataPoints": [{"count": "-3"}]}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"histogram": {"dataPoints": [{"bucketCounts": "1,2"}]}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"histogram": {"dataPoints": [{"explicitBounds": ["a"]}]}}]}]}]}',
    '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"gauge": {"dataPoints": [{"exemplars": [{"traceId": "12"}]}]}}]}]}]}',
  ],
};

/**
 * Posts over HTTP and checks the status and that the error body is a google.rpc.Status in the request's encoding.
 * @param {'traces'|'metrics'|'logs'} signal @param {Uint8Array|string} body @param {string} type @param {number[]} allowed
 * @param {string} label
 */
async function expectHttp(signal, body, type, allowed, label) {
  const res = await postOtlp(collector.urls.http, HTTP_PATH[signal], body, type);
  assert.ok(allowed.includes(res.status), `${label}: status ${res.status}, expected ${allowed.join(' or ')}; body ${res.body.toString('utf8').slice(0, 200)}`);
  if (res.status >= 400) {
    if (type === PROTOBUF) {
      assert.equal(res.headers['content-type']?.split(';')[0], PROTOBUF, label);
      assert.ok(decodeStatus(res.body).message.length > 0, `${label}: the Status says what was wrong`);
    } else {
      assert.equal(res.headers['content-type']?.split(';')[0], JSON_TYPE, label);
      const status = JSON.parse(res.body.toString('utf8'));
      assert.ok(typeof status.code === 'number' && status.message.length > 0, `${label}: the Status says what was wrong`);
    }
  }
  return res.status;
}

/**
 * Calls gRPC Export with raw bytes and checks the status code is one of `allowed`.
 * @param {'traces'|'metrics'|'logs'} signal @param {Uint8Array} bytes @param {number[]} allowed @param {string} label
 */
async function expectGrpc(signal, bytes, allowed, label) {
  const { error } = await grpc.exportRaw(GRPC_SERVICE[signal], bytes);
  const code = error ? error.code : grpcStatus.OK;
  assert.ok(allowed.includes(code), `${label}: gRPC status ${code} (${error?.details}), expected ${allowed.join(' or ')}`);
  if (code !== grpcStatus.OK) assert.ok((error?.details ?? '').length > 0, `${label}: details say what was wrong`);
  return code;
}

/**
 * After every attack: the process serves, and what was stored before is still there, unchanged. Random input may
 * happen to be a valid request and add items, so the seeded items are picked out by request (metrics, which the API
 * groups across requests, by service) before comparing.
 */
async function assertStillHealthy() {
  assert.deepEqual(await collector.api('/api/health'), { status: 'ok' });
  for (const signal of SIGNAL_NAMES) {
    const now = await all(signal);
    if (signal === 'metrics') {
      const services = new Set(seeded.metrics.map((m) => m.service));
      /** @param {any[]} list */
      const canonical = (list) =>
        list
          .filter((m) => services.has(m.service))
          .map((m) => JSON.stringify(m))
          .sort();
      assert.deepEqual(canonical(now), canonical(seeded.metrics), 'metrics: earlier data intact');
    } else {
      const requestIds = new Set(seeded[signal].map((i) => i.requestId));
      assert.deepEqual(
        now.filter((i) => requestIds.has(i.requestId)),
        seeded[signal],
        `${signal}: earlier data intact`,
      );
    }
  }
}

describe('malformed protobuf', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: structurally broken messages are refused on both transports`, async () => {
      for (const [name, bytes] of MALFORMED_PB) {
        await expectHttp(signal, bytes, PROTOBUF, [400], `HTTP ${name}`);
        await expectGrpc(signal, bytes, [grpcStatus.INVALID_ARGUMENT], `gRPC ${name}`);
      }
      await assertStillHealthy();
    });

    test(`${signal}: truncated fixtures are refused on both transports`, async () => {
      for (const prefix of truncations(fixturePb(signal))) {
        await expectHttp(signal, prefix, PROTOBUF, [400], `HTTP prefix of ${prefix.length} bytes`);
        await expectGrpc(signal, prefix, [grpcStatus.INVALID_ARGUMENT], `gRPC prefix of ${prefix.length} bytes`);
      }
      await assertStillHealthy();
    });
  }

  for (const signal of /** @type {const} */ (['traces', 'logs'])) {
    test(`${signal}: ids of the wrong byte length are refused on both transports`, async () => {
      for (const [field, hex] of /** @type {const} */ ([
        ['traceId', '0102030405'],
        ['spanId', '0102030405060708090a'],
        ['spanId', '01'],
      ])) {
        const bytes = wrongIdLength(signal, field, hex);
        await expectHttp(signal, bytes, PROTOBUF, [400], `HTTP ${field} of ${hex.length / 2} bytes`);
        await expectGrpc(signal, bytes, [grpcStatus.INVALID_ARGUMENT], `gRPC ${field} of ${hex.length / 2} bytes`);
      }
      assert.equal((await collector.api(`/api/${API_KIND[signal]}?service=bad-id`))[API_KIND[signal]].length, 0);
      await assertStillHealthy();
    });
  }
});

describe('random bytes (seeded)', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: random input never crashes a transport or gets a server error`, async () => {
      const random = seededRandom(0x07e1 + signal.length);
      for (let i = 0; i < 40; i++) {
        const length = 1 + Math.floor(random() * (i < 20 ? 64 : 4096));
        const bytes = randomBytes(random, length);
        await expectHttp(signal, bytes, PROTOBUF, [200, 400], `HTTP protobuf random #${i} (${length} bytes)`);
        await expectHttp(signal, bytes, JSON_TYPE, [200, 400], `HTTP JSON random #${i} (${length} bytes)`);
        await expectGrpc(signal, bytes, [grpcStatus.OK, grpcStatus.INVALID_ARGUMENT], `gRPC random #${i} (${length} bytes)`);
      }
      await assertStillHealthy();
    });
  }
});

describe('malformed and wrongly typed JSON', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: truncated and invalid JSON gets 400`, async () => {
      const text = fixtureJson(signal).trim();
      const cuts = [1, 2, 10, Math.floor(text.length / 3), Math.floor(text.length / 2), text.length - 1];
      for (const n of cuts) await expectHttp(signal, text.slice(0, n), JSON_TYPE, [400], `JSON prefix of ${n} chars`);
      for (const bad of ['{', '}', '{"a":}', '{,}', "{'resourceSpans':[]}", '{"resourceSpans":[],}', 'NaN', '\u0000'])
        await expectHttp(signal, bad, JSON_TYPE, [400], `JSON ${JSON.stringify(bad)}`);
      await expectHttp(signal, Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]), JSON_TYPE, [400], 'invalid UTF-8');
      await assertStillHealthy();
    });

    test(`${signal}: wrongly typed fields get 400 saying where`, async () => {
      for (const body of WRONG_JSON[signal]) await expectHttp(signal, body, JSON_TYPE, [400], body);
      await assertStillHealthy();
    });
  }
});

describe('oversized input', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: bodies over the limit are refused on every endpoint`, async () => {
      const big = new Uint8Array(LIMIT + 1);
      await expectHttp(signal, big, PROTOBUF, [413], 'HTTP protobuf');
      await expectHttp(signal, Buffer.alloc(LIMIT + 1, 0x20), JSON_TYPE, [413], 'HTTP JSON');
      await expectGrpc(signal, big, [grpcStatus.RESOURCE_EXHAUSTED], 'gRPC');
      await assertStillHealthy();
    });
  }
});

describe('after all that', () => {
  test('every endpoint still accepts valid data', async () => {
    for (const signal of SIGNAL_NAMES) {
      await expectHttp(signal, encodePb(signal, sampleRequest(signal, { service: 'after-pb' })), PROTOBUF, [200], 'HTTP protobuf');
      await expectHttp(signal, JSON.stringify(sampleRequest(signal, { service: 'after-json' })), JSON_TYPE, [200], 'HTTP JSON');
      await expectGrpc(signal, encodePb(signal, sampleRequest(signal, { service: 'after-grpc' })), [grpcStatus.OK], 'gRPC');
      for (const service of ['after-pb', 'after-json', 'after-grpc']) {
        const items = (await collector.api(`/api/${API_KIND[signal]}?service=${service}`))[API_KIND[signal]];
        assert.equal(items.length, 1, `${signal} ${service}`);
      }
    }
    await assertStillHealthy();
  });
});
