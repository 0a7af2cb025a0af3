// A list's first page kept between asks (server/query/kept-page.js) answers exactly what a scan of everything
// stored answers, as items arrive, are evicted and the store is cleared.
import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest } from '../../server/otlp/schema.js';
import { Store } from '../../server/store/store.js';
import { listing } from '../../server/query/engine.js';
import { seededRandom } from '../helpers/random.js';

const LOGS = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('logs'));

/** A request of `n` log records of three services, at times that go back and forth. @param {() => number} random @param {number} n */
function logs(random, n) {
  const services = ['checkout', 'cart', 'payment'];
  return {
    resourceLogs: services.map((service) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeLogs: [
        {
          scope: { name: 'app' },
          logRecords: Array.from({ length: Math.ceil(n / 3) }, () => ({
            timeUnixNano: String(1_700_000_000_000_000_000n + BigInt(Math.floor(random() * 1000)) * 1_000_000n),
            severityNumber: random() < 0.2 ? 17 : 9,
            body: { stringValue: 'x' },
          })),
        },
      ],
    })),
  };
}

test('a kept first page is what a scan of the whole store answers, through arrivals, evictions and clearing', async () => {
  const random = seededRandom(29);
  const store = new Store({ maxLogs: 500 });
  const queries = [{ sort: 'time' }, { sort: 'time', severity: '17' }, { service: 'cart' }, { sort: 'time', service: 'payment', order: 'asc' }];
  let requestId = 0;
  let kept = 0;
  for (let step = 0; step < 120; step++) {
    if (step === 70) store.clear();
    else store.addRequest('logs', decodeProto(LOGS, encodeRequest('logs', logs(random, 1 + Math.floor(random() * 90))), { lazy: true }), ++requestId);
    for (const query of queries) {
      const limit = String(random() < 0.8 ? 50 : 300);
      const asked = listing('logs', { ...query, limit }, { store, journal: /** @type {any} */ (null) });
      const page = await asked.page();
      const scanned = await asked.page({ lowest: Infinity });
      const seqs = (/** @type {any} */ p) => p.items.map((/** @type {any} */ e) => e.seq);
      assert.deepEqual(seqs(page), seqs(scanned), `step ${step}, ${JSON.stringify(query)}: the same items`);
      assert.deepEqual([page.total, page.next, page.positions], [scanned.total, scanned.next, scanned.positions], `step ${step}: the same total and cursor`);
      kept += page.items.length;
    }
  }
  assert.ok(kept > 10_000, 'the pages were not empty');
});
