// GET /api/clients: two clients, each an official exporter sending through a proxy that counts what it sent, over
// different wires and compressions; the report's figures equal the proxies' counts and what the test exported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTestCollector } from '../helpers/collector.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';
import { grpcCountingProxy, httpCountingProxy } from '../helpers/counting-proxy.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {Awaited<ReturnType<typeof httpCountingProxy>>} */
let httpProxy;
/** @type {Awaited<ReturnType<typeof grpcCountingProxy>>} */
let grpcProxy;

before(async () => {
  collector = await startTestCollector();
  httpProxy = await httpCountingProxy(collector.urls.http);
  grpcProxy = await grpcCountingProxy(collector.urls.grpc);
});
after(async () => {
  await httpProxy?.close();
  await grpcProxy?.close();
  await collector?.stop();
});

/** Finished SDK spans of one service instance, `n` of them. @param {string} service @param {string} instance @param {number} n */
async function spans(service, instance, n) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.instance.id': instance }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('clients-test');
  for (let i = 0; i < n; i++) tracer.startSpan(`op-${i}`, { attributes: { i, text: 'x'.repeat(40 * i) } }).end();
  const finished = memory.getFinishedSpans();
  await provider.shutdown();
  return finished;
}

/** @param {string} query */
const clients = async (query = '') => (await collector.api(`/api/clients${query}`)).clients;

test('two clients over different wires and compressions are reported as they were counted on the way', async () => {
  const alpha = createExporter('traces', { wire: 'proto', compression: 'gzip' }, { http: httpProxy.url, grpc: '' });
  const beta = createExporter('traces', { wire: 'grpc', compression: 'none' }, { http: '', grpc: grpcProxy.url });
  const alphaBatches = [2, 7, 1, 4];
  const betaBatches = [5, 3];
  const started = Date.now();
  for (const n of alphaBatches) await exportOrThrow(alpha, await spans('alpha', 'a-1', n));
  for (const n of betaBatches) await exportOrThrow(beta, await spans('beta', 'b-1', n));
  await alpha.shutdown();
  await beta.shutdown();

  const rows = await clients();
  assert.deepEqual(
    rows.map((/** @type {any} */ r) => [r.service, r.instance]),
    [
      ['alpha', 'a-1'],
      ['beta', 'b-1'],
    ],
  );
  const [a, b] = rows;

  const sum = (/** @type {number[]} */ list) => list.reduce((/** @type {number} */ x, /** @type {number} */ y) => x + y, 0);
  assert.equal(a.requests, httpProxy.counted.requests);
  assert.equal(a.requests, alphaBatches.length);
  assert.equal(a.items, sum(alphaBatches));
  assert.deepEqual(a.bytes, {
    wire: httpProxy.counted.wire,
    decoded: httpProxy.counted.decoded,
    perItem: Math.round((httpProxy.counted.wire / sum(alphaBatches)) * 100) / 100,
  });
  assert.deepEqual(a.compression, { encodings: { gzip: 4 }, ratio: Math.round((httpProxy.counted.decoded / httpProxy.counted.wire) * 100) / 100 });
  assert.ok(a.compression.ratio > 1, 'gzip made the bodies smaller');
  assert.deepEqual(a.batch, { min: 1, median: 2, max: 7 });
  assert.deepEqual([a.wires, a.signals, a.faults, a.retries, a.concurrency], [['http/protobuf'], ['traces'], 0, 0, 1]);
  assert.match(a.userAgent, /^OTel-OTLP-Exporter-JavaScript\//);
  assert.ok(a.intervalMs >= 0 && a.answerMs.max >= a.answerMs.median);

  assert.equal(b.requests, grpcProxy.counted.requests);
  assert.equal(b.items, sum(betaBatches));
  assert.deepEqual(b.bytes, {
    wire: grpcProxy.counted.wire,
    decoded: grpcProxy.counted.decoded,
    perItem: Math.round((grpcProxy.counted.wire / sum(betaBatches)) * 100) / 100,
  });
  assert.equal(grpcProxy.counted.wire, grpcProxy.counted.decoded, 'the gRPC client sent uncompressed messages');
  assert.deepEqual(b.compression, { encodings: { none: 2 }, ratio: 1 });
  assert.deepEqual(b.batch, { min: 3, median: 3, max: 5 });
  assert.deepEqual([b.wires, b.faults, b.retries], [['grpc'], 0, 0]);
  assert.match(b.userAgent, /grpc-node-js/);

  const perSecond = (/** @type {any} */ row) => row.series.reduce((/** @type {number} */ n, /** @type {any} */ p) => n + p.bytes, 0);
  assert.deepEqual([perSecond(a), perSecond(b)], [a.bytes.wire, b.bytes.wire], 'the series adds up to the totals');
  assert.ok(Date.parse(a.firstSeen) >= started - 1000);

  // A window that starts after everything above holds nothing; one from the start holds it all.
  assert.deepEqual(await clients(`?since=${Date.now() + 1000}`), []);
  const window = await clients(`?since=${new Date(started - 1000).toISOString()}`);
  assert.deepEqual(
    window.map((/** @type {any} */ r) => [r.requests, r.bytes.wire, r.window.complete]),
    [
      [a.requests, a.bytes.wire, true],
      [b.requests, b.bytes.wire, true],
    ],
  );
});

test('a faulted batch and its retry are counted for the client that sent them', async () => {
  await collector.clear();
  await collector.api('/api/faults', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'unavailable', times: 1, match: { resource: { 'service.name': 'gamma' } } }),
  });
  const gamma = createExporter('traces', { wire: 'json', compression: 'none' }, collector.urls);
  await exportOrThrow(gamma, await spans('gamma', 'g-1', 3));
  await gamma.shutdown();
  const [row] = await clients();
  assert.deepEqual([row.service, row.requests, row.items, row.faults, row.retries, row.wires], ['gamma', 2, 6, 1, 1, ['http/json']]);
  assert.deepEqual(
    row.series.map((/** @type {any} */ p) => p.faults).reduce((/** @type {number} */ x, /** @type {number} */ y) => x + y, 0),
    1,
  );
  await collector.api('/api/faults', { method: 'DELETE' });
});

test('unknown parameters and bad values are refused, each named', async () => {
  /** @type {[string, RegExp][]} */
  const cases = [
    ['?sinse=1', /unknown parameter 'sinse'/],
    ['?since=yesterday', /parameter 'since' must be a time/],
    ['?since=1&service=a', /unknown parameter 'service'/],
  ];
  for (const [query, named] of cases) {
    const res = await fetch(`${collector.urls.ui}/api/clients${query}`);
    assert.equal(res.status, 400, query);
    assert.match((await res.json()).message, named);
  }
});

test('DELETE /api/telemetry starts the report afresh', async () => {
  await collector.clear();
  assert.deepEqual(await clients(), []);
});
