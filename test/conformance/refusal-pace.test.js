// Refusals a client can loop on are answered at a pace (server/transport/pace.js): failed token checks and bodies
// over a route's limit on the UI port, refused compressed bodies and requests of more items than the store keeps on
// the OTLP ports. A burst is answered at once; past it a flood waits, while other clients' requests are answered as
// before, and clients that leave while they wait cost nothing more.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp, rawRequest } from '../helpers/http.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';
import { rawHttp, rawUpgrade } from '../helpers/raw-http.js';
import { assertPaced, flood, pacedBeside } from '../helpers/flood.js';
import { BODY_REFUSALS_PER_SECOND, TOKEN_REFUSALS_PER_SECOND } from '../../server/transport/pace.js';

const TOKEN = 'paced-secret';
const PROTOBUF = 'application/x-protobuf';
const TRACES = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const RESOURCE_EXHAUSTED = 8;
/** A zstd frame that asks for a 64 MiB window: refused (413) at its header. */
const ZSTD_BOMB = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x80, 0x01, 0x00, 0x00]);

/** @type {import('../helpers/collector.js').TestCollector} */
let c;
let uiPort = 0;
before(async () => {
  c = await startTestCollector({ adminToken: TOKEN });
  uiPort = Number(new URL(c.urls.ui).port);
});
after(() => c.stop());

/** A plain request of one span of `service`, answered and stored while a flood waits. @param {string} service */
async function plainBeside(service) {
  assert.equal((await postOtlp(c.urls.http, '/v1/traces', encodePb('traces', sampleRequest('traces', { service })), PROTOBUF)).status, 200);
}

/** @param {string} [token] */
const stats = (token = 'wrong') => rawHttp(uiPort, 'GET', '/api/stats', { headers: { authorization: `Bearer ${token}` }, timeoutMs: 15_000 });

describe('failed token checks', () => {
  test('a burst is answered at once; a flood past it is paced while a request with the token is answered at once', async () => {
    await pacedBeside({
      count: TOKEN_REFUSALS_PER_SECOND * 4,
      perSecond: TOKEN_REFUSALS_PER_SECOND,
      refuse: () => stats(),
      answerOf: (r) => r.status,
      expected: 401,
      beside: async () => assert.equal((await stats(TOKEN)).status, 200),
    });
  });

  test("WebSocket upgrades with a wrong token share the 401s' pace, while an upgrade with the token is answered at once", async () => {
    await pacedBeside({
      count: TOKEN_REFUSALS_PER_SECOND * 3,
      perSecond: TOKEN_REFUSALS_PER_SECOND,
      refuse: () => rawUpgrade(uiPort, '/api/live?token=wrong', {}, 15_000),
      answerOf: (r) => r.status,
      expected: 401,
      beside: async () => assert.equal((await rawUpgrade(uiPort, `/api/live?token=${TOKEN}`)).status, 101),
    });
  });

  test('clients that leave while their refusal waits cost nothing more, and the process stays up', async () => {
    const leaving = Array.from(
      { length: TOKEN_REFUSALS_PER_SECOND * 3 },
      () =>
        new Promise((resolve) => {
          const socket = net.connect(uiPort, '127.0.0.1', () => {
            socket.write(`GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1:${uiPort}\r\nAuthorization: Bearer wrong\r\n\r\n`);
            setTimeout(() => socket.resetAndDestroy(), 20);
          });
          socket.on('error', () => {});
          socket.on('close', resolve);
        }),
    );
    await Promise.all(leaving);
    assert.equal((await stats(TOKEN)).status, 200);
    assert.equal((await rawHttp(uiPort, 'GET', '/api/health')).status, 200);
    // A refusal still gets its answer, once the pace allows.
    assert.equal((await stats()).status, 401);
  });
});

describe("bodies over a UI route's limit", () => {
  test('a burst is answered 413 at once; a flood past it is paced while a verify within the limit is answered', async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const tooLarge = JSON.stringify({ expectations: [{ signal: 'spans', where: { service: 'x'.repeat(600 * 1024) } }] });
    const small = JSON.stringify({ expectations: [{ signal: 'spans' }] });
    await pacedBeside({
      count: BODY_REFUSALS_PER_SECOND * 3,
      perSecond: BODY_REFUSALS_PER_SECOND,
      refuse: () => rawHttp(uiPort, 'POST', '/api/verify', { headers: auth, body: tooLarge, timeoutMs: 15_000 }),
      answerOf: (r) => r.status,
      expected: 413,
      beside: async () => assert.equal((await rawHttp(uiPort, 'POST', '/api/verify', { headers: auth, body: small })).status, 200),
    });
  });
});

/**
 * Bytes this thread has read from files and sockets: the API's (the collector runs in the test's process) with the
 * test's own, without the front door's thread.
 */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/thread-self/io', 'utf8'))?.[1]);

describe("bodies over a UI route's limit, past the burst", () => {
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const bodyBytes = 4 * 1024 * 1024;
  const body = `{"expectations":[${' '.repeat(bodyBytes)}]}`;
  const count = BODY_REFUSALS_PER_SECOND * 2;

  test('are not read by the API while they wait', { skip: !existsSync('/proc/thread-self/io') && 'needs /proc/thread-self/io (Linux)' }, async () => {
    const before = bytesRead();
    const { results } = await flood(count, () => rawHttp(uiPort, 'POST', '/api/verify', { headers: auth, body, stopWhenAnswered: true, timeoutMs: 15_000 })).all;
    const read = bytesRead() - before;
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([413]));
    // The API read a waiting body as it came, 74-84 MiB of these 160; now what the door's socket to it holds, 12-13
    // MiB. The door reads what the client got into the kernel's buffers before it was answered, so as not to reset
    // it unread.
    assert.ok(read < (count * bodyBytes) / 4, `the API read ${(read / 1048576).toFixed(0)} MiB of ${count} refused bodies of ${bodyBytes / 1048576} MiB`);
  });

  // Clients of each kind lost answers, 2-7 of 40: the connection was closed before the answer was read, or held
  // open unanswered until the client gave up.
  /** @type {Record<string, () => Promise<number>>} */
  const clients = {
    'a client that sends its whole body before it reads': async () => (await rawHttp(uiPort, 'POST', '/api/verify', { headers: auth, body, timeoutMs: 15_000 })).status,
    "a chunked body from Node's HTTP client, which reads as it sends": async () =>
      (await rawRequest(`${c.urls.ui}/api/verify`, { headers: auth, body, chunked: true, timeoutMs: 15_000 })).status,
    "Node's fetch": async () => {
      const res = await fetch(`${c.urls.ui}/api/verify`, { method: 'POST', headers: auth, body });
      await res.arrayBuffer();
      return res.status;
    },
  };
  for (const [client, send] of Object.entries(clients)) {
    test(`each gets its 413 and a close: ${client}`, async () => {
      const { results } = await flood(count, send).all;
      assert.deepEqual(new Set(results), new Set([413]));
    });
  }
});

describe('refused compressed bodies', () => {
  test('OTLP/HTTP: a burst of bombs is answered at once; a flood past it is paced while plain requests are answered', async () => {
    await pacedBeside({
      count: BODY_REFUSALS_PER_SECOND * 3,
      perSecond: BODY_REFUSALS_PER_SECOND,
      refuse: () => postOtlp(c.urls.http, '/v1/traces', ZSTD_BOMB, PROTOBUF, { 'content-encoding': 'zstd' }),
      answerOf: (r) => r.status,
      expected: 413,
      beside: () => plainBeside('beside-bombs'),
    });
    assert.equal((await c.api(`/api/spans?service=beside-bombs`, { headers: { authorization: `Bearer ${TOKEN}` } })).total, 1);
  });

  test('OTLP/gRPC: every bomb of a flood past the burst is answered RESOURCE_EXHAUSTED', async () => {
    const count = BODY_REFUSALS_PER_SECOND * 2;
    const outcome = await grpcFlood(count, Buffer.concat([Buffer.from([1, 0, 0, 0, ZSTD_BOMB.length]), ZSTD_BOMB]), { 'grpc-encoding': 'zstd' });
    assertPaced(outcome, count, BODY_REFUSALS_PER_SECOND, RESOURCE_EXHAUSTED);
  });
});

describe('requests of more items than the store keeps', () => {
  // 100,001 empty spans in one scope (the store keeps 100,000 by default): 200 KB, refused once counted.
  const spans = Buffer.alloc(2 * 100_001).fill(Buffer.from([0x12, 0x00]));
  const nested = (/** @type {number} */ field, /** @type {Buffer} */ inner) => Buffer.concat([Buffer.from([(field << 3) | 2]), varint(inner.length), inner]);
  const body = nested(1, nested(2, spans));

  test('OTLP/HTTP: a burst is answered 413 at once; a flood past it is paced while plain requests are answered', async () => {
    await pacedBeside({
      count: BODY_REFUSALS_PER_SECOND * 3,
      perSecond: BODY_REFUSALS_PER_SECOND,
      refuse: () => postOtlp(c.urls.http, '/v1/traces', body, PROTOBUF),
      answerOf: (r) => r.status,
      expected: 413,
      beside: () => plainBeside('beside-many'),
    });
  });

  test('OTLP/gRPC: every call of a flood past the burst is answered RESOURCE_EXHAUSTED, at the pace', async () => {
    const count = BODY_REFUSALS_PER_SECOND * 2;
    const outcome = await grpcFlood(count, Buffer.concat([Buffer.from([0]), Buffer.from(new Uint32Array([body.length]).buffer).reverse(), body]));
    assertPaced(outcome, count, BODY_REFUSALS_PER_SECOND, RESOURCE_EXHAUSTED);
  });
});

/** A protobuf varint. @param {number} n */
function varint(n) {
  const bytes = [];
  for (; n > 0x7f; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
  bytes.push(n);
  return Buffer.from(bytes);
}

/**
 * Sends `count` trace Export calls of one gRPC frame at once on one session: their grpc-status codes, and how long
 * the last took. @param {number} count @param {Buffer} frame @param {Record<string, string>} [headers]
 */
async function grpcFlood(count, frame, headers = {}) {
  const session = http2.connect(c.urls.grpc);
  session.on('error', () => {});
  const call = () =>
    new Promise((resolve) => {
      const stream = session.request({ ':method': 'POST', ':path': TRACES, 'content-type': 'application/grpc', te: 'trailers', ...headers });
      /** @type {Record<string, unknown>} */
      let status = {};
      stream.on('response', (h) => (status = { ...status, ...h }));
      stream.on('trailers', (t) => (status = { ...status, ...t }));
      stream.on('error', () => {});
      stream.resume();
      stream.on('close', () => resolve(Number(status['grpc-status'])));
      stream.end(frame);
    });
  try {
    return await flood(count, call).all;
  } finally {
    session.close();
  }
}
