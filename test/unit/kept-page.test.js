// A list's first page kept between asks (server/query/kept-page.js) answers exactly what a scan of everything
// stored answers, as items (or journal entries) arrive, are evicted and the store (or journal) is cleared.
import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest } from '../../server/otlp/schema.js';
import { Store } from '../../server/store/store.js';
import { Journal } from '../../server/store/journal.js';
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

/**
 * Asks a listing's first page as a view does (kept) and as a scan of everything stored, and checks they agree.
 * @param {import('../../server/query/engine.js').Listing} asked @param {(item: any) => number} idOf @param {string} label
 * @returns {Promise<number>} how many items the page holds
 */
async function keptIsScanned(asked, idOf, label) {
  const page = await asked.page();
  const scanned = await asked.page({ lowest: Infinity });
  assert.deepEqual(page.items.map(idOf), scanned.items.map(idOf), `${label}: the same items`);
  assert.deepEqual([page.total, page.next, page.positions], [scanned.total, scanned.next, scanned.positions], `${label}: the same total and cursor`);
  return page.items.length;
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
      kept += await keptIsScanned(
        listing('logs', { ...query, limit }, { store, journal: /** @type {any} */ (null) }),
        (e) => e.seq,
        `step ${step}, ${JSON.stringify(query)}`,
      );
    }
  }
  assert.ok(kept > 10_000, 'the pages were not empty');
});

test("the requests list's kept first page is what a scan of the whole journal answers, through arrivals, evictions and clearing", async () => {
  const random = seededRandom(61);
  const journal = new Journal({ maxRequests: 300 });
  const pick = (/** @type {string[]} */ xs) => xs[Math.floor(random() * xs.length)];
  const queries = [
    {},
    { outcome: 'rejected' },
    { signal: 'logs', transport: 'grpc' },
    { fault: 'any', order: 'desc' },
    { group: 'streams' },
    { group: 'streams', outcome: 'accepted' },
  ];
  let kept = 0;
  for (let step = 0; step < 120; step++) {
    // An OTAP stream sends batches from step 30 to 40; once the journal has let them all go, it holds no stream. From
    // step 60 to 65, batches of a stream the journal does not hold (gone before they were answered) show in no list
    // grouped by stream.
    if (step === 30) journal.openStream(1, { signal: 'logs', method: 'ArrowLogs', path: '/otap', peer: '127.0.0.1', userAgent: 'test' });
    if (step === 40) journal.closeStream(1, { cause: 'half-close', status: 0, message: '' });
    if (step === 70) journal.clear();
    else
      for (let n = Math.floor(random() * 60); n > 0; n--) {
        const faulted = random() < 0.3;
        const stream = step >= 30 && step < 40 ? 1 : step >= 60 && step < 65 ? 2 : 0;
        const otap = stream > 0 && random() < 0.5;
        journal.record(
          /** @type {any} */ ({
            id: journal.nextId(),
            signal: pick(['traces', 'logs', 'metrics']),
            transport: otap ? 'otap' : pick(['http', 'grpc']),
            outcome: faulted ? 'rejected' : 'accepted',
            fault: faulted ? { id: 'f1', action: 'unavailable' } : null,
            ...(otap && { otap: { stream }, items: 1, bytes: 10, response: { status: 0 } }),
          }),
        );
      }
    for (const query of queries) {
      const limit = String(random() < 0.8 ? 39 : 400);
      kept += await keptIsScanned(
        listing('requests', { ...query, limit }, { store: /** @type {any} */ (null), journal }),
        (e) => e.id ?? `stream ${e.record.id}: ${e.matched}`,
        `step ${step}, ${JSON.stringify(query)}`,
      );
    }
  }
  assert.ok(kept > 10_000, 'the pages were not empty');
});
