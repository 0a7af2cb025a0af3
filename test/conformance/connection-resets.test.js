// A client can vanish at any moment: before its request is whole, while it is answered, after. Connections on
// every port are reset (TCP RST) at random points, unread, and the in-process collector must stay up (an unhandled
// 'error' would end this test run), keep what it stored, and go on serving every port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http2 from 'node:http2';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { sampleRequest, encodePb, GRPC_SERVICE } from '../helpers/payloads.js';
import { rawGrpcClient } from '../helpers/grpc.js';
import { upgradeRequest } from '../helpers/raw-http.js';
import { seededRandom } from '../helpers/random.js';

const TOKEN = 'reset-secret';
const ROUNDS = 1500;
const CONCURRENCY = 24;
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const EXPORT_PATH = `/${GRPC_SERVICE.traces}/Export`;

/**
 * Writes `bytes`, never reads, and resets the socket after `delayMs`.
 * @param {number} port @param {string|Buffer} bytes @param {number} delayMs
 */
function writeAndReset(port, bytes, delayMs) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      setTimeout(() => socket.resetAndDestroy(), delayMs);
    });
    socket.pause();
    socket.on('error', () => {});
    socket.on('close', resolve);
  });
}

/**
 * Opens an HTTP/2 stream on `path`, sends part or all of a gRPC message, and resets the connection after `delayMs`.
 * @param {number} port @param {string} path @param {Buffer} message @param {boolean} whole @param {number} delayMs
 */
function grpcAndReset(port, path, message, whole, delayMs) {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    session.on('close', resolve);
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => {});
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(message.length, 1);
    const framed = Buffer.concat([prefix, message]);
    if (whole) stream.end(framed);
    else stream.write(framed.subarray(0, Math.max(1, framed.length >> 1)));
    setTimeout(() => {
      const socket = /** @type {net.Socket|undefined} */ (session.socket);
      if (socket && !socket.destroyed) socket.resetAndDestroy();
      session.destroy();
    }, delayMs);
  });
}

test('connections reset at any moment on every port leave the process up, the store intact and every port serving', async () => {
  const c = await startTestCollector({ adminToken: TOKEN });
  try {
    const ports = { ui: Number(new URL(c.urls.ui).port), http: Number(new URL(c.urls.http).port), grpc: Number(new URL(c.urls.grpc).port) };
    const json = JSON.stringify(sampleRequest('traces', { service: 'kept' }));
    const pb = Buffer.from(encodePb('traces', sampleRequest('traces', { service: 'kept-pb', spanId: '00000000000000b1' })));
    assert.equal((await postOtlp(c.urls.http, '/v1/traces', json, 'application/json')).status, 200);
    const stored = () => c.store.stats().traces.stored;
    assert.equal(stored(), 1);

    const uiHost = `Host: 127.0.0.1:${ports.ui}\r\n`;
    const auth = `Authorization: Bearer ${TOKEN}\r\n`;
    /** @type {((delayMs: number) => Promise<unknown>)[]} */
    const attempts = [
      (d) => writeAndReset(ports.ui, 'GET /api/spans HTTP/1.1\r\nHost: 127.', d),
      (d) => writeAndReset(ports.ui, `GET /api/spans HTTP/1.1\r\n${uiHost}${auth}\r\n`, d),
      (d) => writeAndReset(ports.ui, `GET / HTTP/1.1\r\n${uiHost}\r\n`, d),
      (d) => writeAndReset(ports.ui, `POST /api/import HTTP/1.1\r\n${uiHost}${auth}Content-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n{"resource`, d),
      (d) => writeAndReset(ports.ui, upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${ports.ui}` }), d),
      (d) => writeAndReset(ports.ui, upgradeRequest('/api/live', { Host: `127.0.0.1:${ports.ui}` }), d),
      (d) => writeAndReset(ports.ui, `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${uiHost}\r\n`, d),
      (d) => writeAndReset(ports.ui, 'NOT HTTP\r\n\r\n', d),
      (d) => writeAndReset(ports.http, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"resourceSpans"', d),
      (d) => writeAndReset(ports.http, `POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`, d),
      (d) => writeAndReset(ports.http, upgradeRequest('/v1/traces', { Host: 'x' }), d),
      (d) => writeAndReset(ports.http, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n', d),
      (d) => writeAndReset(ports.http, 'POST /v1/traces HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', d),
      (d) => writeAndReset(ports.grpc, PREFACE, d),
      (d) => writeAndReset(ports.grpc, `${PREFACE}\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03`, d),
      (d) => writeAndReset(ports.grpc, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', d),
      (d) => grpcAndReset(ports.grpc, EXPORT_PATH, pb, false, d),
      (d) => grpcAndReset(ports.grpc, EXPORT_PATH, Buffer.from('not protobuf'), true, d),
      (d) => grpcAndReset(ports.grpc, '/no.Such/Method', pb, true, d),
    ];
    const rng = seededRandom(22);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < ROUNDS) await attempts[Math.floor(rng() * attempts.length)](Math.floor(rng() * 4));
      }),
    );

    // Resets may have come after a whole request was read: those are stored too, and nothing stored was lost.
    assert.ok(stored() >= 1);
    const kept = (await c.api('/api/spans?service=kept', { headers: { authorization: `Bearer ${TOKEN}` } })).spans;
    assert.ok(kept.length >= 1);
    assert.equal((await postOtlp(c.urls.http, '/v1/traces', json, 'application/json')).status, 200);
    const client = rawGrpcClient(c.urls.grpc);
    try {
      const { error } = await client.exportRaw(GRPC_SERVICE.traces, pb);
      assert.equal(error, null);
    } finally {
      client.close();
    }
    assert.equal((await c.api('/api/health')).status, 'ok');
  } finally {
    await c.stop();
  }
});
