// Issue 12: hostile clients and pages. Every error on the OTLP ports is a google.rpc.Status, the admin API answers
// only its own origin (and its token when set), clients that stall or pipeline without reading are dropped,
// fault rules are capped, and malformed bodies are refused saying where.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http2 from 'node:http2';
import { setTimeout as delay, setImmediate } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { startTestCollector } from '../helpers/collector.js';
import { rawRequest } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { fixtureJson, fixturePb, sampleRequest, encodePb } from '../helpers/payloads.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { decodeStatus } from '../../server/otlp/schema.js';
import { accessCheck } from '../../server/api/access-check.js';
import { BUSY_REFUSALS_PER_SECOND } from '../../server/transport/pace.js';
import { assertPaced, flood, pacedBeside } from '../helpers/flood.js';

const MiB = 1024 * 1024;

/**
 * Writes bytes on a fresh socket and collects what comes back until the server closes it.
 * @param {string} url @param {string|Buffer} bytes @param {{ timeoutMs?: number, read?: boolean }} [options]
 * @returns {Promise<{ text: string, closedAfterMs: number }>}
 */
function rawExchange(url, bytes, { timeoutMs = 10000, read = true } = {}) {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    /** @type {Buffer[]} */
    const chunks = [];
    if (read) socket.on('data', (c) => chunks.push(c));
    else socket.pause();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`socket still open after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closedAfterMs: Date.now() - started });
    });
  });
}

/** @param {string} text a whole HTTP response */
function statusOf(text) {
  const [head, body] = text.split('\r\n\r\n');
  return { code: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) };
}

describe('every error on the OTLP/HTTP port is a google.rpc.Status', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector();
  });
  after(() => c.stop());

  for (const [what, headers] of /** @type {const} */ ([
    ['no Content-Type', {}],
    ['an empty Content-Type', { 'content-type': '' }],
    ['a doubled Content-Type', { 'content-type': 'application/json, application/x-protobuf' }],
    ['a malformed Content-Type', { 'content-type': '/;;' }],
  ])) {
    test(`${what}: 415 with a JSON Status`, async () => {
      const res = await rawRequest(c.urls.http + '/v1/traces', { headers, body: '{}' });
      assert.equal(res.status, 415);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = JSON.parse(res.body.toString());
      assert.equal(body.code, 3);
      assert.match(body.message, /Content-Type/);
    });
  }

  test('a doubled Content-Type header line: Node keeps the first, and the error is a Status in that encoding', async () => {
    const res = await rawRequest(c.urls.http + '/v1/logs', {
      headers: /** @type {any} */ ({ 'content-type': ['application/x-protobuf', 'application/json'] }),
      body: '{}',
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'application/x-protobuf');
    assert.equal(decodeStatus(res.body).code, 3);
  });

  test('oversized headers: 431 with a JSON Status', async () => {
    const { text } = await rawExchange(c.urls.http, `POST /v1/traces HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    const res = statusOf(text);
    assert.equal(res.code, 431);
    assert.match(res.head, /content-type: application\/json/);
    assert.equal(res.body.code, 3);
  });

  test('malformed framing: 400 with a JSON Status', async () => {
    const { text } = await rawExchange(c.urls.http, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    const res = statusOf(text);
    assert.equal(res.code, 400);
    assert.equal(res.body.code, 3);
    assert.match(res.body.message, /malformed HTTP request/);
  });

  test('300 clients that stop mid-body and half-close at once are each answered 400, and each refusal journaled', async () => {
    const { port } = new URL(c.urls.http);
    /** The journal's entries for bodies whose client left. @returns {Promise<number>} */
    const left = async () =>
      (await c.api('/api/requests?limit=1000')).requests.filter((/** @type {any} */ r) => r.path === '/v1/logs' && r.response?.status === 400).length;
    const before = await left();
    const head = 'POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n';
    const sockets = await Promise.all(
      Array.from(
        { length: 300 },
        () =>
          /** @type {Promise<net.Socket>} */ (
            new Promise((resolve) => {
              const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head, () => resolve(socket)));
              socket.on('error', () => {});
            })
          ),
      ),
    );
    // Every request has reached its handler (its body half read) before they all leave together.
    await delay(300);
    const answers = sockets.map(
      (socket) =>
        /** @type {Promise<string>} */ (
          new Promise((resolve) => {
            /** @type {Buffer[]} */
            const chunks = [];
            socket.on('data', (chunk) => chunks.push(chunk));
            socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
            socket.end();
          })
        ),
    );
    for (const text of await Promise.all(answers)) {
      const res = statusOf(text);
      assert.equal(res.code, 400, text);
      assert.equal(res.body.code, 3);
      assert.match(res.body.message, /malformed HTTP request: HPE_INVALID_EOF_STATE/);
    }
    await waitFor(async () => (await left()) - before === 300, { timeoutMs: 5000, what: 'each refusal journaled' });
  });

  test('the OTLP port still answers CORS preflights for any origin', async () => {
    const res = await rawRequest(c.urls.http + '/v1/traces', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example');
  });
});

describe('one origin for the admin API', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector();
  });
  after(() => c.stop());

  test('a rebinding Host is refused on the API, and nothing changes', async () => {
    const port = new URL(c.urls.ui).port;
    const read = await rawRequest(c.urls.ui + '/api/spans', { method: 'GET', headers: { host: `evil.test:${port}` } });
    assert.equal(read.status, 403);
    assert.match(JSON.parse(read.body.toString()).message, /--allowed-hosts/);
    const add = await rawRequest(c.urls.ui + '/api/faults', {
      headers: { host: `evil.test:${port}`, 'content-type': 'application/json' },
      body: '{"action":"unavailable"}',
    });
    assert.equal(add.status, 403);
    assert.equal((await c.api('/api/faults')).faults.length, 0);
    const ok = await rawRequest(c.urls.ui + '/api/health', { method: 'GET', headers: { host: `localhost:${port}` } });
    assert.equal(ok.status, 200);
  });

  test("a cross-site Origin is refused; the UI's own origin is not", async () => {
    const evil = await rawRequest(c.urls.ui + '/api/faults', {
      headers: { origin: 'http://evil.test', 'content-type': 'application/json' },
      body: '{"action":"unavailable"}',
    });
    assert.equal(evil.status, 403);
    const own = await rawRequest(c.urls.ui + '/api/faults', { method: 'GET', headers: { origin: c.urls.ui } });
    assert.equal(own.status, 200);
  });

  test('a text/plain POST to /api/import (a simple cross-site request) stores nothing', async () => {
    const line = JSON.stringify(fixtureJson('logs'));
    const res = await rawRequest(c.urls.ui + '/api/import', { headers: { 'content-type': 'text/plain' }, body: line });
    assert.equal(res.status, 415);
    const form = await rawRequest(c.urls.ui + '/api/faults', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=unavailable' });
    assert.equal(form.status, 415);
    assert.equal((await c.api('/api/stats')).signals.logs.stored, 0);
  });

  test('the live feed refuses a rebinding Host and a foreign Origin', async () => {
    const port = new URL(c.urls.ui).port;
    for (const headers of [{ host: `evil.test:${port}` }, { origin: 'http://evil.test' }]) {
      const ws = new WebSocket(c.urls.ui.replace('http', 'ws') + '/api/live', { headers });
      ws.on('error', () => {});
      const status = await new Promise((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode)).on('open', () => resolve(101)));
      assert.equal(status, 403);
    }
  });

  test('a 0.0.0.0 bind accepts any Host unless names are given', () => {
    const req = (/** @type {string} */ host) => /** @type {any} */ ({ headers: { host: `${host}:4319` }, method: 'GET', url: '/api/spans' });
    assert.equal(accessCheck({ host: '0.0.0.0', allowedHosts: [], adminToken: '' })(req('otlp-mock'), 'api'), null);
    const narrowed = accessCheck({ host: '0.0.0.0', allowedHosts: ['otlp-mock'], adminToken: '' });
    assert.equal(narrowed(req('otlp-mock'), 'api'), null);
    assert.equal(narrowed(req('localhost'), 'api'), null);
    assert.equal(narrowed(req('evil.test'), 'api')?.status, 403);
    assert.equal(accessCheck({ host: '192.168.1.5', allowedHosts: [], adminToken: '' })(req('192.168.1.5'), 'api'), null);
  });
});

describe('--admin-token', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  const token = 's3cret token';
  before(async () => {
    c = await startTestCollector({ adminToken: token });
  });
  after(() => c.stop());

  test('the API requires it; health and the UI page do not', async () => {
    assert.equal((await rawRequest(c.urls.ui + '/api/spans', { method: 'GET' })).status, 401);
    assert.equal((await rawRequest(c.urls.ui + '/api/spans', { method: 'GET', headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await rawRequest(c.urls.ui + '/api/spans', { method: 'GET', headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.equal((await rawRequest(c.urls.ui + '/api/spans', { method: 'GET', headers: { 'x-otlp-mock-token': token } })).status, 200);
    assert.equal((await rawRequest(c.urls.ui + '/api/health', { method: 'GET' })).status, 200);
    assert.equal((await rawRequest(c.urls.ui + '/', { method: 'GET' })).status, 200);
  });

  test('the live feed requires it, as a query parameter', async () => {
    const base = c.urls.ui.replace('http', 'ws') + '/api/live';
    const refused = new WebSocket(base);
    refused.on('error', () => {});
    assert.equal(await new Promise((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode))), 401);
    const ws = new WebSocket(`${base}?token=${encodeURIComponent(token)}`);
    const hello = await new Promise((resolve, reject) => ws.once('message', (m) => resolve(JSON.parse(String(m)))).once('error', reject));
    assert.equal(/** @type {any} */ (hello).type, 'hello');
    ws.close();
  });
});

describe('fault rules: a cap and parse errors that say where', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector({ maxFaults: 3 });
  });
  after(() => c.stop());

  /** @param {string} body */
  const post = (body) => rawRequest(c.urls.ui + '/api/faults', { headers: { 'content-type': 'application/json' }, body });

  test('the rule past the cap gets a clear 400', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await post('{"action":"delay","delayMs":1,"signals":["logs"]}')).status, 201);
    const res = await post('{"action":"unavailable"}');
    assert.equal(res.status, 400);
    assert.match(JSON.parse(res.body.toString()).error, /already 3 fault rules.*--max-faults/);
    await c.api('/api/faults', { method: 'DELETE' });
  });

  test('malformed JSON names the position', async () => {
    const res = await post('{"action": "unavailable",}');
    assert.equal(res.status, 400);
    assert.match(JSON.parse(res.body.toString()).error, /not valid JSON.*position 25/);
  });

  test('a __proto__ key is refused by position', async () => {
    const res = await post('{"action":"unavailable",\n "__proto__": {"x": 1}}');
    assert.equal(res.status, 400);
    assert.match(JSON.parse(res.body.toString()).error, /"__proto__" key at position 26 \(line 2 column 2\)/);
  });
});

describe('slow, stalled and pipelining clients', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  const IDLE = 400;
  before(async () => {
    c = await startTestCollector({ idleTimeoutMs: IDLE, maxPipelined: 4 });
  });
  after(() => c.stop());

  test('a client that stops sending its headers or its body is dropped after the idle timeout', async () => {
    for (const url of [c.urls.http, c.urls.ui]) {
      const headers = await rawExchange(url, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 5000 });
      assert.ok(headers.closedAfterMs >= IDLE - 50 && headers.closedAfterMs < 4000, `${url}: ${headers.closedAfterMs} ms`);
    }
    const body = await rawExchange(c.urls.http, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000000\r\n\r\nabc', {
      timeoutMs: 5000,
    });
    assert.ok(body.closedAfterMs < 4000);
  });

  test('a waiting query outlives the idle timeout: the server, not the client, is the one waiting', async () => {
    const res = await rawRequest(c.urls.ui + `/api/logs?minCount=1&timeoutMs=${IDLE * 3}`, { method: 'GET' });
    assert.equal(res.status, 408);
  });

  test('a client pipelining more requests than --max-pipelined is dropped; others are served', async () => {
    const body = fixturePb('logs');
    const one = Buffer.concat([Buffer.from(`POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    const { closedAfterMs } = await rawExchange(c.urls.http, Buffer.concat(Array(50).fill(one)), { timeoutMs: 5000 });
    assert.ok(closedAfterMs < 4000);
    const stored = (await c.api('/api/stats')).signals.logs.received;
    const perRequest = Math.max(...(await c.api('/api/requests')).requests.map((/** @type {any} */ r) => r.items));
    assert.ok(stored <= perRequest * 8, `${stored} log records stored from one pipelining connection`);
    const ok = await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/x-protobuf' }, body });
    assert.equal(ok.status, 200);
  });

  test('a gRPC stream that stops sending is cancelled after the idle timeout', async () => {
    const session = http2.connect(c.urls.grpc);
    session.on('error', () => {});
    const stream = session.request({
      ':method': 'POST',
      ':path': '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    // a message header announcing 1 MB, then nothing more
    stream.write(Buffer.from([0, 0, 0x0f, 0x42, 0x40, 1, 2, 3]));
    const started = Date.now();
    const code = await new Promise((resolve) => {
      stream.on('close', () => resolve(stream.rstCode));
      stream.on('error', () => {});
      stream.resume();
    });
    assert.equal(code, http2.constants.NGHTTP2_CANCEL);
    assert.ok(Date.now() - started < 4000);
    session.close();
    const grpc = rawGrpcClient(c.urls.grpc);
    const res = await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', encodePb('logs', sampleRequest('logs', { service: 'after' })));
    assert.equal(res.error, null);
  });
});

describe("a request larger than its signal's byte budget", () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector({ maxLogBytes: 4096 });
  });
  after(() => c.stop());

  test('is refused with 413 and a Status naming the budget (HTTP), RESOURCE_EXHAUSTED (gRPC)', async () => {
    const big = sampleRequest('logs', { service: 'big' });
    big.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: 'x'.repeat(10000) };
    const res = await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/x-protobuf' }, body: encodePb('logs', big) });
    assert.equal(res.status, 413);
    const status = decodeStatus(res.body);
    assert.equal(status.code, 8);
    assert.match(status.message, /logs budget of 4096 bytes.*--max-log-bytes/);
    const grpc = rawGrpcClient(c.urls.grpc);
    const viaGrpc = await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', encodePb('logs', big));
    assert.equal(viaGrpc.error?.code, grpcStatus.RESOURCE_EXHAUSTED);
    const small = await rawRequest(c.urls.http + '/v1/logs', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sampleRequest('logs', { service: 'small' })),
    });
    assert.equal(small.status, 200);
    await waitFor(async () => (await c.api('/api/logs')).logs.length === 1);
  });
});

describe("a request holding more items than its signal's store keeps", () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector({ maxLogs: 1000, maxPoints: 1000 });
  });
  after(() => c.stop());

  /** One resource and scope holding `n` empty log records, `body` bytes of text each. @param {number} n @param {number} [body] */
  const logs = (n, body = 0) => ({
    resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: n }, () => (body ? { body: { stringValue: 'x'.repeat(body) } } : {})) }] }],
  });
  /** @param {any} request */
  const post = (request) => rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/x-protobuf' }, body: encodePb('logs', request) });

  test('is refused before its decode with 413 naming the count and the flag, on both wires, in protobuf and OTLP/JSON, small or large; the store keeps what it had', async () => {
    const kept = await post(logs(1000));
    assert.equal(kept.status, 200, 'as many as the store keeps are stored');
    const grpc = rawGrpcClient(c.urls.grpc);
    // 1,001 records fill 2 KB: counted at once; 600,000 fill 1.2 MB: counted in slices before the decode.
    for (const n of [1001, 600_000]) {
      const protobuf = encodePb('logs', logs(n));
      const json = JSON.stringify(logs(n));
      /** @type {[string, Uint8Array|string][]} */
      const bodies = [
        ['application/x-protobuf', protobuf],
        ['application/json', json],
      ];
      for (const [type, body] of bodies) {
        const res = await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': type }, body });
        assert.equal(res.status, 413, `${n} records, ${type}`);
        const status = type === 'application/json' ? JSON.parse(res.body.toString()) : decodeStatus(res.body);
        assert.equal(status.code, grpcStatus.RESOURCE_EXHAUSTED);
        assert.equal(status.message, 'request holds more log records than the 1000 the store keeps; send smaller batches or raise --max-logs');
      }
      const viaGrpc = await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', protobuf);
      assert.equal(viaGrpc.error?.code, grpcStatus.RESOURCE_EXHAUSTED, `${n} records over gRPC`);
    }
    // A body over the size that is counted, of no more items than the store keeps, is stored.
    const large = await post(logs(900, 1500));
    assert.equal(large.status, 200);
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.logs.stored, 1000);
    assert.equal(stats.signals.logs.received, 1900);
    const journal = await c.api('/api/requests?limit=100');
    const refused = journal.requests.filter((/** @type {any} */ r) => r.response?.status === 413);
    assert.equal(refused.length, 4, 'each refusal is in the journal');
  });

  test("a metric's data points are what is counted", async () => {
    const metric = (/** @type {number} */ points) => ({
      resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'm', gauge: { dataPoints: Array.from({ length: points }, () => ({ asInt: '1' })) } }] }] }],
    });
    const post = (/** @type {any} */ request) =>
      rawRequest(c.urls.http + '/v1/metrics', { headers: { 'content-type': 'application/x-protobuf' }, body: encodePb('metrics', request) });
    assert.equal((await post(metric(1000))).status, 200);
    const res = await post(metric(1001));
    assert.equal(res.status, 413);
    assert.match(decodeStatus(res.body).message, /^request holds more data points than the 1000 the store keeps; .*--max-points$/);
  });
});

describe('request bodies under way count against --max-inflight-bytes as they arrive', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector({ maxInflightBytes: 2 * MiB });
  });
  after(() => c.stop());

  /**
   * A logs Export stream that sends `sent` bytes of a message whose prefix announces `declared`, and is left open.
   * @param {import('node:http2').ClientHttp2Session} session @param {number} declared @param {number} sent
   */
  const partialMessage = (session, declared, sent) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    stream.resume();
    const header = Buffer.from([0, 0, 0, 0, 0]);
    header.writeUInt32BE(Math.round(declared), 1);
    stream.write(Buffer.concat([header, Buffer.alloc(Math.round(sent))]));
    let rstCode = -1;
    /** @type {Promise<number|undefined>} */
    const closed = new Promise((resolve) =>
      stream.on('close', () => {
        rstCode = stream.rstCode ?? 0;
        resolve(stream.rstCode);
      }),
    );
    return { stream, closed, rstCode: () => rstCode };
  };

  /**
   * An OTLP/HTTP logs request that sends `sent` bytes of a body whose Content-Length announces `declared`, and is left
   * open. @param {number} declared @param {number} sent
   */
  const partialBody = (declared, sent) => {
    const socket = net.connect(Number(new URL(c.urls.http).port), '127.0.0.1');
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.write(`POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${Math.round(declared)}\r\n\r\n`);
    socket.write(Buffer.alloc(Math.round(sent)));
    const status = () => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
    return { socket, status };
  };

  /** Resolves with the status a partial body is answered with (0: none within 15 s). @param {number} declared @param {number} sent */
  const partialBodyStatus = (declared, sent) =>
    new Promise((resolve) => {
      const body = partialBody(declared, sent);
      const timer = setTimeout(() => body.socket.destroy(), 15_000);
      body.socket.on('data', () => {
        if (body.status() === 0) return;
        clearTimeout(timer);
        body.socket.destroy();
      });
      body.socket.on('close', () => resolve(body.status()));
    });

  test('gRPC: two unfinished 3 MB messages cannot both be held; the refused stream is retryable, and the budget comes back', async () => {
    const session = http2.connect(c.urls.grpc);
    session.on('error', () => {});
    const first = partialMessage(session, 3 * MiB, 1.5 * MiB);
    const second = partialMessage(session, 3 * MiB, 1.6 * MiB);
    const refused = await Promise.race([first.closed, second.closed]);
    assert.equal(refused, http2.constants.NGHTTP2_REFUSED_STREAM);
    first.stream.close(http2.constants.NGHTTP2_CANCEL);
    second.stream.close(http2.constants.NGHTTP2_CANCEL);
    await Promise.all([first.closed, second.closed]);
    session.close();
    const grpc = rawGrpcClient(c.urls.grpc);
    // Larger than 1 MiB, so that it gets no small-body allowance: it fits only once both streams' bytes are released.
    const big = sampleRequest('logs', { service: 'after' });
    big.resourceLogs[0].scopeLogs[0].logRecords[0].body = { stringValue: 'x'.repeat(1.9 * MiB) };
    const body = Buffer.from(encodePb('logs', big));
    await waitFor(async () => (await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', body)).error === null, {
      what: 'a 1.9 MB export once the held bytes are released',
    });
    grpc.close();
  });

  test('gRPC: a message whose prefix declares more than fits beside what is held is refused at its first chunk; small ones still fit', async () => {
    const session = http2.connect(c.urls.grpc);
    session.on('error', () => {});
    // half a MiB of the 2 MiB budget held by a stalled message of 1.2 MiB
    const holder = partialMessage(session, 1.2 * MiB, 0.5 * MiB);
    try {
      await delay(300);
      // 64 KiB would fit, but the 1.9 MiB its prefix declares would not: refused before the rest is read.
      const big = partialMessage(session, 1.9 * MiB, 64 * 1024);
      await waitFor(async () => big.rstCode() !== -1, { what: 'the second big message refused' });
      assert.equal(big.rstCode(), http2.constants.NGHTTP2_REFUSED_STREAM);
      assert.equal(holder.rstCode(), -1, 'the stalled message is still being waited for');
      const grpc = rawGrpcClient(c.urls.grpc);
      const small = await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', encodePb('logs', sampleRequest('logs', { service: 'small-beside-big' })));
      assert.equal(small.error, null);
      grpc.close();
    } finally {
      session.destroy();
    }
  });

  test('gRPC: large messages begun at once hold room for all they declare from their first chunk: of ten 1.5 MB messages, one is read', async () => {
    // Tried again while the streams of the test before still hold their room, which they give back as they close.
    await waitFor(
      async () => {
        const session = http2.connect(c.urls.grpc);
        session.on('error', () => {});
        const calls = Array.from({ length: 10 }, () => partialMessage(session, 1.5 * MiB, 64 * 1024));
        try {
          await waitFor(async () => calls.filter((call) => call.rstCode() !== -1).length >= 9, { what: 'nine of the ten refused' });
          await delay(300);
          const refused = calls.filter((call) => call.rstCode() === http2.constants.NGHTTP2_REFUSED_STREAM).length;
          // Two 1.5 MB messages would not fit in 2 MiB: one is still being waited for.
          return refused === 9 && calls.filter((call) => call.rstCode() === -1).length === 1;
        } finally {
          session.destroy();
        }
      },
      { what: 'nine refused and one read' },
    );
  });

  test('HTTP: large bodies begun at once hold room for all they declare from their first chunk: of five 1.5 MB bodies, one is read', async () => {
    const bodies = Array.from({ length: 5 }, () => partialBody(1.5 * MiB, 64 * 1024));
    try {
      await waitFor(async () => bodies.filter((body) => body.status() !== 0).length >= 4, { what: 'four of the five refused' });
      await delay(300);
      assert.deepEqual(bodies.map((body) => body.status()).sort(), [0, 503, 503, 503, 503]);
    } finally {
      for (const body of bodies) body.socket.destroy();
    }
  });

  test('HTTP: a body whose Content-Length declares more than fits beside what is held is refused at its first chunk; small ones still fit', async () => {
    // half a MiB of the 2 MiB budget held by a stalled body of 1.2 MiB (sent again should a probe's bytes be read before it)
    let holder = partialBody(1.2 * MiB, 0.5 * MiB);
    await delay(300);
    // 64 KiB would fit, but the 1.9 MiB it declares would not: refused with the first chunk it sends.
    await waitFor(
      async () => {
        if (holder.status() !== 0) {
          holder.socket.destroy();
          holder = partialBody(1.2 * MiB, 0.5 * MiB);
          await delay(300);
        }
        const big = partialBody(1.9 * MiB, 64 * 1024);
        await delay(200);
        big.socket.destroy();
        return big.status() === 503 && holder.status() === 0;
      },
      { what: 'a 503 for a second big body before it is all sent' },
    );
    const small = sampleRequest('logs', { service: 'small-beside-big' });
    const res = await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/x-protobuf' }, body: encodePb('logs', small) });
    assert.equal(res.status, 200);
    assert.equal(holder.status(), 0, 'the stalled body is still being waited for');
    holder.socket.destroy();
  });

  test('HTTP: refusals of large bodies for want of room are answered 503 at a pace past a burst, while small requests are answered at once', async () => {
    // Sent again should it come before the last test's bytes are released.
    let holder = partialBody(2 * MiB, 1.9 * MiB);
    try {
      await waitFor(async () => {
        await delay(300);
        if (holder.status() === 0) return true;
        holder.socket.destroy();
        holder = partialBody(2 * MiB, 1.9 * MiB);
        return false;
      });
      assert.equal(await partialBodyStatus(1.5 * MiB, 64 * 1024), 503, 'a large body beside the held one is refused');
      assert.equal(holder.status(), 0, 'the stalled body is still being waited for');
      // The burst the probe above may have begun is waited out, so that the flood below starts on a full one.
      await delay(1000);
      const small = encodePb('logs', sampleRequest('logs', { service: 'small-beside-refusals' }));
      await pacedBeside({
        count: BUSY_REFUSALS_PER_SECOND * 3,
        perSecond: BUSY_REFUSALS_PER_SECOND,
        refuse: () => partialBodyStatus(1.5 * MiB, 64 * 1024),
        answerOf: (status) => status,
        expected: 503,
        beside: async () =>
          assert.equal((await rawRequest(c.urls.http + '/v1/logs', { headers: { 'content-type': 'application/x-protobuf' }, body: small })).status, 200),
      });
    } finally {
      holder.socket.destroy();
    }
  });

  test('gRPC: refusals of large messages for want of room are paced past a burst, each REFUSED_STREAM', async () => {
    const session = http2.connect(c.urls.grpc);
    session.on('error', () => {});
    // Sent again should it come before the last test's bytes are released.
    let holder = partialMessage(session, 1.9 * MiB, 1.8 * MiB);
    try {
      await waitFor(async () => {
        await delay(300);
        if (holder.rstCode() === -1) return true;
        holder = partialMessage(session, 1.9 * MiB, 1.8 * MiB);
        return false;
      });
      const count = BUSY_REFUSALS_PER_SECOND * 3;
      const outcome = await flood(count, () => partialMessage(session, 1.5 * MiB, 64 * 1024).closed).all;
      assertPaced(outcome, count, BUSY_REFUSALS_PER_SECOND, http2.constants.NGHTTP2_REFUSED_STREAM);
      assert.equal(holder.rstCode(), -1, 'the stalled message is still being waited for');
    } finally {
      // Node's client loops without end, allocating, when a session is destroyed in the turn a stream of it closed.
      await setImmediate();
      session.destroy();
    }
  });
});
