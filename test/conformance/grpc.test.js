// OTLP/gRPC conformance with a raw @grpc/grpc-js client that puts exact bytes on the wire.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { readFields } from '../helpers/otlp-pb.js';
import { SIGNAL_NAMES, API_KIND, GRPC_SERVICE, fixturePb, sampleRequest, encodePb } from '../helpers/payloads.js';

const MIB = 1024 * 1024;
const LIMIT = 8 * MIB;

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {Record<'none'|'gzip'|'deflate', ReturnType<typeof rawGrpcClient>>} */
let clients;

before(async () => {
  collector = await startTestCollector({ maxRequestBytes: LIMIT });
  clients = {
    none: rawGrpcClient(collector.urls.grpc),
    gzip: rawGrpcClient(collector.urls.grpc, { compression: 'gzip' }),
    deflate: rawGrpcClient(collector.urls.grpc, { compression: 'deflate' }),
  };
});

after(async () => {
  for (const c of Object.values(clients)) c.close();
  await collector.stop();
});

/** @param {'traces'|'metrics'|'logs'} signal @param {string} service */
async function stored(signal, service) {
  const kind = API_KIND[signal];
  return /** @type {any[]} */ ((await collector.api(`/api/${kind}?service=${encodeURIComponent(service)}&limit=1000`))[kind]);
}

/** An Export*ServiceResponse with nothing rejected: empty, or a partial_success whose count is 0. @param {Buffer|undefined} response */
function assertEmptyResponse(response) {
  assert.ok(response, 'a response message');
  for (const f of readFields(response)) {
    assert.equal(f.field, 1, 'only partial_success may be present');
    for (const p of readFields(/** @type {Uint8Array} */ (f.value))) if (p.field === 1) assert.equal(p.value, 0n);
  }
}

/**
 * A logs request whose single body string makes the whole message `size` bytes, give or take a few.
 * @param {string} service @param {number} size
 */
function logsOfSize(service, size) {
  const request = sampleRequest('logs', { service });
  const overhead = encodePb('logs', request).length;
  const text = 'z'.repeat(size - overhead - 16);
  request.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: text };
  return { bytes: encodePb('logs', request), text };
}

describe('valid requests', () => {
  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: the protobuf fixture is accepted with an empty response and stored`, async () => {
      await collector.clear();
      const { error, response } = await clients.none.exportRaw(GRPC_SERVICE[signal], fixturePb(signal));
      assert.equal(error, null, error?.message);
      assertEmptyResponse(response);
      const kind = API_KIND[signal];
      const items = (await collector.api(`/api/${kind}?limit=1000`))[kind];
      assert.ok(items.length > 0);
      const { requests } = await collector.api('/api/requests?transport=grpc');
      assert.equal(requests.length, 1);
      assert.equal(requests[0].signal, signal);
      assert.equal(requests[0].outcome, 'accepted');
      assert.equal(requests[0].response.status, grpcStatus.OK);
    });

    test(`${signal}: an empty request succeeds`, async () => {
      const { error, response } = await clients.none.exportRaw(GRPC_SERVICE[signal], new Uint8Array(0));
      assert.equal(error, null, error?.message);
      assertEmptyResponse(response);
    });

    test(`${signal}: gzip and deflate message compression work`, async () => {
      for (const compression of /** @type {const} */ (['gzip', 'deflate'])) {
        const service = `grpc-${compression}-${signal}`;
        const { error, response } = await clients[compression].exportRaw(GRPC_SERVICE[signal], encodePb(signal, sampleRequest(signal, { service })));
        assert.equal(error, null, `${compression}: ${error?.message}`);
        assertEmptyResponse(response);
        const items = await stored(signal, service);
        assert.equal(items.length, 1, compression);
        if (signal === 'traces') assert.equal(items[0].startTimeUnixNano, '1700000000123456789');
      }
    });
  }

  test('a request above grpc-js’s default 4 MiB receive limit but under the configured limit succeeds', async () => {
    const { bytes, text } = logsOfSize('grpc-5mib', 5 * MIB);
    assert.ok(bytes.length > 4 * MIB && bytes.length < LIMIT);
    const { error, response } = await clients.none.exportRaw(GRPC_SERVICE.logs, bytes);
    assert.equal(error, null, error?.message);
    assertEmptyResponse(response);
    const [log] = await stored('logs', 'grpc-5mib');
    assert.equal(log.body.length, text.length);
    assert.ok(log.body === text, 'the body arrives intact');
  });

  test('the same above-4-MiB request succeeds gzip-compressed', async () => {
    const { bytes } = logsOfSize('grpc-5mib-gzip', 5 * MIB);
    const { error } = await clients.gzip.exportRaw(GRPC_SERVICE.logs, bytes);
    assert.equal(error, null, error?.message);
    assert.equal((await stored('logs', 'grpc-5mib-gzip')).length, 1);
  });
});

describe('limits and errors', () => {
  test('a message over the limit gets RESOURCE_EXHAUSTED and is not stored', async () => {
    const { bytes } = logsOfSize('grpc-over-limit', LIMIT + MIB);
    const { error } = await clients.none.exportRaw(GRPC_SERVICE.logs, bytes);
    assert.equal(error?.code, grpcStatus.RESOURCE_EXHAUSTED, error?.message);
    assert.equal((await stored('logs', 'grpc-over-limit')).length, 0);
  });

  test('a compressed message that inflates past the limit gets RESOURCE_EXHAUSTED', async () => {
    const { bytes } = logsOfSize('grpc-over-limit-gzip', LIMIT + MIB);
    const { error } = await clients.gzip.exportRaw(GRPC_SERVICE.logs, bytes);
    assert.equal(error?.code, grpcStatus.RESOURCE_EXHAUSTED, error?.message);
    assert.equal((await stored('logs', 'grpc-over-limit-gzip')).length, 0);
  });

  for (const signal of SIGNAL_NAMES) {
    test(`${signal}: undecodable bytes get INVALID_ARGUMENT saying what was wrong`, async () => {
      const cases = [
        Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        Uint8Array.from([0xff]),
        Uint8Array.from([0x0a, 0x05, 0x0a, 0x10, 0x00]),
        Uint8Array.from([0x0f, 0x01]),
        Buffer.from('{"resourceSpans":[]}'),
      ];
      for (const bytes of cases) {
        const { error } = await clients.none.exportRaw(GRPC_SERVICE[signal], bytes);
        const label = Buffer.from(bytes).toString('hex');
        assert.equal(error?.code, grpcStatus.INVALID_ARGUMENT, `${label}: ${error?.message}`);
        assert.ok((error?.details ?? '').length > 10, `${label}: details "${error?.details}"`);
        assert.doesNotMatch(error?.details ?? '', /^Error deserializing request$/, `${label}: a specific message, not grpc-js's generic one`);
      }
    });
  }

  test('rejections are journaled with their gRPC status', async () => {
    await collector.clear();
    await clients.none.exportRaw(GRPC_SERVICE.traces, Uint8Array.from([0xff]));
    const { requests } = await collector.api('/api/requests?transport=grpc');
    assert.equal(requests.length, 1);
    assert.equal(requests[0].outcome, 'rejected');
    assert.equal(requests[0].response.status, grpcStatus.INVALID_ARGUMENT);
    assert.ok(String(requests[0].response.message).length > 0);
  });

  test('an unknown method gets UNIMPLEMENTED', async () => {
    const { error } = await clients.none.exportRaw('opentelemetry.proto.collector.profiles.v1.NoSuchService', new Uint8Array(0));
    assert.equal(error?.code, grpcStatus.UNIMPLEMENTED);
  });
});
