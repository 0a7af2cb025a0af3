// OTAP streams as wholes, through the Go client on otel-arrow's producer: the grouped request list shows each stream
// once among the other requests with its batches' totals, a stream's batches page on their own, and each stream says
// whether it is open and how it ended (half-close, cancel, a reset fault, a server error, the idle timeout, shutdown).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { startTestCollector } from '../helpers/collector.js';
import { otapClient, otapSkip as skip } from '../helpers/otap-client.js';
import { waitFor } from '../helpers/wait.js';
import { postJson } from '../helpers/ui-data.js';

const send = otapClient();
/** @type {Awaited<ReturnType<typeof startTestCollector>>} */
let mock;
before(async () => {
  if (!skip) mock = await startTestCollector({ maxRequestBytes: 256 * 1024, idleTimeoutMs: 300 });
});
after(() => mock?.stop());

/** @param {Awaited<ReturnType<typeof startTestCollector>>} collector @param {string} [query] */
const grouped = (collector, query = '') => collector.api(`/api/requests?group=streams&limit=100000${query}`);
/** @param {any} row */
const streamOf = (row) => ('stream' in row ? row.stream : null);

/** Every batch of a stream, paged by its cursor as a client would. @param {number} id @param {number} limit */
async function batchesOf(id, limit) {
  const all = [];
  let cursor = '';
  for (;;) {
    const page = await mock.api(`/api/requests?stream=${id}&limit=${limit}${cursor && `&cursor=${cursor}`}`);
    all.push(...page.requests);
    if (!page.nextCursor) return { all, total: page.total };
    cursor = page.nextCursor;
  }
}

test('several streams of many batches are one row each among the other requests, with exact totals and their batches paged', { skip }, async () => {
  await mock.clear();
  await send(mock, ['-signal', 'traces', '-batches', '120', '-size', '10', '-streams', '3']);
  await postJson(mock.urls.http, 'logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'between' } }] }] }] });
  await send(mock, ['-signal', 'logs', '-batches', '80', '-size', '5', '-streams', '2']);

  const { requests, total } = await grouped(mock);
  assert.equal(total, 6);
  assert.deepEqual(
    requests.map((/** @type {any} */ r) => streamOf(r)?.signal ?? r.transport),
    ['logs', 'logs', 'http', 'traces', 'traces', 'traces'],
  );
  const streams = requests.map(streamOf).filter(Boolean);
  for (const s of streams) {
    const n = s.signal === 'traces' ? 120 : 80;
    assert.deepEqual(
      { state: s.state, cause: s.end.cause, status: s.end.status, batches: s.batches, kept: s.kept, items: s.items, statuses: s.statuses, method: s.method },
      {
        state: 'closed',
        cause: 'half-close',
        status: 0,
        batches: n,
        kept: n,
        items: n * (s.signal === 'traces' ? 10 : 5),
        statuses: { 0: n },
        method: s.signal === 'traces' ? 'ArrowTracesService/ArrowTraces' : 'ArrowLogsService/ArrowLogs',
      },
    );
    assert.match(s.peer, /^127\.0\.0\.1:\d+$/);
    assert.match(s.userAgent, /grpc-go/);
    assert.ok(Date.parse(s.closedAt) >= Date.parse(s.openedAt));
  }
  // Totals still cover everything when the list is not grouped.
  assert.equal((await mock.api('/api/requests?limit=1')).total, 3 * 120 + 2 * 80 + 1);

  const first = streams.find((/** @type {any} */ s) => s.signal === 'traces');
  const { all, total: batchTotal } = await batchesOf(first.id, 50);
  assert.equal(batchTotal, 120);
  assert.deepEqual(
    all.map((/** @type {any} */ b) => Number(b.otap.batch)).sort((a, b) => a - b),
    Array.from({ length: 120 }, (_, i) => i),
  );
  assert.ok(all.every((/** @type {any} */ b) => b.otap.stream === first.id && b.transport === 'otap'));
  assert.equal(
    all.reduce((/** @type {number} */ n, /** @type {any} */ b) => n + b.bytes, 0),
    first.bytes,
  );
  assert.deepEqual(await mock.api(`/api/requests/streams/${first.id}`), first);
  assert.deepEqual(
    (await grouped(mock, '&transport=otap&signal=logs')).requests.map(streamOf).map((/** @type {any} */ s) => s.signal),
    ['logs', 'logs'],
  );
});

test('a stream is open while its client holds it, then closed by its half-close', { skip }, async () => {
  await mock.clear();
  const sending = send(mock, ['-signal', 'metrics', '-batches', '30', '-size', '4', '-linger', '1500ms']);
  const open = await waitFor(async () => {
    const s = streamOf((await grouped(mock)).requests[0] ?? {});
    return s?.batches === 30 ? s : null;
  });
  assert.deepEqual([open.state, open.end, open.closedAt], ['open', null, null]);
  assert.equal((await mock.api('/api/stats')).requests.otapStreams.open, 1);
  await sending;
  const closed = await waitFor(async () => {
    const s = await mock.api(`/api/requests/streams/${open.id}`);
    return s.state === 'closed' ? s : null;
  });
  assert.deepEqual(closed.end, { cause: 'half-close', status: 0, message: '' });
  assert.ok(closed.durationMs >= 1400, `open for ${closed.durationMs} ms`);
});

test('a stream the client cancels says cancel', { skip }, async () => {
  await mock.clear();
  await send(mock, ['-signal', 'logs', '-batches', '5', '-size', '3', '-end', 'cancel']);
  const s = await waitFor(async () => {
    const row = streamOf((await grouped(mock)).requests[0] ?? {});
    return row?.state === 'closed' ? row : null;
  });
  assert.equal(s.end.cause, 'cancel');
  assert.equal(s.end.status, null);
  assert.equal(s.batches, 5);
});

test('a reset fault ends the stream and says so; the batches before it are counted', { skip }, async () => {
  await mock.clear();
  const rule = await mock.api('/api/faults', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'reset', transports: ['otap'], after: 2, times: 1 }),
  });
  try {
    const { summary } = await send(mock, ['-signal', 'traces', '-batches', '6', '-size', '5']);
    assert.equal(summary.statuses, 2);
    const s = await waitFor(async () => {
      const row = streamOf((await grouped(mock)).requests[0] ?? {});
      return row?.state === 'closed' ? row : null;
    });
    assert.deepEqual(s.end, { cause: 'reset', status: null, message: `fault rule ${rule.id} reset the stream` });
    assert.deepEqual([s.batches, s.statuses, s.unanswered], [3, { 0: 2 }, 1]);
  } finally {
    await mock.api('/api/faults', { method: 'DELETE' });
  }
});

test('a stream the server ends with a status of its own says error, with the status', { skip }, async () => {
  await mock.clear();
  const { summary } = await send(mock, ['-signal', 'logs', '-batches', '3', '-size', '20000']);
  assert.match(summary.error, /ResourceExhausted/);
  const s = await waitFor(async () => {
    const row = streamOf((await grouped(mock)).requests[0] ?? {});
    return row?.state === 'closed' ? row : null;
  });
  assert.equal(s.end.cause, 'error');
  assert.equal(s.end.status, 8);
  assert.match(s.end.message, /larger than max/);
});

test('a stream whose message stalls half-received past the idle timeout says idle', { skip }, async () => {
  await mock.clear();
  const session = http2.connect(mock.urls.grpc);
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/opentelemetry.proto.experimental.arrow.v1.ArrowLogsService/ArrowLogs',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    stream.write(Buffer.from([0, 0, 0, 0, 100, 1, 2]));
    const s = await waitFor(async () => {
      const row = streamOf((await grouped(mock)).requests[0] ?? {});
      return row?.state === 'closed' ? row : null;
    });
    assert.equal(s.end.cause, 'idle');
    assert.equal(s.batches, 0);
  } finally {
    session.destroy();
  }
});

test('a stream open when the server stops says shutdown', { skip }, async () => {
  const stopping = await startTestCollector();
  const sending = send(stopping, ['-signal', 'traces', '-batches', '2', '-size', '3', '-linger', '30s']).catch(() => null);
  const open = await waitFor(async () => {
    const s = streamOf((await grouped(stopping)).requests[0] ?? {});
    return s?.batches === 2 ? s : null;
  });
  await stopping.stop();
  const record = await waitFor(async () => stopping.journal.streams.get(open.id)?.end ?? null);
  assert.equal(record.cause, 'shutdown');
  await sending;
});
