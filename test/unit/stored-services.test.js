// What the store holds of each service (server/store/stored-services.js): a colour index per service in order of
// first arrival, kept while the process runs whatever is cleared or evicted, and its items of each signal counted
// as they arrive and go, which GET /api/services answers with instead of scanning the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startCollector } from '../../server/collector.js';
import { storedServices } from '../../server/store/stored-services.js';
import { SIGNALS_SHOWN } from '../../server/otlp/signals.js';
import { postOtlp } from '../helpers/http.js';
import { gauge, logs, spans } from '../testing/data.js';

test('services get colour indexes in order of arrival, kept after the store is cleared', async () => {
  const mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
  try {
    for (const service of ['zeta', 'alpha', 'mid']) {
      assert.equal((await postOtlp(mock.urls.http, '/v1/traces', JSON.stringify(spans(service, ['op'])), 'application/json')).status, 200);
    }
    const colorOf = async () => Object.fromEntries((await mock.client.services()).map((s) => [s.name, s.color]));
    assert.deepEqual(await colorOf(), { alpha: 1, mid: 2, zeta: 0 });
    await mock.client.clear();
    for (const service of ['mid', 'new', 'zeta']) {
      assert.equal((await postOtlp(mock.urls.http, '/v1/traces', JSON.stringify(spans(service, ['op'])), 'application/json')).status, 200);
    }
    assert.deepEqual(await colorOf(), { mid: 2, new: 3, zeta: 0 });
  } finally {
    await mock.stop();
  }
});

test("past 10,000 names a service's index comes from its name: stable, within a bound", () => {
  const listeners = [];
  const services = storedServices(/** @type {any} */ ({ subscribe: (/** @type {any} */ l) => listeners.push(l), onCleared: () => {} }));
  for (let i = 0; i < 10_000; i++) assert.equal(services.of(`svc-${i}`), i);
  const late = services.of('one too many');
  assert.equal(services.of('one too many'), late);
  assert.ok(late >= 10_000 && late < 20_000, String(late));
  assert.equal(services.of('svc-42'), 42);
  assert.equal(listeners.length, 1);
});

/** Every service's items of each signal, counted from every stored item. @param {import('../../server/store/store.js').Store} store */
function scanned(store) {
  /** @type {Map<string, Record<string, number>>} */
  const rows = new Map();
  for (const signal of SIGNALS_SHOWN) {
    for (const entry of store.ring(signal.name)) {
      const service = /** @type {any} */ (entry).ctx.service;
      if (!rows.has(service)) rows.set(service, Object.fromEntries(SIGNALS_SHOWN.map((s) => [s.short, 0])));
      /** @type {Record<string, number>} */ (rows.get(service))[signal.short]++;
    }
  }
  return [...rows].map(([name, counts]) => ({ name, ...counts })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

test('the items each service has stored are counted as they arrive and are evicted, by count and by bytes, as a scan of the store counts them', async () => {
  // Small caps and budgets, so that most of what is sent is evicted, some of it for bytes; protobuf bodies are
  // stored unbuilt (their items made when read) and OTLP/JSON bodies decoded: both are counted.
  const mock = await startCollector({
    host: '127.0.0.1',
    grpcPort: 0,
    httpPort: 0,
    uiPort: 0,
    maxSpans: 100,
    maxLogs: 200,
    maxPoints: 29,
    maxSamples: 23,
    maxLogBytes: 12000,
    maxSpanBytes: 12000,
  });
  const protobuf = SIGNALS_SHOWN.map((signal) => ({ path: signal.httpPath, body: fs.readFileSync(new URL(`../../fixtures/${signal.name}.pb`, import.meta.url)) }));
  try {
    for (let round = 0; round < 12; round++) {
      const service = `svc-${round % 5}`;
      const json = [
        [
          '/v1/traces',
          spans(
            service,
            Array.from({ length: 1 + (round % 7) }, (_, i) => `op${i}`),
          ),
        ],
        [
          '/v1/logs',
          logs(
            service,
            Array.from({ length: 3 + round }, (_, i) => `line ${i}`),
          ),
        ],
        [
          '/v1/metrics',
          gauge(
            service,
            `m${round % 3}`,
            Array.from({ length: 2 + (round % 4) }, (_, i) => i),
          ),
        ],
      ];
      for (const [path, body] of json) assert.equal((await postOtlp(mock.urls.http, path, JSON.stringify(body), 'application/json')).status, 200);
      if (round % 3 === 0) {
        for (const { path, body } of protobuf) assert.equal((await postOtlp(mock.urls.http, path, body, 'application/x-protobuf')).status, 200);
      }
      const listed = (await mock.client.services()).map(({ color, ...counts }) => counts);
      assert.deepEqual(listed, scanned(mock.store), `after round ${round}`);
    }
    assert.ok(mock.store.stats().traces.evictedForBytes > 0 && mock.store.stats().logs.evictedForBytes > 0, 'some items went for bytes');
    await mock.client.clear();
    assert.deepEqual(await mock.client.services(), []);
  } finally {
    await mock.stop();
  }
});
