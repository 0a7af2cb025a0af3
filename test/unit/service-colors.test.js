// Service colours (server/store/service-colors.js): an index per service in order of first arrival, kept while
// the process runs, whatever is cleared or evicted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCollector } from '../../server/collector.js';
import { serviceColors } from '../../server/store/service-colors.js';
import { postOtlp } from '../helpers/http.js';
import { spans } from '../testing/data.js';

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
  const colors = serviceColors(/** @type {any} */ ({ subscribe: (/** @type {any} */ l) => listeners.push(l) }));
  for (let i = 0; i < 10_000; i++) assert.equal(colors.of(`svc-${i}`), i);
  const late = colors.of('one too many');
  assert.equal(colors.of('one too many'), late);
  assert.ok(late >= 10_000 && late < 20_000, String(late));
  assert.equal(colors.of('svc-42'), 42);
  assert.equal(listeners.length, 1);
});
