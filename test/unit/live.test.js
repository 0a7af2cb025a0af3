// The live feed (docs/live.md): subscriptions, timed batches in the REST API's shapes, bounded queues
// that coalesce overflow into "skipped" notices, a stalled browser that cannot slow ingestion, and shutdown.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { WebSocket } from 'ws';
import { registerLive } from '../../server/api/live.js';
import { spanView, logView } from '../../server/query/views.js';
import { Store } from '../../server/store/store.js';
import { Journal } from '../../server/store/journal.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { SIGNALS, signalByName } from '../../server/otlp/signals.js';
import { waitFor } from '../helpers/wait.js';

const fixture = (/** @type {string} */ name) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const TRACES = decodeJson(SIGNALS.traces, fixture('traces'));
const LOGS = decodeJson(SIGNALS.logs, fixture('logs'));
const METRICS = decodeJson(SIGNALS.metrics, fixture('metrics'));

/** @type {(() => Promise<unknown>)[]} */
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** @param {import('../../server/api/live.js').LiveOptions} [live] @param {ConstructorParameters<typeof Store>[0]} [limits] */
async function startLive(live, limits) {
  const store = new Store(limits);
  const journal = new Journal();
  const app = Fastify();
  app.delete('/api/telemetry', async (_req, reply) => {
    store.clear();
    journal.clear();
    return reply.code(204).send();
  });
  const feed = registerLive(app, { store, journal, live: { flushMs: 25, noticeMs: 0, flushBudgetMs: 1000, ...live } });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  let requestId = 0;
  return {
    store,
    journal,
    app,
    feed,
    base,
    /** @param {import('../../server/otlp/signals.js').SignalName} signal @param {any} request */
    add: (signal, request) => store.addRequest(signal, request, ++requestId),
  };
}

/** A client that records every message; `options.origin` sets the Origin header as a browser would. */
async function connect(/** @type {string} */ base, /** @type {Record<string, any>} */ options = {}) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/live`, options);
  /** @type {any[]} */
  const messages = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  cleanups.push(async () => ws.terminate());
  await waitFor(() => messages.find((m) => m.type === 'hello'), { what: 'hello' });
  return {
    ws,
    messages,
    /** @param {string[]} feeds */
    subscribe: async (feeds) => {
      const seen = messages.length;
      ws.send(JSON.stringify({ type: 'subscribe', feeds }));
      return waitFor(() => messages.slice(seen).find((m) => m.type === 'subscribed'), { what: 'subscribed' });
    },
    batches: () => messages.filter((m) => m.type === 'batch'),
    /** @param {string} feed */
    items: (feed) => messages.filter((m) => m.type === 'batch').flatMap((m) => m[feed] ?? []),
    skipped: () => messages.filter((m) => m.type === 'skipped').reduce((n, m) => n + m.count, 0),
  };
}

test('hello names the protocol; a subscription gets batches of spans, logs and metrics in the REST shapes', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  assert.deepEqual(client.messages[0], { type: 'hello', version: 2, feeds: ['traces', 'logs', 'metrics', 'profiles', 'requests'], flushMs: 25 });
  assert.deepEqual((await client.subscribe(['traces', 'logs', 'metrics'])).feeds, ['traces', 'logs', 'metrics']);

  live.add('traces', TRACES);
  live.add('logs', LOGS);
  live.add('metrics', METRICS);
  await waitFor(() => client.items('traces').length && client.items('logs').length && client.items('metrics').length, { what: 'all three signals' });

  const spans = [...live.store.ring('traces')].map(spanView);
  assert.deepEqual(client.items('traces'), JSON.parse(JSON.stringify(spans)));
  assert.deepEqual(client.items('logs'), JSON.parse(JSON.stringify([...live.store.ring('logs')].map(logView))));
  const points = client.items('metrics').reduce((n, /** @type {any} */ m) => n + m.dataPoints.length, 0);
  assert.equal(points, live.store.ring('metrics').size);
  assert.equal(client.batches().length, 1, 'one flush carries everything that arrived in its interval');
});

test('profile samples come on the profiles feed with their profile, service and type', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  await client.subscribe(['profiles']);
  live.add('profiles', decodeJson(/** @type {any} */ (signalByName('profiles')), fixture('profiles')));
  await waitFor(() => client.items('profiles').length === 6, { what: 'six samples' });
  const [first] = client.items('profiles');
  assert.deepEqual(
    { ...first, stack: first.stack.map((/** @type {any} */ f) => f.name) },
    {
      profileId: '0a0b0c0d0102030405060708090a0b0c',
      service: 'checkout',
      type: 'cpu',
      unit: 'nanoseconds',
      stack: ['parse', 'handle', 'main'],
      values: [10000000, 20000000],
      value: 30000000,
      timestampsUnixNano: ['1700000000001000000', '1700000000002000000'],
      attributes: { 'thread.name': 'worker-1' },
      link: { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' },
    },
  );
});

test('only subscribed feeds are sent; journal entries come on the requests feed', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  await client.subscribe(['requests']);
  live.add('traces', TRACES);
  live.journal.record(
    /** @type {any} */ ({ id: 7, time: new Date().toISOString(), transport: 'http', signal: 'traces', outcome: 'accepted', response: { status: 200, message: '' } }),
  );
  await waitFor(() => client.items('requests').length === 1, { what: 'the journal entry' });
  assert.equal(client.items('requests')[0].id, 7);
  assert.equal(client.items('traces').length, 0);
});

test('many requests within one interval arrive as one batch, not one message per item', async () => {
  const live = await startLive({ flushMs: 150 });
  const client = await connect(live.base);
  await client.subscribe(['traces']);
  for (let i = 0; i < 20; i++) live.add('traces', TRACES);
  await waitFor(() => client.items('traces').length === live.store.ring('traces').size, { what: 'all spans' });
  assert.ok(client.batches().length <= 2, `${client.batches().length} batches for 20 requests`);
});

test('a full queue drops items and says how many in one coalesced skipped notice', async () => {
  const live = await startLive({ flushMs: 100, maxQueueItems: 15 });
  const client = await connect(live.base);
  await client.subscribe(['traces']);
  const perRequest = live.add('traces', TRACES);
  for (let i = 1; i < 5; i++) live.add('traces', TRACES);
  await waitFor(() => client.skipped() > 0 && client.items('traces').length > 0, { what: 'a batch and a skipped notice' });
  assert.equal(client.items('traces').length, 15);
  assert.equal(client.skipped(), 5 * perRequest - 15);
  const notice = client.messages.find((m) => m.type === 'skipped');
  assert.deepEqual(notice, { type: 'skipped', count: 5 * perRequest - 15, feeds: { traces: 5 * perRequest - 15 } });
});

test('what does not fit in the time budget of a flush is skipped and counted; journal entries always go', async () => {
  const live = await startLive({ flushBudgetMs: -1 });
  const client = await connect(live.base);
  await client.subscribe(['traces', 'requests']);
  const spans = live.add('traces', TRACES);
  live.journal.record(
    /** @type {any} */ ({ id: 1, time: new Date().toISOString(), transport: 'grpc', signal: 'traces', outcome: 'accepted', response: { status: 0, message: '' } }),
  );
  await waitFor(() => client.skipped() === spans && client.items('requests').length === 1, { what: 'skipped spans and the journal entry' });
  assert.equal(client.items('traces').length, 0);
});

test('once a flush has spent its budget, the browsers not yet served are served first by the next, with what they hold', async () => {
  // flushMs is long so that the three flushes below are the timer's, one at a time; every budget check fails
  const live = await startLive({ flushBudgetMs: -1, flushMs: 150 });
  const clients = await Promise.all([0, 1, 2].map(() => connect(live.base)));
  for (const c of clients) await c.subscribe(['requests']);
  live.journal.record(
    /** @type {any} */ ({ id: 1, time: new Date().toISOString(), transport: 'grpc', signal: 'traces', outcome: 'accepted', response: { status: 0, message: '' } }),
  );
  await waitFor(() => clients.some((c) => c.items('requests').length === 1), { what: 'the first browser served' });
  assert.equal(clients.filter((c) => c.items('requests').length === 1).length, 1, 'one browser a flush while the budget is spent');
  await waitFor(() => clients.every((c) => c.items('requests').length === 1), { what: 'every browser served in turn' });
  assert.equal(
    clients.reduce((n, c) => n + c.skipped(), 0),
    0,
    'nothing was dropped for waiting',
  );
});

test('a browser that stops reading costs ingestion nothing: its items are skipped until it catches up', async () => {
  const live = await startLive({ flushMs: 10, maxBufferedBytes: 64 * 1024 });
  const client = await connect(live.base);
  await client.subscribe(['traces']);
  // Stop reading: the server's socket buffer fills up as it would for a frozen tab on a slow link.
  const socket = /** @type {any} */ (client.ws)._socket;
  socket.pause();
  const started = performance.now();
  let stored = 0;
  const until = Date.now() + 1500;
  while (Date.now() < until) {
    for (let i = 0; i < 50; i++) stored += live.add('traces', TRACES);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const perItemMs = (performance.now() - started) / stored;
  socket.resume();
  await waitFor(() => client.skipped() > 0, { timeoutMs: 10_000, what: 'a skipped notice once the client reads again' });
  await waitFor(() => client.items('traces').length + client.skipped() === stored, { timeoutMs: 10_000, what: 'every item sent or counted' });
  assert.ok(client.skipped() > stored / 2, `only ${client.skipped()} of ${stored} skipped`);
  // About 0.01 ms per span here, with the store's own work included; a tenth of a millisecond would mean waiting.
  assert.ok(perItemMs < 0.1, `ingestion slowed to ${perItemMs.toFixed(4)} ms per span`);
});

test('bad messages get an error message and change nothing', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  client.ws.send('not json');
  client.ws.send(JSON.stringify({ type: 'nope' }));
  client.ws.send(JSON.stringify({ type: 'subscribe', feeds: ['traces', 'events'] }));
  await waitFor(() => client.messages.filter((m) => m.type === 'error').length === 3, { what: 'three errors' });
  live.add('traces', TRACES);
  await client.subscribe([]);
  assert.equal(client.items('traces').length, 0);
});

test('browsers from other origins are refused; the UI origin and loopback dev servers are let in', async () => {
  const live = await startLive();
  const { host } = new URL(live.base);
  await assert.rejects(connect(live.base, { origin: 'https://evil.example' }), /403/);
  await connect(live.base, { origin: `http://${host}` });
  await connect(live.base, { origin: 'http://localhost:5173' });
  await connect(live.base);
});

test('clearing the store tells every client to start over; other paths are not upgraded', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  await client.subscribe(['traces']);
  assert.equal((await fetch(`${live.base}/api/telemetry`, { method: 'DELETE' })).status, 204);
  await waitFor(() => client.messages.find((m) => m.type === 'cleared'), { what: 'cleared' });
  await assert.rejects(
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`${live.base.replace('http', 'ws')}/api/elsewhere`);
      ws.once('open', resolve);
      ws.once('error', reject);
    }),
    /404/,
  );
});

test('a clearing in-process tells every client too, and the store and journal cleared together make one notice', async () => {
  const live = await startLive();
  const client = await connect(live.base);
  await client.subscribe(['traces', 'requests']);
  live.add('traces', TRACES);
  live.store.clear();
  await waitFor(() => client.messages.find((m) => m.type === 'cleared'), { what: 'cleared after store.clear()' });
  live.journal.clear();
  await waitFor(() => client.messages.filter((m) => m.type === 'cleared').length === 2, { what: 'cleared after journal.clear()' });
  assert.deepEqual(client.items('traces'), [], 'what was queued before the clearing is not sent after it');
  assert.equal((await fetch(`${live.base}/api/telemetry`, { method: 'DELETE' })).status, 204);
  live.add('traces', TRACES);
  await waitFor(() => client.items('traces').length > 0, { what: 'the spans stored after the clearing' });
  assert.equal(client.messages.filter((m) => m.type === 'cleared').length, 3);
});

test('closing the app closes every live connection promptly', async () => {
  const live = await startLive();
  const a = await connect(live.base);
  const b = await connect(live.base);
  await a.subscribe(['traces']);
  const closed = Promise.all([a, b].map((c) => new Promise((resolve) => c.ws.once('close', (code) => resolve(code)))));
  const started = performance.now();
  await live.app.close();
  assert.deepEqual(await closed, [1001, 1001]);
  assert.equal(live.feed.clients, 0);
  assert.ok(performance.now() - started < 2000, 'close waited for the browsers');
  live.add('traces', TRACES);
});

test('a watched query gets coalesced change notices: what was added, what of it matches, what was evicted', async () => {
  const live = await startLive({ flushMs: 100 });
  const client = await connect(live.base);
  client.ws.send(JSON.stringify({ type: 'watch', views: { logs: 'service=checkout&severity=17', traces: 'service=frontend' } }));
  await waitFor(() => client.messages.find((m) => m.type === 'watching'), { what: 'watching' });
  assert.deepEqual(client.messages.find((m) => m.type === 'watching').views, ['logs', 'traces']);
  live.add('logs', LOGS);
  live.add('logs', LOGS);
  live.add('traces', TRACES);
  const changed = await waitFor(() => client.messages.find((m) => m.type === 'changed'), { what: 'a change notice' });
  const logs = [...live.store.ring('logs')];
  const matching = logs.filter((e) => e.ctx.service === 'checkout' && e.item.severityNumber >= 17).length;
  assert.ok(matching > 0 && matching < logs.length, 'the query selects some records, not all');
  assert.deepEqual(changed.feeds.logs, { added: logs.length, matched: matching, evicted: 0 });
  assert.deepEqual(changed.feeds.traces, { added: live.store.ring('traces').size, matched: live.store.ring('traces').size, evicted: 0 });
  assert.equal(client.batches().length, 0, 'watching sends no items: the view asks the REST API for its page');
});

test('a steady flow gets a change notice once a noticeMs, the first at the next flush, and every count in one of them', async () => {
  const live = await startLive({ flushMs: 20, noticeMs: 200 });
  const client = await connect(live.base);
  client.ws.send(JSON.stringify({ type: 'watch', views: { logs: '' } }));
  await waitFor(() => client.messages.find((m) => m.type === 'watching'), { what: 'watching' });
  /** @type {number[]} */
  const heard = [];
  client.ws.on('message', (data) => {
    if (JSON.parse(String(data)).type === 'changed') heard.push(performance.now());
  });
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < 900) {
    sent += live.add('logs', LOGS);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const added = () => client.messages.filter((m) => m.type === 'changed').reduce((n, m) => n + m.feeds.logs.added, 0);
  await waitFor(() => added() === sent, { what: 'every record counted in a notice' });
  assert.ok(heard[0] - started < 150, `the first notice came ${Math.round(heard[0] - started)} ms after the first record`);
  const gaps = heard.slice(1).map((t, i) => Math.round(t - heard[i]));
  assert.ok(heard.length >= 3 && heard.length <= 7, `notices over 900 ms at most one each 200 ms: ${heard.length}, gaps ${gaps}`);
  assert.ok(
    gaps.every((gap) => gap >= 150),
    `gaps between notices: ${gaps}`,
  );

  // After a quiet noticeMs, an arrival is told at the next flush again.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = heard.length;
  const quietAt = performance.now();
  live.add('logs', LOGS);
  await waitFor(() => heard.length > before, { what: 'a notice after the quiet spell' });
  assert.ok(heard[before] - quietAt < 150, `a notice ${Math.round(heard[before] - quietAt)} ms after a quiet spell`);
});

test('a notice of the metrics feed says how many metrics appeared or went away, which new points of listed metrics do not change', async () => {
  const { base, add } = await startLive({}, { maxPoints: 1000 });
  /** @param {string} name @param {number} points */
  const gauge = (name, points) => ({
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
        scopeMetrics: [
          { scope: { name: 'm' }, metrics: [{ name, gauge: { dataPoints: Array.from({ length: points }, (_, i) => ({ timeUnixNano: String(i + 1), asInt: '1' })) } }] },
        ],
      },
    ],
  });
  add('metrics', gauge('stored.before', 3));
  const client = await connect(base);
  client.ws.send(JSON.stringify({ type: 'watch', views: { metrics: '' } }));
  await waitFor(() => client.messages.find((m) => m.type === 'watching'), { what: 'watching' });
  /** The sum of the notices' counts since `from`. @param {number} from */
  const sums = async (from, /** @type {number} */ added) =>
    waitFor(
      () => {
        const notices = client.messages.slice(from).filter((m) => m.type === 'changed');
        const sum = (/** @type {string} */ k) => notices.reduce((n, m) => n + (m.feeds.metrics?.[k] ?? 0), 0);
        return sum('added') === added ? { metrics: sum('metrics'), evicted: sum('evicted') } : null;
      },
      { what: `notices of ${added} points` },
    );
  let seen = client.messages.length;
  add('metrics', gauge('stored.before', 5));
  assert.deepEqual(await sums(seen, 5), { metrics: 0, evicted: 0 }, 'points of a metric already stored change no list of metrics');
  seen = client.messages.length;
  add('metrics', gauge('arrived', 2));
  add('metrics', gauge('arrived.too', 2));
  assert.deepEqual(await sums(seen, 4), { metrics: 2, evicted: 0 });
  seen = client.messages.length;
  // Evicts every point of the three metrics stored so far: they go away, and one appears.
  add('metrics', gauge('fills.the.store', 1000));
  assert.deepEqual(await sums(seen, 1000), { metrics: 4, evicted: 12 });
});

test('evictions are reported to a watching view, and a bad watched query is an error naming the parameter', async () => {
  const store = new Store({ maxLogs: 10 });
  const journal = new Journal();
  const app = Fastify();
  registerLive(app, { store, journal, live: { flushMs: 25 } });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const client = await connect(base);
  client.ws.send(JSON.stringify({ type: 'watch', views: { logs: 'sevrity=17' } }));
  const error = await waitFor(() => client.messages.find((m) => m.type === 'error'), { what: 'an error' });
  assert.match(error.message, /^views\.logs: unknown parameter 'sevrity'; did you mean 'severity'\?/);
  client.ws.send(JSON.stringify({ type: 'watch', views: { logs: '' } }));
  await waitFor(() => client.messages.find((m) => m.type === 'watching'), { what: 'watching' });
  store.addRequest('logs', LOGS, 1);
  const received = LOGS.resourceLogs.flatMap((/** @type {any} */ r) => r.scopeLogs).flatMap((/** @type {any} */ s) => s.logRecords).length;
  const notices = await waitFor(
    () => {
      const all = client.messages.filter((m) => m.type === 'changed');
      return all.reduce((n, m) => n + m.feeds.logs.added, 0) === received ? all : null;
    },
    { what: 'notices for every record' },
  );
  assert.equal(
    notices.reduce((n, m) => n + m.feeds.logs.evicted, 0),
    received - 10,
  );
});

test("a client that watches the stats gets GET /api/stats's answer at once, then each statsMs only when they changed", async () => {
  const live = await startLive({ statsMs: 100 });
  const client = await connect(live.base);
  const stats = () => client.messages.filter((m) => m.type === 'stats');
  client.ws.send(JSON.stringify({ type: 'watch', views: {}, stats: true }));
  await waitFor(() => stats().length === 1, { what: 'the stats at once' });
  assert.deepEqual(
    client.messages.find((m) => m.type === 'watching'),
    { type: 'watching', views: [], stats: true },
  );
  assert.equal(stats()[0].stats.signals.logs.stored, 0);

  const sent = live.add('logs', LOGS);
  await waitFor(() => stats().length === 2, { what: 'the stats after records arrived' });
  assert.equal(stats()[1].stats.signals.logs.stored, sent);
  await new Promise((resolve) => setTimeout(resolve, 350));
  assert.equal(stats().length, 2, 'figures that did not change are not sent again');

  client.ws.send(JSON.stringify({ type: 'watch', views: {} }));
  await waitFor(() => client.messages.filter((m) => m.type === 'watching').length === 2, { what: 'watching, without stats' });
  live.add('logs', LOGS);
  await new Promise((resolve) => setTimeout(resolve, 350));
  assert.equal(stats().length, 2, 'a client that stopped watching the stats gets none');

  client.ws.send(JSON.stringify({ type: 'watch', views: {}, stats: 'yes' }));
  const error = await waitFor(() => client.messages.find((m) => m.type === 'error'), { what: 'an error' });
  assert.match(error.message, /stats must be true or false; got "yes"/);
});

test('clients watching the same query share its count: each is told what arrived after it began watching, and keeps it through a repeated watch', async () => {
  const live = await startLive();
  const [a, b] = [await connect(live.base), await connect(live.base)];
  /** @typedef {Awaited<ReturnType<typeof connect>>} Client */
  /** What a client was told of the logs feed, summed over its notices. @param {Client} client */
  const told = (client) => {
    const notices = client.messages.filter((m) => m.type === 'changed').map((m) => m.feeds.logs);
    return { added: notices.reduce((n, c) => n + c.added, 0), matched: notices.reduce((n, c) => n + c.matched, 0) };
  };
  /** @param {Client} client */
  const watch = async (client) => {
    const seen = client.messages.filter((m) => m.type === 'watching').length;
    client.ws.send(JSON.stringify({ type: 'watch', views: { logs: 'severity=17' } }));
    await waitFor(() => client.messages.filter((m) => m.type === 'watching').length > seen, { what: 'watching' });
  };
  await watch(a);
  const first = live.add('logs', LOGS) + live.add('logs', LOGS);
  await waitFor(() => told(a).added === first, { what: 'the first records told to the first client' });
  await watch(b);
  // Arrivals between two of a client's watches of the same query are told all the same.
  let then = live.add('logs', LOGS);
  await watch(a);
  then += live.add('logs', LOGS) + live.add('logs', LOGS);
  await waitFor(() => told(a).added === first + then && told(b).added === then, { what: 'every record told to both' });
  const perRequest = told(b).matched / 3;
  assert.ok(perRequest > 0 && perRequest < then / 3, `records of severity 17 or more in a request: ${perRequest}`);
  assert.equal(told(a).matched, perRequest * 5);

  // The second client alone after the first leaves: still counted.
  a.ws.terminate();
  await waitFor(() => live.feed.clients === 1, { what: 'the first client gone' });
  const last = live.add('logs', LOGS);
  await waitFor(() => told(b).added === then + last, { what: 'the last records told to the second client' });
  assert.equal(told(b).matched, perRequest * 4);
});

test('a feed watches at most 32 different filtered queries: one more is refused, naming the bound; a query without filters is always taken', async () => {
  const live = await startLive();
  const watchLogs = async (/** @type {string} */ query) => {
    const client = await connect(live.base);
    client.ws.send(JSON.stringify({ type: 'watch', views: { logs: query } }));
    return waitFor(() => client.messages.find((m) => m.type === 'watching' || m.type === 'error'), { what: `an answer to ${query}` });
  };
  for (let i = 0; i < 32; i++) assert.equal((await watchLogs(`service=s${i}`)).type, 'watching');
  const refused = await watchLogs('service=s32');
  assert.deepEqual(refused, { type: 'error', message: 'views.logs: the feed already watches 32 different queries of logs; watch it without filters ("")' });
  assert.equal((await watchLogs('service=s0')).type, 'watching', 'a query already watched');
  assert.equal((await watchLogs('')).type, 'watching');
  assert.equal((await watchLogs('order=asc&limit=5')).type, 'watching', 'no filters');
  assert.equal((await watchLogs('service=s0')).type, 'watching');
});
