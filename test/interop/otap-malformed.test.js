// OTAP streams with broken input, hand-built: each bad batch gets a clear status and the stream goes on; a message
// over the size limit ends its stream; a client that never reads its statuses holds only itself up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import {
  tableFromArrays,
  tableToIPC,
  Dictionary,
  Utf8,
  Int32,
  Table,
  vectorFromArray,
  Schema,
  Struct,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
} from 'apache-arrow';
import { startTestCollector } from '../helpers/collector.js';
import { batch, statusOf, rleBomb, zstdIpc, rawZstd } from '../helpers/otap-payloads.js';
import { ArrowState, ArrowError, Inflation } from '../../server/otap/arrow.js';

const LOGS_PATH = '/opentelemetry.proto.experimental.arrow.v1.ArrowLogsService/ArrowLogs';
const LOGS = 30;
const SPANS = 40;

/** A LOGS table as an Arrow IPC stream: a schema message, then a record batch. */
const logsIpc = tableToIPC(tableFromArrays({ severity_text: ['first', 'second'] }), 'stream');
/** The bytes after the schema message (8 bytes of prefix and its metadata): a record batch of a schema never sent. */
const withoutSchema = logsIpc.subarray(8 + new DataView(logsIpc.buffer, logsIpc.byteOffset).getInt32(4, true));

/** @type {Awaited<ReturnType<typeof startTestCollector>>} */
let mock;
before(async () => {
  mock = await startTestCollector({ maxRequestBytes: 64 * 1024 });
});
after(() => mock.stop());

/**
 * Sends the messages on one ArrowLogs stream, reading statuses as they come; resolves with them and how the stream ended.
 * @param {Buffer[]} messages @param {Awaited<ReturnType<typeof startTestCollector>>} [collector]
 * @param {number} [pauseMs] a wait between messages
 */
function exchange(messages, collector = mock, pauseMs = 0) {
  const client = new grpc.Client(new URL(collector.urls.grpc).host, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    LOGS_PATH,
    (/** @type {Buffer} */ b) => b,
    (/** @type {Buffer} */ b) => b,
  );
  /** @type {{ batch: number, code: number, message: string }[]} */
  const statuses = [];
  return new Promise((resolve) => {
    call.on('data', (/** @type {Buffer} */ b) => statuses.push(statusOf(b)));
    call.on('error', (/** @type {any} */ err) => {
      client.close();
      resolve({ statuses, code: err.code, details: err.details });
    });
    call.on('end', () => {
      client.close();
      resolve({ statuses, code: 0, details: '' });
    });
    (async () => {
      for (const m of messages) {
        call.write(m);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
      call.end();
    })();
  });
}

test('OTAP: bad IPC bytes, an unknown payload type, a schema never defined and a bad message each get INVALID_ARGUMENT; the stream goes on', async () => {
  await mock.clear();
  const result = await exchange([
    batch(1, [{ schemaId: 'a', type: LOGS, record: Buffer.from('not an arrow stream at all') }]),
    batch(2, [{ schemaId: 'b', type: 77, record: logsIpc }]),
    batch(3, [{ schemaId: 'c', type: SPANS, record: logsIpc }]),
    batch(4, [{ schemaId: 'd', type: LOGS, record: withoutSchema }]),
    Buffer.from([0x12, 0x05, 0x01]),
    batch(6, [{ schemaId: 'e', type: LOGS, record: logsIpc }]),
  ]);
  assert.equal(result.code, 0, result.details);
  assert.deepEqual(
    result.statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
    [
      [1, 3],
      [2, 3],
      [3, 3],
      [4, 3],
      [0, 3],
      [6, 0],
    ],
  );
  assert.match(result.statuses[1].message, /payload type 77/);
  assert.match(result.statuses[2].message, /payload type SPANS has no place in a stream of logs/);
  assert.match(result.statuses[3].message, /schema/i);
  const { logs } = await mock.api('/api/logs');
  assert.deepEqual(logs.map((/** @type {any} */ l) => l.severityText).sort(), ['first', 'second']);
  const { requests } = await mock.api('/api/requests?limit=10');
  assert.equal(requests.filter((/** @type {any} */ r) => r.transport === 'otap' && r.outcome === 'rejected').length, 5);
});

test("OTAP: a stream's connection gets the wider stream window once a batch is answered OK, not for a refused one", async () => {
  const session = http2.connect(mock.urls.grpc);
  try {
    const stream = session.request({ ':method': 'POST', ':path': LOGS_PATH, 'content-type': 'application/grpc', te: 'trailers' });
    /** @type {Buffer[]} */
    const got = [];
    /** @type {(() => void)|null} */
    let onStatus = null;
    stream.on('data', (/** @type {Buffer} */ b) => {
      got.push(b);
      onStatus?.();
    });
    /** @param {Buffer} message */
    const send = (message) =>
      new Promise((resolve) => {
        const before = got.length;
        onStatus = () => got.length > before && resolve(statusOf(got[got.length - 1].subarray(5)));
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(message.length, 1);
        stream.write(Buffer.concat([prefix, message]));
      });
    assert.equal(/** @type {any} */ (await send(batch(1, [{ schemaId: 'a', type: LOGS, record: Buffer.from('not arrow') }]))).code, 3);
    await new Promise((resolve) => session.ping(resolve));
    assert.equal(session.remoteSettings.initialWindowSize, 65_535);
    assert.equal(/** @type {any} */ (await send(batch(2, [{ schemaId: 'b', type: LOGS, record: logsIpc }]))).code, 0);
    await new Promise((resolve) => session.ping(resolve));
    assert.equal(session.remoteSettings.initialWindowSize, 128 * 1024);
    const closed = new Promise((resolve) => stream.on('close', resolve));
    stream.end();
    await closed;
  } finally {
    session.close();
  }
});

test('OTAP: a message over --max-request-bytes ends its stream with RESOURCE_EXHAUSTED; other streams are unaffected', async () => {
  await mock.clear();
  const [big, small] = await Promise.all([
    exchange([batch(1, [{ schemaId: 'a', type: LOGS, record: Buffer.alloc(100 * 1024, 1) }])]),
    exchange([batch(1, [{ schemaId: 'a', type: LOGS, record: logsIpc }])]),
  ]);
  assert.equal(big.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(big.details, /larger than max/);
  assert.deepEqual(
    small.statuses.map((/** @type {any} */ s) => s.code),
    [0],
  );
  assert.equal(small.code, 0);
});

test('OTAP: a client that sends without reading statuses holds only its own stream up', async () => {
  await mock.clear();
  const client = new grpc.Client(new URL(mock.urls.grpc).host, grpc.credentials.createInsecure());
  const stuck = client.makeBidiStreamRequest(
    LOGS_PATH,
    (/** @type {Buffer} */ b) => b,
    (/** @type {Buffer} */ b) => b,
  );
  stuck.on('error', () => {});
  stuck.pause();
  for (let i = 0; i < 2000; i++) stuck.write(batch(i, [{ schemaId: 'a', type: LOGS, record: i === 0 ? logsIpc : withoutSchema }]));
  const other = await exchange([batch(1, [{ schemaId: 'a', type: LOGS, record: logsIpc }])]);
  assert.deepEqual(
    other.statuses.map((/** @type {any} */ s) => s.code),
    [0],
  );
  stuck.cancel();
  client.close();
});

test('OTAP: a stream may wait between batches longer than the idle timeout, which is for a message half-received', async () => {
  const idle = await startTestCollector({ idleTimeoutMs: 300 });
  try {
    const result = await exchange(
      [batch(1, [{ schemaId: 'a', type: LOGS, record: logsIpc }]), batch(2, [{ schemaId: 'a', type: LOGS, record: withoutSchema }])],
      idle,
      800,
    );
    assert.equal(result.code, 0, result.details);
    assert.deepEqual(
      result.statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
      [
        [1, 0],
        [2, 0],
      ],
    );
  } finally {
    await idle.stop();
  }
});

test('OTAP: a schema_id whose dictionaries pass the limit is refused and forgotten', async () => {
  const inflation = () => new Inflation(64 * 1024, () => false);
  const state = new ArrowState({ maxDictionaryValues: 1 });
  await assert.rejects(
    state.read({ schemaId: 'a', type: LOGS, record: logsIpc }, inflation()),
    (err) => err instanceof ArrowError && /dictionaries of more than 1 values/.test(err.message),
  );
  assert.equal(state.streams.size, 0);
  assert.equal((await new ArrowState({ maxDictionaryValues: 2 }).read({ schemaId: 'a', type: LOGS, record: logsIpc }, inflation())).numRows, 2);
});

test('OTAP: a zstd buffer that expands past its declared length is refused at it (RESOURCE_EXHAUSTED); the stream and the store go on', async () => {
  await mock.clear();
  const good = zstdIpc({ severity_text: ['kept'] }, rawZstd);
  // 48 KB of frame that decodes to 384 MB, in a buffer declared as 50,000 bytes
  const bomb = zstdIpc({ severity_text: ['x'.repeat(50_000)] }, (b) => (b.length >= 50_000 ? rleBomb(12_000, 15) : rawZstd(b)));
  assert.ok(bomb.length < 64 * 1024, `the message (${bomb.length} bytes) fits the limit: what is refused is its decoding`);
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  const result = await exchange([
    batch(1, [{ schemaId: 'a', type: LOGS, record: good }]),
    batch(2, [{ schemaId: 'b', type: LOGS, record: bomb }]),
    batch(3, [{ schemaId: 'c', type: LOGS, record: good }]),
  ]);
  const elapsed = performance.now() - started;
  assert.equal(result.code, 0, result.details);
  assert.deepEqual(
    result.statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
    [
      [1, 0],
      [2, grpc.status.RESOURCE_EXHAUSTED],
      [3, 0],
    ],
  );
  assert.match(result.statuses[1].message, /decodes to more than the 50000 bytes it declares/);
  assert.ok(elapsed < 3000, `answered in ${elapsed.toFixed(0)} ms`);
  assert.ok(process.memoryUsage().rss - rss < 128 * 1024 * 1024, 'the test process grew little: the collector did not decode the frame whole');
  const { logs } = await mock.api('/api/logs');
  assert.deepEqual(
    logs.map((/** @type {any} */ l) => l.severityText),
    ['kept', 'kept'],
  );
});

test('OTAP: a batch whose OTLP form would pass --max-request-bytes (one dictionary value on every row) is refused with RESOURCE_EXHAUSTED', async () => {
  await mock.clear();
  const value = 'v'.repeat(1000);
  const severity = vectorFromArray(
    Array.from({ length: 100 }, () => value),
    new Dictionary(new Utf8(), new Int32()),
  );
  const record = tableToIPC(new Table({ severity_text: severity }), 'stream');
  assert.ok(record.length < 4096, `${record.length} bytes of Arrow`);
  const result = await exchange([batch(1, [{ schemaId: 'a', type: LOGS, record }]), batch(2, [{ schemaId: 'b', type: LOGS, record: logsIpc }])]);
  assert.deepEqual(
    result.statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
    [
      [1, grpc.status.RESOURCE_EXHAUSTED],
      [2, 0],
    ],
  );
  assert.match(result.statuses[0].message, /OTLP form passes the limit of 65536 bytes \(--max-request-bytes\)/);
});

test('OTAP: a batch of more log records than the store keeps is refused with RESOURCE_EXHAUSTED before its request is written; the stream goes on', async () => {
  const small = await startTestCollector({ maxLogs: 1000 });
  try {
    const rows = (/** @type {number} */ n) => tableToIPC(tableFromArrays({ severity_text: Array.from({ length: n }, () => 'x') }), 'stream');
    // A billion empty log records in 173 bytes: a record batch of no columns. Written out, they would pass 2 GB.
    const empty = new RecordBatch(new Schema([]), makeData({ type: new Struct([]), length: 1e9, children: [] }));
    const writer = new RecordBatchStreamWriter();
    writer.write(empty);
    writer.finish();
    const started = performance.now();
    const result = await exchange(
      [
        batch(1, [{ schemaId: 'a', type: LOGS, record: rows(1001) }]),
        batch(2, [{ schemaId: 'b', type: LOGS, record: writer.toUint8Array(true) }]),
        batch(3, [{ schemaId: 'a', type: LOGS, record: rows(1000) }]),
      ],
      small,
    );
    const ms = performance.now() - started;
    assert.deepEqual(
      result.statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
      [
        [1, grpc.status.RESOURCE_EXHAUSTED],
        [2, grpc.status.RESOURCE_EXHAUSTED],
        [3, 0],
      ],
    );
    assert.equal(result.statuses[0].message, 'request holds more log records than the 1000 the store keeps; send smaller batches or raise --max-logs');
    assert.ok(ms < 2000, `answered in ${ms.toFixed(0)} ms`);
    assert.equal((await small.api('/api/logs?limit=1')).total, 1000);
  } finally {
    await small.stop();
  }
});

test('OTAP: batches refused for their compressed buffers are answered at the pace of refused compressed bodies', async () => {
  await mock.clear();
  const bomb = zstdIpc({ severity_text: ['x'.repeat(50_000)] }, (b) => (b.length >= 50_000 ? rleBomb(12_000, 15) : rawZstd(b)));
  const count = 45;
  const started = performance.now();
  const result = await exchange(Array.from({ length: count }, (_, i) => batch(i + 1, [{ schemaId: `s${i}`, type: LOGS, record: bomb }])));
  const elapsed = performance.now() - started;
  assert.equal(result.code, 0, result.details);
  assert.deepEqual(
    result.statuses.map((/** @type {any} */ s) => s.code),
    Array.from({ length: count }, () => grpc.status.RESOURCE_EXHAUSTED),
  );
  // 20 a second once a burst of 20 is spent (server/transport/pace.js), over both OTLP ports
  const paced = ((count - 20) * 1000) / 20;
  assert.ok(elapsed >= paced * 0.9, `${count} refusals answered in ${elapsed.toFixed(0)} ms, under the ${paced} ms their pace takes`);
});
