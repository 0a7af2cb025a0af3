// GET /api/snapshot: the same scenario gives the same document whatever its ids, timing and arrival order;
// a changed attribute shows as a short diff.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startCollector } from '../../server/collector.js';
import { snapshotDiff } from '../../server/client/index.js';
import { postOtlp } from '../helpers/http.js';

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let mock;

before(async () => {
  mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
});
after(() => mock.stop());
beforeEach(() => mock.client.clear());

/** @param {string} key @param {string|number} v */
const kv = (key, v) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });
/** @param {number} bytes */
const id = (bytes) => randomBytes(bytes).toString('hex');

/**
 * The scenario: two checkouts (a trace each: POST /pay → reserve, charge → SELECT) and a log on the charge,
 * with fresh ids, start times and durations each run, each span sent in its own request, in the given order.
 * @param {{ order: (n: number) => number[], brand?: string }} options
 */
async function scenario({ order, brand = 'visa' }) {
  /** @type {{ service: string, span: any, instance: string }[]} */
  const sent = [];
  /** @type {any[]} */
  const logs = [];
  for (const user of ['ann', 'bob']) {
    const traceId = id(16);
    let t = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6));
    /** @param {string} name @param {string} parent @param {number} kind @param {any[]} attributes @param {string} [service] */
    const span = (name, parent, kind, attributes, service = 'checkout') => {
      const start = (t += BigInt(Math.floor(Math.random() * 5e6)));
      const s = {
        traceId,
        spanId: id(8),
        parentSpanId: parent,
        name,
        kind,
        startTimeUnixNano: String(start),
        endTimeUnixNano: String(start + BigInt(Math.floor(Math.random() * 9e7))),
        attributes,
        status: {},
      };
      sent.push({ service, span: s, instance: id(4) });
      return s;
    };
    const root = span('POST /pay', '', 2, [kv('http.route', '/pay'), kv('enduser.id', user), kv('server.port', 1024 + Math.floor(Math.random() * 60000))]);
    span('reserve stock', root.spanId, 3, [kv('items', 2)], 'inventory');
    const charge = span('charge card', root.spanId, 3, [kv('card.brand', brand), kv('amount', 42)]);
    span('SELECT accounts', charge.spanId, 3, [kv('db.system', 'postgres')]);
    logs.push({ traceId, spanId: charge.spanId, severityNumber: 17, severityText: 'ERROR', body: { stringValue: `declined for ${user}` }, timeUnixNano: String(t) });
  }
  for (const i of order(sent.length)) {
    const { service, span, instance } = sent[i];
    const resource = { attributes: [kv('service.name', service), kv('service.instance.id', instance), kv('host.name', `host-${instance}`)] };
    const body = { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'shop' }, spans: [span] }] }] };
    assert.equal((await postOtlp(mock.urls.http, '/v1/traces', JSON.stringify(body), 'application/json')).status, 200);
  }
  const resource = { attributes: [kv('service.name', 'checkout'), kv('service.instance.id', id(4))] };
  const logBody = { resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'shop' }, logRecords: logs.reverse() }] }] };
  assert.equal((await postOtlp(mock.urls.http, '/v1/logs', JSON.stringify(logBody), 'application/json')).status, 200);
}

/** @param {number} n */
const inOrder = (n) => [...Array(n).keys()];
/** @param {number} n children first, the second trace before the first */
const scrambled = (n) => inOrder(n).reverse();

test('the same scenario with other ids, timings and arrival order gives an identical snapshot', async () => {
  await scenario({ order: inOrder });
  const first = await mock.client.snapshot();
  await mock.client.clear();
  await scenario({ order: scrambled });
  const second = await mock.client.snapshot();
  assert.equal(snapshotDiff(first, second), '');
  assert.deepEqual(second, first);

  // What the document holds: labels for ids, no times, sorted attributes, volatile ones masked.
  assert.deepEqual(first.resources, [
    { 'host.name': '<masked>', 'service.instance.id': '<masked>', 'service.name': 'checkout' },
    { 'host.name': '<masked>', 'service.instance.id': '<masked>', 'service.name': 'inventory' },
    { 'service.instance.id': '<masked>', 'service.name': 'checkout' },
  ]);
  assert.equal(first.traces.length, 2);
  const [ann] = first.traces.filter((/** @type {any} */ t) => t.spans[0].attributes['enduser.id'] === 'ann');
  assert.deepEqual(ann.spans[0], {
    name: 'POST /pay',
    service: 'checkout',
    scope: 'shop',
    kind: 'server',
    attributes: { 'enduser.id': 'ann', 'http.route': '/pay', 'server.port': '<masked>' },
    children: [
      {
        id: `${ann.trace}.S2`,
        name: 'charge card',
        service: 'checkout',
        scope: 'shop',
        kind: 'client',
        attributes: { amount: 42, 'card.brand': 'visa' },
        children: [{ name: 'SELECT accounts', service: 'checkout', scope: 'shop', kind: 'client', attributes: { 'db.system': 'postgres' } }],
      },
      { name: 'reserve stock', service: 'inventory', scope: 'shop', kind: 'client', attributes: { items: 2 } },
    ],
  });
  assert.deepEqual(
    first.logs.map((/** @type {any} */ l) => [l.body, l.span]),
    first.traces.map((/** @type {any} */ t) => [`declined for ${t.spans[0].attributes['enduser.id']}`, `${t.trace}.S2`]).sort(),
  );
  assert.equal(JSON.stringify(first).match(/[0-9a-f]{16}/), null, 'no ids');
});

test('one changed attribute is a diff of one line, with context', async () => {
  await scenario({ order: inOrder });
  const golden = await mock.client.snapshot({ signal: 'traces' });
  await mock.client.clear();
  await scenario({ order: scrambled, brand: 'amex' });
  const diff = snapshotDiff(golden, await mock.client.snapshot({ signal: 'traces' }));
  const changed = diff.split('\n').filter((l) => /^[-+]/.test(l));
  const line = (/** @type {string} */ sign, /** @type {string} */ brand) => `${sign}                 "card.brand": "${brand}"`;
  assert.deepEqual(changed, [line('-', 'visa'), line('+', 'amex'), line('-', 'visa'), line('+', 'amex')]);
  assert.match(diff, /^@@ line \d+ \(- expected, \+ actual\) @@\n/);
  assert.match(diff, /"amount": 42,\n- {17}"card.brand": "visa"\n\+ {17}"card.brand": "amex"\n {16}\},/);
});

test('filters as the list queries, masks by name and pattern, times kept as order or relative durations', async () => {
  await scenario({ order: inOrder });
  const ann = await mock.client.snapshot({ signal: 'traces', attributes: { 'enduser.id': 'ann' }, mask: ['amount', '/^db\\./'] });
  assert.equal(ann.traces.length, 1);
  assert.equal(ann.logs, undefined);
  const charge = ann.traces[0].spans[0].children[0];
  assert.equal(charge.attributes.amount, '<masked>');
  assert.equal(charge.children[0].attributes['db.system'], '<masked>');
  const unmasked = await mock.client.snapshot({ signal: 'traces', attributes: { 'enduser.id': 'ann' }, maskDefaults: false });
  assert.equal(typeof unmasked.traces[0].spans[0].attributes['server.port'], 'number');
  const relative = await mock.client.snapshot({ signal: 'traces', times: 'relative', service: 'inventory' });
  assert.equal(relative.traces.length, 2);
  assert.equal(relative.traces[0].spans[0].startMs, 0);
  assert.equal(typeof relative.traces[0].spans[0].durationMs, 'number');
  await assert.rejects(mock.client.snapshot({ rootName: 'POST /pay' }), /400 unknown parameter 'rootName'.*name one signal for its own filters/);
  await assert.rejects(mock.client.snapshot({ times: /** @type {any} */ ('exact') }), /400 parameter 'times' must be one of drop, order, relative/);
  assert.equal((await mock.client.snapshot({ signal: 'traces', rootName: 'POST /pay' })).traces.length, 2);
});
