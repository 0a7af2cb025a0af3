// The store and the journal tell their observers of every change: items added and evicted (each stored
// batch), and clearing, whoever clears (DELETE /api/telemetry or a test in-process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Store } from '../../server/store/store.js';
import { Journal } from '../../server/store/journal.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { decodeProto } from '../../server/otlp/items.js';

const TRACES = decodeJson(SIGNALS.traces, readFileSync(new URL('../../fixtures/traces.json', import.meta.url), 'utf8'));

test('the store emits what each request added and evicted, and that it was cleared', () => {
  const store = new Store({ maxSpans: 3 });
  /** @type {string[]} */
  const changes = [];
  const unsubscribe = store.subscribe(({ signal, entries, evicted }) => changes.push(`${signal}: ${entries.length} added, ${evicted.length} evicted`));
  const stopClears = store.onCleared(() => changes.push(`cleared, ${store.stats().traces.stored} stored`));
  const spans = store.addRequest('traces', TRACES, 1);
  assert.ok(spans > 3, 'the fixture overflows the ring');
  store.clear();
  assert.deepEqual(changes, [`traces: ${spans} added, ${spans - 3} evicted`, 'cleared, 0 stored']);
  unsubscribe();
  stopClears();
  store.addRequest('traces', TRACES, 2);
  store.clear();
  assert.equal(changes.length, 2, 'no change reaches an observer that unsubscribed');
});

test('the log records and data points a request evicts, for items or for bytes, are the ones it pushed out, in order', () => {
  for (const [signal, limits] of /** @type {const} */ ([
    ['logs', { maxLogs: 5 }],
    ['metrics', { maxPoints: 5 }],
    ['logs', { maxLogBytes: 5000 }],
    ['metrics', { maxPointBytes: 5000 }],
  ])) {
    const store = new Store(limits);
    /** @type {{ seq: number, item: any }[]} */
    const kept = [];
    let evictions = 0;
    store.subscribe(({ entries, evicted }) => {
      // A request may push out items of its own: the oldest go first, whichever request they came in.
      for (const e of entries) kept.push({ seq: e.seq, item: structuredClone(e.item) });
      const items = [...evicted];
      assert.equal(items.length, evicted.length);
      for (const e of items) assert.deepEqual({ seq: e.seq, item: e.item }, kept.shift(), `${signal} ${JSON.stringify(limits)}`);
      evictions += items.length;
    });
    const body = readFileSync(new URL(`../../fixtures/${signal}.pb`, import.meta.url));
    for (let id = 1; id <= 4; id++) store.addRequest(signal, decodeProto(SIGNALS[signal], body, { lazy: true }), id, 3000);
    assert.ok(evictions > 0, `${signal} ${JSON.stringify(limits)}: nothing was evicted`);
  }
});

test('the journal emits each entry and that it was cleared', () => {
  const journal = new Journal({ maxRequests: 1 });
  /** @type {string[]} */
  const changes = [];
  journal.subscribe((entry, evicted) => changes.push(`recorded ${entry.id}${evicted ? `, evicted ${evicted.id}` : ''}`));
  const stop = journal.onCleared(() => changes.push(`cleared, ${journal.entries.size} kept`));
  for (const id of [1, 2]) journal.record(/** @type {any} */ ({ id, transport: 'http', outcome: 'accepted' }));
  journal.clear();
  stop();
  journal.clear();
  assert.deepEqual(changes, ['recorded 1', 'recorded 2, evicted 1', 'cleared, 0 kept']);
});

test("the journal keeps each entry's place in the order entries were recorded, and the entry shows nothing of it", () => {
  const journal = new Journal({ maxRequests: 3 });
  // ids are given as requests start: a request held by a fault (id 1) is recorded after those that started later
  const entries = [2, 3, 1, 4].map((id) => ({ id, transport: 'http', outcome: 'accepted' }));
  for (const entry of entries) journal.record(/** @type {any} */ (entry));
  assert.deepEqual(
    entries.map((entry) => journal.positionOf(/** @type {any} */ (entry))),
    [1, 2, 3, 4],
  );
  assert.deepEqual(
    [...journal.entries].map((entry) => entry.id),
    [3, 1, 4],
    'the oldest recorded is evicted first',
  );
  assert.deepEqual(entries[2], { id: 1, transport: 'http', outcome: 'accepted' }, 'a comparison sees the entry as recorded');
  assert.equal(JSON.stringify(entries[2]), '{"id":1,"transport":"http","outcome":"accepted"}');
  assert.equal(journal.positionOf(/** @type {any} */ ({ id: 9 })), 0, 'an entry never recorded has no place');
});

test("a log record's sort key is kept in its slot for later queries, and an item made before its slot was reused still reads its own", async () => {
  const { encodeOtlpRequest } = await import('../helpers/otlp-pb.js');
  const store = new Store({ maxLogs: 10 });
  let next = 0;
  /** @param {number} count */
  const add = (count) => {
    const logRecords = Array.from({ length: count }, () => ({ timeUnixNano: String(1700000000000000000n + BigInt(next++) * 1000n), body: { stringValue: 'x' } }));
    const json = { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ logRecords }] }] };
    store.addRequest('logs', decodeProto(SIGNALS.logs, encodeOtlpRequest('logs', json), { lazy: true }), next);
  };
  add(10);
  const ring = /** @type {import('../../server/store/places.js').PlaceRing<any>} */ (store.ring('logs'));
  const first = [...ring].map((item) => ({ item, key: item.timeNumber() }));
  for (const { item, key } of first) assert.equal(key, Number(item.time()));
  assert.deepEqual(
    [...ring].map((item) => ring.sortKeys.seqs[item.slot] === item.seq),
    Array(10).fill(true),
    'each key is kept for the item in its slot',
  );
  add(4);
  const later = [...ring];
  assert.deepEqual(
    later.map((item) => item.timeNumber()),
    later.map((item) => Number(item.time())),
  );
  // The oldest four were evicted and their slots hold new records: the old items still read their own times.
  for (const { item, key } of first.slice(0, 4)) assert.equal(item.timeNumber(), key);
  assert.deepEqual(
    later.map((item) => item.timeNumber()),
    later.map((item) => Number(item.time())),
    'and did not overwrite the new records’ keys',
  );
});

test("a log record's sort key is read as it is checked at ingest: its last time, or its observed time when its time is unset", () => {
  /** A fixed64 field of `number`. @param {number} tag @param {bigint} value */
  const fixed64 = (tag, value) => {
    const out = Buffer.alloc(9);
    out[0] = tag;
    out.writeBigUInt64LE(value, 1);
    return out;
  };
  /** A length-delimited field (lengths under 128). @param {number} tag @param {Buffer} body */
  const delimited = (tag, body) => Buffer.concat([Buffer.from([tag, body.length]), body]);
  const TIME = 0x09; // field 1, fixed64
  const OBSERVED = 0x59; // field 11, fixed64
  const records = [
    [fixed64(TIME, 1700000000123456789n)],
    [fixed64(TIME, 0n), fixed64(OBSERVED, 1700000000000000042n)],
    [fixed64(OBSERVED, 1700000000000000099n)],
    [fixed64(TIME, 1700000000000000001n), fixed64(OBSERVED, 5n), fixed64(TIME, 1700000000000000777n)],
    [Buffer.from([0x10, 0x09])], // a severity only: no time at all
  ];
  const scope = Buffer.concat(records.map((fields) => delimited(0x12, Buffer.concat(fields))));
  const body = delimited(0x0a, delimited(0x12, scope));
  const store = new Store({ maxLogs: 10 });
  store.addRequest('logs', decodeProto(SIGNALS.logs, body, { lazy: true }), 1);
  const ring = /** @type {import('../../server/store/places.js').PlaceRing<any>} */ (store.ring('logs'));
  const items = [...ring];
  assert.deepEqual(
    items.map((item) => ring.sortKeys.seqs[item.slot] === item.seq),
    Array(records.length).fill(true),
    'every key is kept before any query reads one',
  );
  assert.deepEqual(
    items.map((item) => ring.sortKeys.keys[item.slot]),
    items.map((item) => Number(item.time())),
  );
  assert.deepEqual(
    items.map((item) => item.time()),
    ['1700000000123456789', '1700000000000000042', '1700000000000000099', '1700000000000000777', '0'],
  );
});
