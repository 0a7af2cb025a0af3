// gRPC framing, written frame by frame with Node's HTTP/2 client: messages missing, doubled, truncated, split,
// oversized or wrongly compressed, bad call headers. Each gets its gRPC status and a journal entry, and a good
// call on the same connection still works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { readFileSync } from 'node:fs';
import { compressSync as snappyCompress } from 'snappy';
import { startTestCollector } from '../helpers/collector.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';
import { decodeProto } from '../../server/otlp/items.js';
import { SIGNALS } from '../../server/otlp/signals.js';

const LIMIT = 1024 * 1024;
const TRACES = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {http2.ClientHttp2Session} */
let session;

before(async () => {
  collector = await startTestCollector({ maxRequestBytes: LIMIT });
  session = http2.connect(collector.urls.grpc);
});

after(async () => {
  session?.close();
  await collector?.stop();
});

/** The 5-byte prefix of a gRPC message. @param {number} length @param {boolean} [compressed] */
function prefix(length, compressed = false) {
  const p = Buffer.alloc(5);
  p[0] = compressed ? 1 : 0;
  p.writeUInt32BE(length, 1);
  return p;
}

/** @param {Uint8Array} message @param {boolean} [compressed] */
const framed = (message, compressed = false) => Buffer.concat([prefix(message.length, compressed), message]);

/** @param {string} service */
const traces = (service) => encodePb('traces', sampleRequest('traces', { service }));

/**
 * One call: `chunks` are written one by one (each its own DATA frame), then the stream ends unless `end` is false.
 * @param {Buffer[]} chunks @param {{ headers?: Record<string, string>, end?: boolean, path?: string }} [options]
 */
function call(chunks, { headers = {}, end = true, path = TRACES } = {}) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    /** @type {http2.IncomingHttpHeaders} */
    let head = {};
    /** @type {Buffer[]} */
    const data = [];
    stream.on('response', (h) => (head = h));
    stream.on('data', (c) => data.push(c));
    /** @type {http2.IncomingHttpHeaders} */
    let trailers = {};
    stream.on('trailers', (t) => (trailers = t));
    stream.on('error', reject);
    stream.on('close', () => {
      // Trailers-only answers carry the status in the headers.
      const status = { ...head, ...trailers };
      resolve({
        httpStatus: head[':status'],
        code: status['grpc-status'] === undefined ? undefined : Number(status['grpc-status']),
        message: decodeURIComponent(String(status['grpc-message'] ?? '')),
        headers: head,
        body: Buffer.concat(data),
        rstCode: stream.rstCode,
      });
    });
    for (const chunk of chunks) stream.write(chunk);
    if (end) stream.end();
  });
}

/** @returns {Promise<any>} */
async function lastEntry() {
  const { requests } = await collector.api('/api/requests?transport=grpc&order=desc&limit=1');
  return requests[0];
}

test('a message whose prefix and body arrive in many small DATA frames is whole', async () => {
  const message = traces('framing-split');
  const bytes = framed(message);
  const chunks = [
    bytes.subarray(0, 1),
    bytes.subarray(1, 3),
    bytes.subarray(3, 7),
    ...Array.from({ length: Math.ceil((bytes.length - 7) / 9) }, (_, i) => bytes.subarray(7 + i * 9, 7 + (i + 1) * 9)),
  ];
  const r = /** @type {any} */ (await call(chunks));
  assert.deepEqual([r.httpStatus, r.code, r.headers['content-type']], [200, 0, 'application/grpc+proto']);
  assert.equal(r.body.length, 5, 'an empty ExportTraceServiceResponse in its frame');
  assert.equal((await collector.api('/api/spans?service=framing-split')).total, 1);
  const entry = await lastEntry();
  assert.deepEqual([entry.outcome, entry.response.status, entry.bytes], ['accepted', 0, message.length]);
});

test('a call that ends without a message is UNIMPLEMENTED, and journaled', async () => {
  const r = /** @type {any} */ (await call([]));
  assert.equal(r.code, 12);
  assert.match(r.message, /no request message/);
  const entry = await lastEntry();
  assert.deepEqual([entry.outcome, entry.response.status], ['rejected', 12]);
});

test('two messages on a unary call are UNIMPLEMENTED and nothing is stored', async () => {
  const r = /** @type {any} */ (await call([framed(traces('framing-two')), framed(traces('framing-two'))]));
  assert.equal(r.code, 12);
  assert.match(r.message, /second request message/);
  assert.equal((await collector.api('/api/spans?service=framing-two')).total, 0);
});

test('a message cut short by the end of the stream is INTERNAL, naming how much arrived', async () => {
  const message = traces('framing-truncated');
  for (const chunks of [[prefix(message.length), Buffer.from(message.subarray(0, 10))], [Buffer.from([0, 0, 0])]]) {
    const r = /** @type {any} */ (await call(chunks));
    assert.equal(r.code, 13);
    assert.match(r.message, /ends after \d+ of its \d+ bytes/);
  }
  assert.equal((await collector.api('/api/spans?service=framing-truncated')).total, 0);
});

test('a length prefix over the limit is refused at once, before the body is sent', async () => {
  const r = /** @type {any} */ (await call([prefix(LIMIT + 1)], { end: false }));
  assert.equal(r.code, 8);
  assert.equal(r.message, `Received message larger than max (${LIMIT + 1} vs. ${LIMIT})`);
  // told to stop sending after the answer, not left open until the server's idle timeout cancels it
  assert.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  const entry = await lastEntry();
  assert.deepEqual([entry.outcome, entry.response.status], ['rejected', 8]);
});

test('compression that does not add up is refused with what was wrong', async () => {
  const message = traces('framing-compressed');
  const cases = [
    { chunks: [framed(zlib.gzipSync(message), true)], headers: {}, code: 13, text: /flagged compressed but the call has no grpc-encoding/ },
    { chunks: [framed(message, true)], headers: { 'grpc-encoding': 'br' }, code: 12, text: /unsupported encoding "br"/ },
    { chunks: [framed(message, true)], headers: { 'grpc-encoding': 'zstd' }, code: 13, text: /Failed to decompress message: .*zstd/ },
    { chunks: [framed(Buffer.from('not gzip at all'), true)], headers: { 'grpc-encoding': 'gzip' }, code: 13, text: /Failed to decompress message/ },
    { chunks: [framed(zlib.gzipSync(Buffer.alloc(LIMIT + 10)), true)], headers: { 'grpc-encoding': 'gzip' }, code: 8, text: /decompresses to a size larger than/ },
  ];
  for (const c of cases) {
    const r = /** @type {any} */ (await call(c.chunks, { headers: /** @type {Record<string, string>} */ (c.headers) }));
    assert.equal(r.code, c.code, r.message);
    assert.match(r.message, c.text);
  }
  assert.equal((await collector.api('/api/spans?service=framing-compressed')).total, 0);
  // grpc-encoding names how a message flagged compressed is compressed; an uncompressed one is read as it is.
  const plain = /** @type {any} */ (await call([framed(traces('framing-uncompressed'))], { headers: { 'grpc-encoding': 'br' } }));
  assert.equal(plain.code, 0);
  const gzipped = /** @type {any} */ (await call([framed(zlib.gzipSync(traces('framing-gzip')), true)], { headers: { 'grpc-encoding': 'gzip' } }));
  assert.equal(gzipped.code, 0);
  assert.equal((await collector.api('/api/spans?service=framing-gzip')).total, 1);
});

test("zstd and snappy messages, as the Collector's gRPC exporters send them, are decoded and stored", async () => {
  // The zstd frame of fixtures/traces.pb made by the reference zstd tool (fixtures/compressed/generate.sh).
  const zstd = readFileSync(new URL('../../fixtures/compressed/traces.pb.zst', import.meta.url));
  const spans = decodeProto(SIGNALS.traces, readFileSync(new URL('../../fixtures/traces.pb', import.meta.url))).resourceSpans.flatMap((/** @type {any} */ r) =>
    r.scopeSpans.flatMap((/** @type {any} */ s) => s.spans),
  ).length;
  const before = (await collector.api('/api/spans?limit=1')).total;
  const r = /** @type {any} */ (await call([framed(zstd, true)], { headers: { 'grpc-encoding': 'zstd' } }));
  assert.equal(r.code, 0, r.message);
  assert.equal((await collector.api('/api/spans?limit=1')).total, before + spans);
  const snappy = /** @type {any} */ (await call([framed(snappyCompress(traces('framing-snappy')), true)], { headers: { 'grpc-encoding': 'snappy' } }));
  assert.equal(snappy.code, 0, snappy.message);
  assert.equal((await collector.api('/api/spans?service=framing-snappy')).total, 1);
});

test('a malformed grpc-timeout is INTERNAL; a well-formed one is accepted', async () => {
  const bad = /** @type {any} */ (await call([framed(traces('framing-timeout'))], { headers: { 'grpc-timeout': 'soon' } }));
  assert.equal(bad.code, 13);
  assert.match(bad.message, /Invalid grpc-timeout value "soon"/);
  const good = /** @type {any} */ (await call([framed(traces('framing-timeout'))], { headers: { 'grpc-timeout': '5S' } }));
  assert.equal(good.code, 0);
  assert.equal((await collector.api('/api/spans?service=framing-timeout')).total, 1);
});

test('metadata reaches the journal and fault matching; binary metadata is journaled as base64', async () => {
  const rule = await collector.api('/api/faults', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'unavailable', match: { headers: { 'x-tenant': 'framing' } } }),
  });
  const faulted = /** @type {any} */ (
    await call([framed(traces('framing-md'))], { headers: { 'x-tenant': 'framing', 'trace-proto-bin': Buffer.from([1, 2, 3]).toString('base64') } })
  );
  assert.equal(faulted.code, 14);
  const entry = await lastEntry();
  assert.equal(entry.headers['x-tenant'], 'framing');
  assert.equal(entry.headers['trace-proto-bin'], 'AQID');
  assert.equal(entry.fault.id, rule.id);
  await collector.api(`/api/faults/${rule.id}`, { method: 'DELETE' });
});

test('other content types and unknown methods are answered by grpc-js, and the connection goes on', async () => {
  const wrongType = /** @type {any} */ (await call([framed(traces('framing-type'))], { headers: { 'content-type': 'application/json' } }));
  assert.equal(wrongType.httpStatus, 415);
  const unknown = /** @type {any} */ (await call([framed(traces('framing-type'))], { path: '/opentelemetry.proto.collector.trace.v1.TraceService/Nope' }));
  assert.equal(unknown.code, 12);
  assert.equal((await collector.api('/api/spans?service=framing-type')).total, 0);
  const ok = /** @type {any} */ (await call([framed(traces('framing-after'))]));
  assert.equal(ok.code, 0);
});

test('a stream may send 64 KiB before the server reads until a call on its connection is answered OK, then 128 KiB; a connection 8 MiB', async () => {
  const own = http2.connect(collector.urls.grpc);
  try {
    const settings = await new Promise((resolve) => own.once('remoteSettings', resolve));
    assert.equal(/** @type {any} */ (settings).initialWindowSize, 65_535);
    // The connection's window is raised by a WINDOW_UPDATE that follows the settings.
    const deadline = Date.now() + 5000;
    while (own.state.remoteWindowSize !== 8 * 1024 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(own.state.remoteWindowSize, 8 * 1024 * 1024);
    /** @param {string} service @param {number} nameLength */
    const send = async (service, nameLength) => {
      const message = encodePb('traces', sampleRequest('traces', { service, name: 'n'.repeat(nameLength) }));
      const stream = own.request({ ':method': 'POST', ':path': TRACES, 'content-type': 'application/grpc', te: 'trailers' });
      const code = new Promise((resolve, reject) => {
        stream.on('response', (h) => h['grpc-status'] !== undefined && resolve(Number(h['grpc-status'])));
        stream.on('trailers', (t) => resolve(Number(t['grpc-status'])));
        stream.on('error', reject);
      });
      stream.resume();
      stream.end(framed(message));
      return { code: await code, bytes: message.length };
    };
    // A refused call earns nothing.
    const refused = await send('window-refused', LIMIT);
    await new Promise((resolve) => own.ping(resolve));
    assert.deepEqual([refused.code, own.remoteSettings.initialWindowSize], [8, 65_535]);
    // A message larger than a stream's window is read as its client sends the rest; its OK answer widens the window.
    const first = await send('window-wide', 400_000);
    assert.ok(first.bytes > 3 * 128 * 1024 && first.bytes < LIMIT, `${first.bytes} bytes`);
    assert.equal(first.code, 0);
    const widened = Date.now() + 5000;
    while (own.remoteSettings.initialWindowSize !== 128 * 1024 && Date.now() < widened) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(own.remoteSettings.initialWindowSize, 128 * 1024);
    assert.equal((await send('window-wide', 400_000)).code, 0);
    assert.equal((await collector.api('/api/spans?service=window-wide')).total, 2);
    // Another connection starts narrow again.
    const other = http2.connect(collector.urls.grpc);
    try {
      assert.equal(/** @type {any} */ (await new Promise((resolve) => other.once('remoteSettings', resolve))).initialWindowSize, 65_535);
    } finally {
      other.close();
    }
  } finally {
    own.close();
  }
});
