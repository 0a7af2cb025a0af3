// A traces list's first page kept between asks (server/query/kept-traces.js) answers exactly what a scan of every
// stored trace answers, as spans arrive (new traces, and old ones growing, with earlier starts and errors), are
// evicted for count and for bytes, and the store is cleared.
import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest } from '../../server/otlp/schema.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { Store } from '../../server/store/store.js';
import { listing } from '../../server/query/engine.js';
import { seededRandom } from '../helpers/random.js';

const TRACES = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));
const SERVICES = ['checkout', 'cart', 'payment'];

/**
 * A request of `n` spans: most of new traces, some of traces seen before (`known`), starting earlier or later.
 * @param {() => number} random @param {number} n @param {string[]} known
 */
function spans(random, n, known) {
  const hex = (/** @type {number} */ width) => Array.from({ length: width }, () => Math.floor(random() * 16).toString(16)).join('');
  return {
    resourceSpans: SERVICES.map((service) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [
        {
          scope: { name: 'app' },
          spans: Array.from({ length: Math.ceil(n / 3) }, () => {
            const old = known.length > 0 && random() < 0.3;
            const traceId = old ? known[Math.floor(random() * known.length)] : hex(32);
            if (!old) known.push(traceId);
            const start = 1_700_000_000_000_000_000n + BigInt(Math.floor(random() * 100_000)) * 1_000_000n;
            return {
              traceId,
              spanId: hex(16),
              parentSpanId: random() < 0.4 ? hex(16) : '',
              name: random() < 0.5 ? 'GET /cart' : 'POST /pay',
              kind: 2,
              startTimeUnixNano: String(start),
              endTimeUnixNano: String(start + BigInt(Math.floor(random() * 5_000)) * 1_000_000n),
              status: { code: random() < 0.1 ? 2 : 0 },
            };
          }),
        },
      ],
    })),
  };
}

test('a kept traces page is what a scan of every stored trace answers, through arrivals, evictions and clearing', async () => {
  const random = seededRandom(7);
  const store = new Store({ maxSpans: 1500, maxSpanBytes: 20_000_000 });
  const queries = [
    { sort: 'start' },
    { sort: 'start', order: 'asc' },
    { sort: 'duration' },
    { sort: 'spans' },
    { sort: 'arrival' },
    { sort: 'start', error: 'true' },
    { sort: 'start', service: 'cart' },
    { sort: 'duration', rootNameContains: 'pay', minDurationMs: '1000' },
  ];
  /** @type {string[]} */
  const known = [];
  let requestId = 0;
  let shown = 0;
  for (let step = 0; step < 160; step++) {
    if (step === 60) store.clear();
    else {
      const request = spans(random, 1 + Math.floor(random() * 120), known);
      // Protobuf bodies are stored unbuilt, OTLP/JSON ones decoded: both kinds of span.
      const decoded = random() < 0.7 ? decodeProto(TRACES, encodeRequest('traces', request), { lazy: true }) : decodeJson(TRACES, JSON.stringify(request));
      store.addRequest('traces', decoded, ++requestId, step % 100 === 15 ? 19_500_000 : undefined);
      if (known.length > 2000) known.splice(0, 1000);
    }
    for (const query of queries) {
      if (random() < 0.3) continue;
      const limit = String(random() < 0.8 ? 40 : random() < 0.5 ? 150 : 400);
      const asked = listing('traces', { ...query, limit }, { store, journal: /** @type {any} */ (null) });
      const page = await asked.page();
      const scanned = await asked.page(undefined, true);
      const ids = (/** @type {any} */ p) => p.items.map((/** @type {any} */ t) => t.traceId);
      assert.deepEqual(ids(page), ids(scanned), `step ${step}, ${JSON.stringify(query)}, limit ${limit}: the same traces`);
      assert.deepEqual([page.total, page.next, page.positions], [scanned.total, scanned.next, scanned.positions], `step ${step}: the same total and cursor`);
      shown += page.items.length;
    }
  }
  const { evicted, evictedForBytes } = store.stats().traces;
  assert.ok(
    evicted > 1000 && evictedForBytes > 0 && evictedForBytes < evicted,
    `spans were evicted, for count and for bytes (since the clear: ${evicted}, ${evictedForBytes} for bytes)`,
  );
  assert.ok(shown > 20_000, 'the pages were not empty');
});
