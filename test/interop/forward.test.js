// Forward mode end to end: the official exporters send to otlp-mock, which forwards to a second otlp-mock over
// every wire. What the client sent arrives upstream once and the same; faults on either side make the exporters
// retry, and the journal shows both legs.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as HttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { freePort } from '../helpers/http.js';
import { startTestCollector } from '../helpers/collector.js';
import { SDK_ITEMS, sdkLogs, sdkSpans } from '../helpers/sdk-items.js';
import { WIRES, createExporter } from '../helpers/exporters.js';
import { withoutRequestIds } from '../helpers/payloads.js';
import { decodeRetryInfo } from '../../server/otlp/schema.js';
import { OFF_THREAD_AT, transcodedOffThread } from '../../server/otlp/json-off-thread.js';
import { encodeOtlpRequest } from '../helpers/otlp-pb.js';
import { waitFor } from '../helpers/wait.js';

// A refused export makes the exporters log it; the journal is what these tests read.
diag.setLogger({ error() {}, warn() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.NONE);

/** @typedef {import('../helpers/collector.js').TestCollector} TestCollector */

/** @type {TestCollector} the one the exporters send to */
let mid;
/** @type {TestCollector} the forward target */
let upstream;

before(async () => {
  upstream = await startTestCollector();
  mid = await startTestCollector({ forwardTimeoutMs: 1500 });
});
after(async () => {
  await mid.stop();
  await upstream.stop();
});
beforeEach(async () => {
  for (const c of [mid, upstream]) {
    await c.clear();
    await c.api('/api/faults', { method: 'DELETE' });
  }
  await mid.api('/api/forward', { method: 'DELETE' });
});

/** @param {TestCollector} c @param {string} path @param {unknown} body */
const post = (c, path, body) => c.api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** @param {Record<string, unknown>} target */
const forwardTo = (target) => post(mid, '/api/forward', target);
const grpcUrl = () => upstream.urls.grpc.replace(/^http:/, 'grpc:');

/** @param {TestCollector} c @param {Record<string, unknown>} rule */
const addFault = (c, rule) => post(c, '/api/faults', rule);

/** The mid's journal for a signal, oldest first. @param {string} signal @returns {Promise<any[]>} */
async function midRequests(signal) {
  const { requests } = await mid.api(`/api/requests?signal=${signal}&order=asc`);
  return requests;
}

/** @param {any} exporter @param {any} items @returns {Promise<{ code: number, error?: Error }>} */
const exportItems = (exporter, items) => new Promise((resolve) => exporter.export(items, resolve));

/** One batch of SDK spans of `service`, through the official exporter of `wire`, to otlp-mock in the middle. @param {import('../helpers/exporters.js').Wire} wire @param {string} service */
async function exportSpans(wire, service) {
  const exporter = createExporter('traces', { wire, compression: 'none' }, mid.urls);
  const result = await exportItems(exporter, await sdkSpans(service));
  await exporter.shutdown();
  return result;
}

/** What a collector holds of one service, as the API lists it. @param {TestCollector} c @param {keyof SDK_ITEMS} signal @param {string} service */
async function held(c, signal, service) {
  const { kind } = SDK_ITEMS[signal];
  const body = await c.api(`/api/${kind}?service=${encodeURIComponent(service)}`);
  return withoutRequestIds(body[kind]);
}

/** Forward targets: every wire, and both re-encodings. */
/** @type {{ name: string, target: () => { url: string, encoding?: string, compression?: string }, transport: string }[]} */
const TARGETS = [
  { name: 'gRPC', target: () => ({ url: grpcUrl() }), transport: 'grpc' },
  { name: 'HTTP as received', target: () => ({ url: upstream.urls.http }), transport: 'http' },
  { name: 'HTTP JSON', target: () => ({ url: upstream.urls.http, encoding: 'json' }), transport: 'http' },
  { name: 'HTTP protobuf, gzip', target: () => ({ url: upstream.urls.http, encoding: 'protobuf', compression: 'gzip' }), transport: 'http' },
];

for (const { name, target, transport } of TARGETS) {
  describe(`forwarding to ${name}`, () => {
    for (const wire of WIRES) {
      for (const signal of /** @type {(keyof SDK_ITEMS)[]} */ (Object.keys(SDK_ITEMS))) {
        test(`${signal} from the ${wire} exporter arrive upstream once and the same`, async () => {
          await forwardTo(target());
          const service = `fwd-${transport}-${wire}-${signal}`;
          const exporter = createExporter(signal, { wire, compression: 'none' }, mid.urls);
          const result = await exportItems(exporter, await SDK_ITEMS[signal].make(service));
          await exporter.shutdown();
          assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));

          const there = await held(upstream, signal, service);
          assert.equal(there.length, SDK_ITEMS[signal].count);
          assert.deepEqual(there, await held(mid, signal, service));
          const upstreamJournal = (await upstream.api(`/api/requests?signal=${signal}`)).requests;
          assert.equal(upstreamJournal.length, 1, 'one request upstream');
          assert.equal(upstreamJournal[0].transport, transport);

          const [entry] = await midRequests(signal);
          assert.equal(entry.outcome, 'accepted');
          assert.equal(entry.stored, true);
          assert.equal(entry.upstream.outcome, 'accepted');
          assert.equal(entry.upstream.status, transport === 'grpc' ? 0 : 200);
          assert.equal(entry.upstream.transport, transport);
          assert.ok(entry.upstream.durationMs <= entry.durationMs);
          const expected = transport === 'grpc' ? 'protobuf' : (target().encoding ?? (wire === 'json' ? 'json' : 'protobuf'));
          assert.equal(entry.upstream.encoding, expected);
          if (transport === 'http') assert.match(upstreamJournal[0].contentType, expected === 'json' ? /json/ : /protobuf/);
        });
      }
    }
  });
}

test('a protobuf request of over 1 MiB reaches a JSON target whole, its JSON written on the worker thread', async () => {
  await forwardTo({ url: upstream.urls.http, encoding: 'json' });
  const service = 'fwd-large-json';
  const spans = Array.from({ length: 4000 }, (_, i) => ({
    traceId: (i + 1).toString(16).padStart(32, '0'),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name: `op${i}`,
    kind: 2,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000000001000000',
    attributes: [{ key: 'padding', value: { stringValue: 'v'.repeat(300) } }],
  }));
  const body = Buffer.from(
    encodeOtlpRequest('traces', {
      resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ scope: { name: 's' }, spans }] }],
    }),
  );
  assert.ok(body.length >= OFF_THREAD_AT, `${body.length} bytes`);
  const before = transcodedOffThread();
  const res = await fetch(`${mid.urls.http}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
  assert.equal(res.status, 200);
  // written as JSON for the target, then transcoded back by the target (in this process too)
  assert.equal(transcodedOffThread(), before + 2);
  /** @param {TestCollector} c */
  const all = async (c) => withoutRequestIds((await c.api(`/api/spans?service=${service}&limit=${spans.length}`)).spans);
  const there = await all(upstream);
  assert.equal(there.length, spans.length);
  assert.deepEqual(there, await all(mid));
  const [entry] = await midRequests('traces');
  assert.deepEqual([entry.upstream.outcome, entry.upstream.encoding], ['accepted', 'json']);
  const [arrived] = (await upstream.api('/api/requests?signal=traces')).requests;
  assert.match(arrived.contentType, /json/);
  assert.equal(entry.upstream.bytes, arrived.bytes, 'the JSON body, as the target received it');
});

/** Ms between consecutive arrivals. @param {any[]} entries */
const gapsOf = (entries) => entries.slice(1).map((e, i) => Date.parse(e.time) - Date.parse(entries[i].time));

/**
 * Exports one batch of spans and expects the JS gRPC exporter's answer: it does not retry (it never reports an
 * error as retryable), so what it was told is the whole story.
 * @param {string} service @returns {Promise<any>} the gRPC error
 */
async function grpcExportFails(service) {
  const result = await exportSpans('grpc', service);
  assert.equal(result.code, ExportResultCode.FAILED);
  return result.error;
}

/** @param {any} error a gRPC error @returns {number|null} the RetryInfo delay it carries */
function retryInfoMs(error) {
  const [bytes] = error.metadata.get('google.rpc.retryinfo-bin');
  if (!bytes) return null;
  const { retryDelay } = decodeRetryInfo(bytes);
  return retryDelay.seconds * 1000 + retryDelay.nanos / 1e6;
}

describe('faults on either side', () => {
  for (const wire of /** @type {const} */ (['proto', 'json'])) {
    test(`${wire}: a client-side throttle is retried; the upstream gets the batch once, from the retry`, async () => {
      await forwardTo({ url: grpcUrl() });
      const rule = await addFault(mid, { action: 'throttle', times: 1, retryAfterMs: 1000 });
      const service = `client-throttle-${wire}`;
      const result = await exportSpans(wire, service);
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));

      const entries = await midRequests('traces');
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.fault?.id ?? null, e.upstream?.outcome ?? null, e.stored ?? null]),
        [
          ['faulted', rule.id, null, null],
          ['accepted', null, 'accepted', true],
        ],
      );
      assert.ok(gapsOf(entries)[0] >= 990, `retried after ${gapsOf(entries)[0]} ms`);
      assert.equal((await held(upstream, 'traces', service)).length, 2);
      assert.equal((await upstream.api('/api/requests?signal=traces')).total, 1);
    });

    test(`${wire}: an upstream-side unavailable is passed on and retried; what arrived is stored both times`, async () => {
      await forwardTo({ url: upstream.urls.http });
      const rule = await addFault(mid, { action: 'unavailable', side: 'upstream', times: 1, retryAfterMs: 1000 });
      const service = `upstream-unavailable-${wire}`;
      const result = await exportSpans(wire, service);
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));

      const entries = await midRequests('traces');
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response.status, e.fault, e.upstream.outcome, e.upstream.status, e.stored]),
        [
          ['faulted', 503, { id: rule.id, action: 'unavailable', side: 'upstream' }, 'faulted', 503, true],
          ['accepted', 200, null, 'accepted', 200, true],
        ],
      );
      assert.deepEqual(entries[0].upstream.fault, { id: rule.id, action: 'unavailable' });
      assert.ok(gapsOf(entries)[0] >= 990, `retried after ${gapsOf(entries)[0]} ms`);
      // The upstream never heard of the first attempt; otlp-mock shows every batch that reached it.
      assert.equal((await upstream.api('/api/requests?signal=traces')).total, 1);
      assert.equal((await held(upstream, 'traces', service)).length, 2);
      assert.equal((await held(mid, 'traces', service)).length, 4);
      const report = await mid.api(`/api/faults/${rule.id}/report`);
      assert.equal(report.ok, true, report.message);
    });

    test(`${wire}: the upstream's own throttle reaches the exporter with its retry delay`, async () => {
      await forwardTo({ url: grpcUrl() });
      await addFault(upstream, { action: 'throttle', times: 1, retryAfterMs: 1000 });
      const service = `upstream-throttle-${wire}`;
      const result = await exportSpans(wire, service);
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));

      const entries = await midRequests('traces');
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response.status, e.fault, e.upstream.outcome, e.upstream.status]),
        [
          ['rejected', 503, null, 'refused', 14],
          ['accepted', 200, null, 'accepted', 0],
        ],
      );
      assert.match(entries[0].response.message, /too many requests/);
      assert.ok(gapsOf(entries)[0] >= 990, `retried after ${gapsOf(entries)[0]} ms`);
      assert.equal((await held(upstream, 'traces', service)).length, 2);
    });
  }

  test('grpc: an upstream-side throttle reaches the exporter as UNAVAILABLE with its RetryInfo', async () => {
    await forwardTo({ url: upstream.urls.http });
    const rule = await addFault(mid, { action: 'throttle', side: 'upstream', times: 1, retryAfterMs: 1500 });
    const error = await grpcExportFails('grpc-upstream-throttle');
    assert.equal(error.code, 14);
    // An OTLP/HTTP upstream says Retry-After in whole seconds: 2 s is what the client hears.
    assert.equal(retryInfoMs(error), 2000);
    const [entry] = await midRequests('traces');
    assert.deepEqual(
      [entry.outcome, entry.response.status, entry.fault, entry.upstream.status],
      ['faulted', 14, { id: rule.id, action: 'throttle', side: 'upstream' }, 429],
    );
    assert.equal((await upstream.api('/api/requests?signal=traces')).total, 0);
  });

  test("with a tee, an upstream-side times: 2 breaks two client requests (the primary's calls), and the journal says which leg took it", async () => {
    await forwardTo({ url: upstream.urls.http });
    await forwardTo({ url: grpcUrl() });
    const rule = await addFault(mid, { action: 'unavailable', side: 'upstream', times: 2, retryAfterMs: 100 });
    const result = await exportSpans('proto', 'tee-times');
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const entries = await midRequests('traces');
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.upstream.fault?.id ?? null, e.tees.map((/** @type {any} */ t) => [t.outcome, t.fault?.id ?? null])]),
      [
        ['faulted', rule.id, [['accepted', null]]],
        ['faulted', rule.id, [['accepted', null]]],
        ['accepted', null, [['accepted', null]]],
      ],
    );
    const state = await mid.api(`/api/faults/${rule.id}`);
    assert.deepEqual([state.per, state.applied, state.spent], ['request', 2, true]);
  });

  test("grpc: the upstream's own refusal reaches the exporter with its code and RetryInfo", async () => {
    await forwardTo({ url: grpcUrl() });
    await addFault(upstream, { action: 'throttle', grpcCode: 'RESOURCE_EXHAUSTED', retryAfterMs: 250, times: 1 });
    const error = await grpcExportFails('grpc-upstream-exhausted');
    assert.equal(error.code, 8);
    assert.equal(retryInfoMs(error), 250);
    const [entry] = await midRequests('traces');
    assert.deepEqual([entry.outcome, entry.response.status, entry.fault, entry.upstream.outcome, entry.stored], ['rejected', 8, null, 'refused', true]);
  });

  test('an upstream partial success reaches the client', async () => {
    await forwardTo({ url: grpcUrl() });
    await addFault(upstream, { action: 'partial', rejectItems: 1, message: 'one span too old' });
    const result = await exportSpans('json', 'partial');
    assert.equal(result.code, ExportResultCode.SUCCESS);
    const [entry] = await midRequests('traces');
    assert.equal(entry.outcome, 'partial');
    assert.deepEqual(entry.response.partialSuccess, { rejected: 1, errorMessage: 'one span too old' });
    assert.equal(entry.upstream.outcome, 'partial');
  });

  test('an upstream-side hang ends at the forward timeout: the exporter sees a retryable timeout and retries', async () => {
    await forwardTo({ url: upstream.urls.http });
    const rule = await addFault(mid, { action: 'hang', side: 'upstream', times: 1 });
    const result = await exportSpans('proto', 'upstream-hang');
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const entries = await midRequests('traces');
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.response.status, e.fault?.id ?? null, e.upstream.outcome, e.upstream.status]),
      [
        ['faulted', 504, rule.id, 'faulted', null],
        ['accepted', 200, null, 'accepted', 200],
      ],
    );
    assert.ok(entries[0].upstream.durationMs >= 1490, `the hang lasted ${entries[0].upstream.durationMs} ms`);
    assert.equal((await upstream.api('/api/requests?signal=traces')).total, 1);
  });

  test('an upstream-side reset is a dropped upstream connection: 502 and a retry', async () => {
    await forwardTo({ url: grpcUrl() });
    await addFault(mid, { action: 'reset', side: 'upstream', times: 1 });
    const result = await exportSpans('json', 'upstream-reset');
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const entries = await midRequests('traces');
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.response.status, e.upstream.outcome]),
      [
        ['faulted', 502, 'faulted'],
        ['accepted', 200, 'accepted'],
      ],
    );
  });
});

describe('targets', () => {
  test('an unreachable upstream: the client is told UNAVAILABLE / 502, the data is still shown', async () => {
    const closed = await freePort();
    await forwardTo({ url: `grpc://127.0.0.1:${closed}` });
    await forwardTo({ url: `http://127.0.0.1:${closed}` });
    const grpc = new GrpcTraceExporter({ url: mid.urls.grpc, timeoutMillis: 1500 });
    const result = await exportItems(grpc, await sdkSpans('unreachable'));
    await grpc.shutdown();
    assert.equal(result.code, ExportResultCode.FAILED);
    const entries = await midRequests('traces');
    assert.ok(entries.length >= 1);
    for (const e of entries) {
      assert.equal(e.outcome, 'rejected');
      assert.equal(e.response.status, 14);
      assert.equal(e.upstream.outcome, 'failed');
      assert.equal(e.upstream.status, null);
      assert.match(e.upstream.message, /ECONNREFUSED|No connection/i);
      assert.equal(e.stored, true);
    }
    // The tee was tried too.
    await waitFor(async () => (await midRequests('traces'))[0].tees[0].outcome === 'failed', { what: 'the tee to fail' });
    assert.ok((await held(mid, 'traces', 'unreachable')).length >= 2);
  });

  test('tees get every request; the client hears only the primary; a tee refusing is journaled', async () => {
    const second = await startTestCollector();
    try {
      const primary = await forwardTo({ url: grpcUrl() });
      const teeTarget = await forwardTo({ url: second.urls.http });
      assert.deepEqual([primary.role, teeTarget.role], ['primary', 'tee']);
      await addFault(second, { action: 'reject', times: 1 });
      const exporter = createExporter('logs', { wire: 'proto', compression: 'gzip' }, mid.urls);
      const result = await exportItems(exporter, await sdkLogs('tee'));
      await exporter.shutdown();
      assert.equal(result.code, ExportResultCode.SUCCESS);
      const [entry] = await midRequests('logs');
      assert.equal(entry.upstream.outcome, 'accepted');
      const tee = await waitFor(
        async () => {
          const [e] = await midRequests('logs');
          return e.tees[0].outcome !== 'pending' && e.tees[0];
        },
        { what: 'the tee to answer' },
      );
      assert.deepEqual([tee.target, tee.outcome, tee.status], [teeTarget.id, 'refused', 400]);
      assert.equal((await held(upstream, 'logs', 'tee')).length, 2);
      assert.equal((await second.api('/api/requests?signal=logs')).total, 1);
      const stats = await mid.api('/api/stats');
      assert.deepEqual(
        stats.forward.targets.map((/** @type {any} */ t) => [t.id, t.accepted, t.refused]),
        [
          [primary.id, 1, 0],
          [teeTarget.id, 0, 1],
        ],
      );
    } finally {
      await second.stop();
    }
  });

  test("the client's headers travel on, authorization included, with the target's own headers set over them", async () => {
    await forwardTo({ url: upstream.urls.http, headers: { 'x-scope': 'from-otlp-mock', 'x-drop': '' } });
    await forwardTo({ url: grpcUrl(), headers: { authorization: 'Bearer upstream-token' } });
    // The journal redacts authorization; a rule matching it shows which value arrived.
    await addFault(upstream, { action: 'partial', rejectItems: 1, match: { headers: { authorization: 'Bearer upstream-token' } } });
    await addFault(upstream, { action: 'partial', rejectItems: 2, match: { headers: { authorization: 'Bearer app' } } });
    const exporter = new HttpTraceExporter({
      url: `${mid.urls.http}/v1/traces`,
      headers: { authorization: 'Bearer app', 'x-tenant': 'acme', 'x-drop': 'secret', 'x-scope': 'from-app' },
    });
    const result = await exportItems(exporter, await sdkSpans('headers'));
    await exporter.shutdown();
    assert.equal(result.code, ExportResultCode.SUCCESS);
    const [entry] = await midRequests('traces');
    assert.equal(entry.upstream.partialSuccess.rejected, 2);
    const tee = await waitFor(
      async () => {
        const [e] = await midRequests('traces');
        return e.tees[0].outcome !== 'pending' && e.tees[0];
      },
      { what: 'the tee to answer' },
    );
    assert.equal(tee.partialSuccess.rejected, 1);

    const { requests } = await upstream.api('/api/requests?signal=traces');
    const http = requests.find((/** @type {any} */ r) => r.transport === 'http');
    const grpc = requests.find((/** @type {any} */ r) => r.transport === 'grpc');
    assert.equal(http.headers['x-scope'], 'from-otlp-mock');
    assert.equal(http.headers['x-drop'], undefined);
    assert.equal(http.headers['x-tenant'], 'acme');
    assert.match(http.userAgent, /OTel-OTLP-Exporter-JavaScript/);
    assert.equal(grpc.headers['x-tenant'], 'acme');
    assert.equal(grpc.headers['x-scope'], 'from-app');
  });

  test('gRPC metadata travels on to an OTLP/HTTP target as headers', async () => {
    await forwardTo({ url: upstream.urls.http });
    const metadata = new Metadata();
    metadata.set('x-tenant', 'grpc-acme');
    const exporter = new GrpcTraceExporter({ url: mid.urls.grpc, metadata });
    assert.equal((await exportItems(exporter, await sdkSpans('metadata'))).code, ExportResultCode.SUCCESS);
    await exporter.shutdown();
    const { requests } = await upstream.api('/api/requests?signal=traces');
    assert.equal(requests[0].headers['x-tenant'], 'grpc-acme');
    assert.equal(requests[0].headers['content-type'], 'application/x-protobuf');
  });
});
