// The journal's record of each OTAP stream and the request list grouped by stream: a stream is one row in the place
// it opened, its batches page on their own, totals are exact, and a record goes with its batches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Journal } from '../../server/store/journal.js';
import { listing } from '../../server/query/engine.js';
import { QueryError } from '../../server/query/params.js';
import { STREAM_END_CAUSES, streamView } from '../../server/store/otap-streams.js';

const META = { signal: 'logs', method: 'ArrowLogsService/ArrowLogs', path: '/p', peer: '127.0.0.1:1', userAgent: 'ua' };

/** @param {Journal} journal @param {Partial<import('../../server/store/journal.js').JournalEntry>} fields */
function record(journal, fields) {
  const id = journal.nextId();
  /** @type {import('../../server/store/journal.js').JournalEntry} */
  const entry = {
    id,
    time: new Date().toISOString(),
    transport: 'http',
    signal: 'logs',
    path: '/v1/logs',
    contentType: '',
    contentEncoding: '',
    bytes: 100,
    items: 2,
    services: ['svc'],
    userAgent: '',
    headers: {},
    fault: null,
    response: { status: 200, message: '' },
    outcome: 'accepted',
    durationMs: 1,
    ...fields,
  };
  journal.record(entry);
  return entry;
}

/** @param {Journal} journal @param {number} stream @param {number} batch @param {number} [status] */
const batch = (journal, stream, batch, status = 0) =>
  record(journal, {
    transport: 'otap',
    signal: journal.streams.get(stream)?.meta.signal,
    bytes: 1000,
    items: 10,
    response: { status, message: '' },
    outcome: status === 0 ? 'accepted' : 'rejected',
    otap: { stream, batch: String(batch) },
  });

/** @param {Journal} journal @param {Record<string, unknown>} query */
async function page(journal, query) {
  const l = listing('requests', query, { store: /** @type {any} */ (null), journal });
  const p = await l.page();
  return { total: p.total, rows: p.items.map(l.view), next: p.next };
}

/** A row's name: stream <id>, or the request's id. @param {any} row */
const nameOf = (row) => ('stream' in row ? `stream ${row.stream.id}` : row.id);

test('a stream is one row in the place it opened, among the other requests, with exact totals', async () => {
  const journal = new Journal();
  const before = record(journal, {});
  journal.openStream(1, META);
  const between = record(journal, { transport: 'grpc' });
  for (let b = 0; b < 50; b++) batch(journal, 1, b, b < 3 ? 3 : 0);
  journal.openStream(2, { ...META, signal: 'traces' });
  batch(journal, 2, 0);
  const after = record(journal, {});

  const { total, rows } = await page(journal, { group: 'streams' });
  assert.equal(total, 5);
  assert.deepEqual(rows.map(nameOf), [after.id, 'stream 2', between.id, 'stream 1', before.id]);
  const one = /** @type {any} */ (rows[3]);
  assert.equal(one.matched, 50);
  assert.deepEqual(
    { state: one.stream.state, batches: one.stream.batches, kept: one.stream.kept, items: one.stream.items, bytes: one.stream.bytes, statuses: one.stream.statuses },
    { state: 'open', batches: 50, kept: 50, items: 500, bytes: 50_000, statuses: { 0: 47, 3: 3 } },
  );

  // Without group the batches are rows, as before; stream=<id> pages one stream's.
  assert.equal((await page(journal, {})).total, 54);
  const batches = await page(journal, { stream: '1', limit: '20' });
  assert.equal(batches.total, 50);
  assert.equal(batches.rows.length, 20);
  assert.ok(batches.rows.every((/** @type {any} */ r) => r.otap.stream === 1));

  // The filters of a batch choose streams by their batches, and say how many of each matched.
  const rejected = await page(journal, { group: 'streams', outcome: 'rejected' });
  assert.deepEqual(
    rejected.rows.map((/** @type {any} */ r) => [nameOf(r), r.matched]),
    [['stream 1', 3]],
  );
  assert.deepEqual((await page(journal, { group: 'streams', signal: 'traces' })).rows.map(nameOf), ['stream 2']);
  assert.deepEqual((await page(journal, { group: 'streams', transport: 'grpc' })).rows.map(nameOf), [between.id]);
});

test('the grouped list pages with its cursor: every row once, in order', async () => {
  const journal = new Journal();
  for (let s = 1; s <= 5; s++) {
    journal.openStream(s, META);
    for (let b = 0; b < 7; b++) batch(journal, s, b);
    record(journal, {});
  }
  const whole = (await page(journal, { group: 'streams' })).rows.map(nameOf);
  assert.equal(whole.length, 10);
  const seen = [];
  let cursor;
  for (;;) {
    const l = listing('requests', { group: 'streams', limit: '3', ...(cursor && { cursor }) }, { store: /** @type {any} */ (null), journal });
    const p = await l.page();
    assert.equal(p.total, 10);
    seen.push(...p.items.map(l.view).map(nameOf));
    if (!p.next) break;
    cursor = Buffer.from(JSON.stringify(p.next)).toString('base64url');
  }
  assert.deepEqual(seen, whole);
});

test('a stream opened with no batch yet is a row; with a filter of batches it is not', async () => {
  const journal = new Journal();
  journal.openStream(1, META);
  assert.deepEqual((await page(journal, { group: 'streams' })).rows.map(nameOf), ['stream 1']);
  assert.deepEqual((await page(journal, { group: 'streams', transport: 'otap', signal: 'logs' })).rows.map(nameOf), ['stream 1']);
  assert.equal((await page(journal, { group: 'streams', outcome: 'accepted' })).total, 0);
  assert.equal((await page(journal, { group: 'streams', transport: 'http' })).total, 0);
});

test('a stream closes by each cause, and says when and how', () => {
  const journal = new Journal();
  STREAM_END_CAUSES.forEach((cause, i) => {
    journal.openStream(i + 1, META);
    batch(journal, i + 1, 0);
    journal.closeStream(i + 1, { cause, status: cause === 'error' ? 8 : null, message: cause });
  });
  const views = STREAM_END_CAUSES.map((_, i) => streamView(/** @type {any} */ (journal.streams.get(i + 1))));
  assert.deepEqual(
    views.map((v) => [v.state, v.end?.cause, v.end?.status]),
    STREAM_END_CAUSES.map((cause) => ['closed', cause, cause === 'error' ? 8 : null]),
  );
  assert.ok(views.every((v) => v.closedAt !== null && v.durationMs >= 0));
  // A second close (a late 'close' after the server's own end) keeps the first.
  journal.closeStream(1, { cause: 'cancel', status: null, message: '' });
  assert.equal(journal.streams.get(1)?.end?.cause, STREAM_END_CAUSES[0]);
});

test('a closed stream is evicted with its last batch; an open one stays; evictions are counted', async () => {
  const journal = new Journal({ maxRequests: 10 });
  journal.openStream(1, META);
  journal.openStream(2, META);
  for (let b = 0; b < 6; b++) batch(journal, 1, b);
  for (let b = 0; b < 4; b++) batch(journal, 2, b);
  journal.closeStream(1, { cause: 'half-close', status: 0, message: '' });
  for (let i = 0; i < 5; i++) record(journal, {});
  const one = /** @type {any} */ (journal.streams.get(1));
  assert.deepEqual([one.batches, one.kept], [6, 1]);
  record(journal, {});
  assert.equal(journal.streams.get(1), undefined);
  assert.equal(journal.streams.evicted, 1);
  for (let i = 0; i < 10; i++) record(journal, {});
  const two = /** @type {any} */ (journal.streams.get(2));
  assert.deepEqual([two.batches, two.kept, two.end], [4, 0, null]);
  assert.deepEqual((await page(journal, { group: 'streams' })).rows.map(nameOf).at(-1), 'stream 2');
  // Closed with nothing held, it goes once everything recorded before its end has gone.
  journal.closeStream(2, { cause: 'cancel', status: null, message: '' });
  for (let i = 0; i < 9; i++) record(journal, {});
  assert.ok(journal.streams.get(2));
  record(journal, {});
  assert.equal(journal.streams.get(2), undefined);
  assert.equal(journal.streams.evicted, 2);
});

test('streams that close with no batch are bounded by the journal size even when nothing is evicted', () => {
  const journal = new Journal({ maxRequests: 5 });
  for (let s = 1; s <= 20; s++) {
    journal.openStream(s, META);
    journal.closeStream(s, { cause: 'cancel', status: null, message: '' });
  }
  assert.equal(journal.streams.records.size, 5);
  assert.equal(journal.streams.evicted, 15);
  assert.deepEqual([...journal.streams.records.keys()], [16, 17, 18, 19, 20]);
});

test('a clearing keeps open streams, emptied, and forgets closed ones', async () => {
  const journal = new Journal();
  journal.openStream(1, META);
  journal.openStream(2, META);
  batch(journal, 1, 0);
  batch(journal, 2, 0);
  journal.closeStream(2, { cause: 'half-close', status: 0, message: '' });
  journal.clear();
  assert.deepEqual([...journal.streams.records.keys()], [1]);
  assert.deepEqual(
    (await page(journal, { group: 'streams' })).rows.map((/** @type {any} */ r) => [r.stream.id, r.stream.batches]),
    [[1, 0]],
  );
});

test('group and stream together, or a group that is not streams, are refused by name', () => {
  const journal = new Journal();
  const list = (/** @type {Record<string, unknown>} */ q) => listing('requests', q, { store: /** @type {any} */ (null), journal });
  assert.throws(
    () => list({ group: 'streams', stream: '1' }),
    (err) => err instanceof QueryError && /give group or stream, not both/.test(err.message),
  );
  assert.throws(
    () => list({ group: 'batches' }),
    (err) => err instanceof QueryError && /parameter 'group' must be one of streams/.test(err.message),
  );
  assert.throws(
    () => list({ stream: '0' }),
    (err) => err instanceof QueryError && /parameter 'stream' must be an integer from 1/.test(err.message),
  );
});
