// Fault injection end to end: official exporters and a raw gRPC client against a real collector, with
// the request journal as the proof of what each client was told and how it reacted.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTestCollector } from '../helpers/collector.js';
import { createExporter } from '../helpers/exporters.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { postOtlp, rawRequest } from '../helpers/http.js';
import { encodeOtlpRequest } from '../helpers/otlp-pb.js';
import { waitFor } from '../helpers/wait.js';
import { decodeRetryInfo, decodeStatus, responseType } from '../../server/otlp/schema.js';

const TRACE_SERVICE = 'opentelemetry.proto.collector.trace.v1.TraceService';
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
/** A timer may fire a hair early against a millisecond wall clock; "about 1 s" allows for that. */
const ONE_SECOND_ISH = 990;

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;

before(async () => {
  // Retry reports turn final 1 s after a retryable answer with no retry (8.5 s by default), so a test can wait for it.
  collector = await startTestCollector({ retryWindowMs: 1000 });
});
after(() => collector.stop());
beforeEach(async () => {
  await collector.clear();
  await collector.api('/api/faults', { method: 'DELETE' });
});

/** @param {Record<string, unknown>} rule @returns {Promise<any>} */
function addFault(rule) {
  return collector.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) });
}

/** Journal entries for traces, oldest first. @returns {Promise<any[]>} */
async function traceRequests() {
  const { requests } = await collector.api('/api/requests?signal=traces');
  return requests.reverse();
}

/** @param {string} service @returns {Promise<{ spans: any[], total: number }>} */
function storedSpans(service) {
  return collector.api(`/api/spans?service=${encodeURIComponent(service)}`);
}

/** Three finished spans from the real SDK for one service. @param {string} service */
async function sdkSpans(service) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('faults-test');
  for (const name of ['checkout', 'charge', 'ship']) tracer.startSpan(name).end();
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** @param {any} exporter @param {any[]} spans @returns {Promise<{ code: number, error?: any }>} */
function exportSpans(exporter, spans) {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** An OTLP/JSON traces request with one span. @param {string} service @param {number} [n] */
function tracesJson(service, n = 1) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            scope: { name: 'raw' },
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: (n + 1).toString(16).padStart(16, '0'),
                name: `op-${n}`,
                kind: 1,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000000100000000',
              },
            ],
          },
        ],
      },
    ],
  };
}

/**
 * A raw gRPC client on a connection of its own: grpc-js shares one connection between clients of the same target
 * and options, and a reset drops every call on its connection.
 * @param {Record<string, unknown>} [options] more channel options
 */
function ownConnection(options = {}) {
  const client = new grpc.Client(new URL(collector.urls.grpc).host, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, ...options });
  return {
    /** @param {string} service @param {Uint8Array} bytes @param {{ metadata?: Record<string, string> }} [options] */
    exportRaw: (service, bytes, { metadata = {} } = {}) =>
      new Promise((resolve) => {
        const md = new grpc.Metadata();
        for (const [k, v] of Object.entries(metadata)) md.set(k, v);
        client.makeUnaryRequest(
          `/${service}/Export`,
          (/** @type {Buffer} */ b) => b,
          (/** @type {Buffer} */ b) => b,
          Buffer.from(bytes),
          md,
          { deadline: Date.now() + 10_000 },
          (error) => resolve({ error: /** @type {grpc.ServiceError|null} */ (error ?? null) }),
        );
      }),
    close: () => client.close(),
  };
}

/** @param {any[]} entries @returns {number[]} ms between consecutive request arrivals */
const gapsOf = (entries) => entries.slice(1).map((e, i) => Date.parse(e.time) - Date.parse(entries[i].time));

for (const wire of /** @type {const} */ (['proto', 'json'])) {
  describe(`official exporter over HTTP ${wire}`, () => {
    const signalUrls = () => ({ grpc: collector.urls.grpc, http: collector.urls.http });
    /** One export through a fresh official exporter of `wire`, shut down after. @param {'proto'|'json'} wire @param {any[]} spans */
    const exportOver = async (wire, spans) => {
      const exporter = createExporter('traces', { wire, compression: 'none' }, signalUrls());
      const result = await exportSpans(exporter, spans);
      await exporter.shutdown();
      return result;
    };

    test('throttle times 2, retryAfterMs 1000: three attempts about 1 s apart, spans stored once', async () => {
      const service = `throttle-${wire}`;
      const rule = await addFault({ action: 'throttle', signals: ['traces'], times: 2, retryAfterMs: 1000 });
      const spans = await sdkSpans(service);
      const result = await exportOver(wire, spans);
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));

      const entries = await traceRequests();
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response.status, e.fault?.id ?? null, e.fault?.action ?? null]),
        [
          ['faulted', 429, rule.id, 'throttle'],
          ['faulted', 429, rule.id, 'throttle'],
          ['accepted', 200, null, null],
        ],
      );
      for (const gap of gapsOf(entries)) assert.ok(gap >= ONE_SECOND_ISH, `retry came ${gap} ms after the previous attempt`);

      const stored = await storedSpans(service);
      assert.equal(stored.total, 3);
      assert.deepEqual(stored.spans.map((s) => s.spanId).sort(), spans.map((s) => s.spanContext().spanId).sort());
      const [state] = (await collector.api('/api/faults')).faults;
      assert.deepEqual([state.applied, state.remaining, state.spent], [2, 0, true]);
    });

    test("unavailable times 2: retried with the exporter's own backoff, spans stored once", async () => {
      const service = `unavailable-${wire}`;
      const rule = await addFault({ action: 'unavailable', signals: ['traces'], times: 2 });
      const result = await exportOver(wire, await sdkSpans(service));
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
      const entries = await traceRequests();
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response.status, e.fault?.id ?? null]),
        [
          ['faulted', 503, rule.id],
          ['faulted', 503, rule.id],
          ['accepted', 200, null],
        ],
      );
      assert.equal((await storedSpans(service)).total, 3);
    });

    test('reject: not retried, nothing stored, the exporter reports the 400', async () => {
      const service = `reject-${wire}`;
      const rule = await addFault({ action: 'reject', signals: ['traces'], message: 'spans refused by test' });
      const result = await exportOver(wire, await sdkSpans(service));
      assert.equal(result.code, ExportResultCode.FAILED);
      assert.equal(result.error?.code, 400);
      if (wire === 'json')
        assert.deepEqual(JSON.parse(result.error.data), {
          code: 3,
          message: 'spans refused by test',
          details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: 'spans refused by test' }] }],
        });
      const entries = await traceRequests();
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response.status, e.fault?.id]),
        [['faulted', 400, rule.id]],
      );
      assert.equal((await storedSpans(service)).total, 0);
    });

    test('reset times 1: the exporter sees ECONNRESET and retries; the journal shows the attempt without an answer', async () => {
      const service = `reset-${wire}`;
      const rule = await addFault({ action: 'reset', signals: ['traces'], times: 1 });
      const result = await exportOver(wire, await sdkSpans(service));
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
      const entries = await traceRequests();
      assert.deepEqual(
        entries.map((e) => [e.outcome, e.response?.status ?? null, e.fault?.id ?? null]),
        [
          ['reset', null, rule.id],
          ['accepted', 200, null],
        ],
      );
      assert.ok(!('response' in entries[0]), 'nothing was sent for the reset attempt');
      assert.equal((await storedSpans(service)).total, 3);
      const report = await collector.api(`/api/faults/${rule.id}/report`);
      assert.deepEqual([report.verdict, report.ok, report.chains[0].attempts.map((/** @type {any} */ a) => a.status)], ['retried', true, [null, 200]]);
    });

    test('partial: accepted, stored, and the exporter warns with the message', async (t) => {
      const service = `partial-${wire}`;
      /** @type {string[]} */
      const warnings = [];
      const record = (/** @type {unknown[]} */ ...args) => void warnings.push(args.map(String).join(' '));
      diag.setLogger({ error: record, warn: record, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
      t.after(() => diag.disable());
      await addFault({ action: 'partial', match: { resource: { 'service.name': service } }, rejectItems: 2, message: 'two spans too long' });
      const result = await exportOver(wire, await sdkSpans(service));
      assert.equal(result.code, ExportResultCode.SUCCESS);
      const warning = warnings.find((w) => w.includes('Partial Success'));
      assert.ok(warning, `warnings seen: ${JSON.stringify(warnings)}`);
      assert.match(warning, /"rejectedSpans":"?2"?/);
      assert.match(warning, /two spans too long/);
      const [entry] = await traceRequests();
      assert.equal(entry.outcome, 'partial');
      assert.deepEqual(entry.response.partialSuccess, { rejected: 2, errorMessage: 'two spans too long' });
      assert.equal((await storedSpans(service)).total, 3);
    });
  });
}

describe('official exporter over gRPC', () => {
  // exporter-trace-otlp-grpc 0.223 resolves every gRPC error as a failure (grpc-exporter-transport.js), so it
  // never retries, UNAVAILABLE included: the retry report says so.
  test('reset times 1: the exporter sees UNAVAILABLE; the journal shows the attempt without an answer', async () => {
    const service = 'grpc-exporter-reset';
    const rule = await addFault({ action: 'reset', signals: ['traces'], times: 1 });
    const exporter = createExporter('traces', { wire: 'grpc', compression: 'none' }, { grpc: collector.urls.grpc, http: collector.urls.http });
    const spans = await sdkSpans(service);
    const first = await exportSpans(exporter, spans);
    assert.equal(first.code, ExportResultCode.FAILED);
    assert.equal(first.error?.code, grpcStatus.UNAVAILABLE, String(first.error));
    const second = await exportSpans(exporter, spans.slice(0, 2));
    await exporter.shutdown();
    assert.equal(second.code, ExportResultCode.SUCCESS, String(second.error));
    const entries = await traceRequests();
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.response?.status ?? null, e.items, e.fault?.id ?? null]),
      [
        ['reset', null, 3, rule.id],
        ['accepted', 0, 2, null],
      ],
    );
    assert.equal((await storedSpans(service)).total, 2);
    const report = await waitFor(
      async () => {
        const r = await collector.api(`/api/faults/${rule.id}/report`);
        return r.final ? r : null;
      },
      { what: 'the retry report to become final' },
    );
    assert.deepEqual([report.verdict, report.ok], ['did not retry', false]);
    assert.match(report.message, /UNAVAILABLE, which is retryable/);
  });
});

describe('raw gRPC client', () => {
  /** @type {ReturnType<typeof rawGrpcClient>} */
  let a;
  /** @type {ReturnType<typeof rawGrpcClient>} */
  let b;
  before(() => {
    a = rawGrpcClient(collector.urls.grpc);
    b = rawGrpcClient(collector.urls.grpc);
  });
  after(() => {
    a.close();
    b.close();
  });
  const request = (/** @type {string} */ service) => encodeOtlpRequest('traces', tracesJson(service));

  test('throttle: status details carry the same code and one RetryInfo; retryinfo-bin the same RetryInfo', async () => {
    const rule = await addFault({ action: 'throttle', transports: ['grpc'], retryAfterMs: 1500 });
    const { error } = await a.exportRaw(TRACE_SERVICE, request('grpc-throttle'));
    assert.ok(error);
    assert.equal(error.code, grpcStatus.UNAVAILABLE);
    assert.equal(error.details, rule.message);
    const statusBin = error.metadata.get('grpc-status-details-bin');
    assert.equal(statusBin.length, 1);
    const status = decodeStatus(/** @type {Buffer} */ (statusBin[0]));
    assert.equal(status.code, error.code);
    assert.equal(status.message, rule.message);
    const delay = { retryDelay: { seconds: 1, nanos: 500_000_000 } };
    assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: delay }]);
    const retryBin = error.metadata.get('google.rpc.retryinfo-bin');
    assert.equal(retryBin.length, 1);
    assert.deepEqual(decodeRetryInfo(/** @type {Buffer} */ (retryBin[0])), delay);
    const [entry] = await traceRequests();
    assert.deepEqual([entry.transport, entry.outcome, entry.response.status, entry.fault], ['grpc', 'faulted', 14, { id: rule.id, action: 'throttle' }]);
    assert.equal((await storedSpans('grpc-throttle')).total, 0);
  });

  test('throttle as RESOURCE_EXHAUSTED keeps status details and grpc-status in agreement', async () => {
    await addFault({ action: 'throttle', grpcCode: 'RESOURCE_EXHAUSTED', retryAfterMs: 250 });
    const { error } = await a.exportRaw(TRACE_SERVICE, request('grpc-exhausted'));
    assert.equal(error?.code, grpcStatus.RESOURCE_EXHAUSTED);
    const status = decodeStatus(/** @type {Buffer} */ (error.metadata.get('grpc-status-details-bin')[0]));
    assert.equal(status.code, grpcStatus.RESOURCE_EXHAUSTED);
    assert.deepEqual(status.details[0].value, { retryDelay: { seconds: 0, nanos: 250_000_000 } });
  });

  test('partial: OK with the partial-success message, data stored', async () => {
    await addFault({ action: 'partial', transports: ['grpc'], rejectItems: 1, message: 'one span dropped' });
    const { error, response } = await a.exportRaw(TRACE_SERVICE, request('grpc-partial'));
    assert.equal(error, null);
    assert.ok(response);
    const decoded = /** @type {any} */ (responseType('traces').toObject(responseType('traces').decode(response), { longs: Number }));
    assert.deepEqual(decoded.partialSuccess, { rejectedSpans: 1, errorMessage: 'one span dropped' });
    assert.equal((await storedSpans('grpc-partial')).total, 1);
  });

  test('reset: the faulted client sees UNAVAILABLE while a client on another connection is served', async () => {
    const rule = await addFault({ action: 'reset', match: { headers: { 'x-client': 'a' } } });
    const other = ownConnection();
    try {
      const [faulted, served] = await Promise.all([
        a.exportRaw(TRACE_SERVICE, request('grpc-reset-a'), { metadata: { 'x-client': 'a' } }),
        other.exportRaw(TRACE_SERVICE, request('grpc-reset-b'), { metadata: { 'x-client': 'b' } }),
      ]);
      assert.equal(faulted.error?.code, grpcStatus.UNAVAILABLE, faulted.error?.details);
      assert.equal(served.error, null);
    } finally {
      other.close();
    }
    const again = await b.exportRaw(TRACE_SERVICE, request('grpc-reset-b'));
    assert.equal(again.error, null);
    assert.equal((await storedSpans('grpc-reset-a')).total, 0);
    assert.equal((await storedSpans('grpc-reset-b')).total, 2);
    const faulted = (await traceRequests()).filter((e) => e.fault);
    assert.deepEqual(
      faulted.map((e) => [e.outcome, e.fault.id, 'response' in e]),
      [['reset', rule.id, false]],
    );
  });

  test('reset: a client that retries UNAVAILABLE delivers on its next attempt, stored once', async () => {
    const rule = await addFault({ action: 'reset', times: 1 });
    const retrying = ownConnection({
      'grpc.service_config': JSON.stringify({
        methodConfig: [
          {
            name: [{ service: TRACE_SERVICE }],
            retryPolicy: { maxAttempts: 3, initialBackoff: '0.05s', maxBackoff: '0.2s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
          },
        ],
      }),
    });
    try {
      const { error } = await retrying.exportRaw(TRACE_SERVICE, request('grpc-reset-retry'));
      assert.equal(error, null);
    } finally {
      retrying.close();
    }
    const entries = await traceRequests();
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.response?.status ?? null, e.fault?.id ?? null]),
      [
        ['reset', null, rule.id],
        ['accepted', 0, null],
      ],
    );
    assert.equal((await storedSpans('grpc-reset-retry')).total, 1);
    const report = await collector.api(`/api/faults/${rule.id}/report`);
    assert.deepEqual([report.verdict, report.ok], ['retried', true]);
  });

  test('hang: the faulted client hits its deadline while another client is served meanwhile', async () => {
    await addFault({ action: 'hang', match: { headers: { 'x-client': 'a' } } });
    let hungSettled = false;
    const hung = a.exportRaw(TRACE_SERVICE, request('grpc-hang-a'), { metadata: { 'x-client': 'a' }, timeoutMs: 1500 }).then((r) => {
      hungSettled = true;
      return r;
    });
    await waitFor(async () => (await collector.api('/api/faults')).faults[0].applied === 1, { what: 'the hang fault to be applied' });
    const served = await b.exportRaw(TRACE_SERVICE, request('grpc-hang-b'), { metadata: { 'x-client': 'b' } });
    assert.equal(served.error, null);
    assert.equal(hungSettled, false, 'the other client was served while the hung call was still waiting');
    const { error } = await hung;
    assert.equal(error?.code, grpcStatus.DEADLINE_EXCEEDED);
    const entry = await waitFor(async () => (await traceRequests()).find((e) => e.fault?.action === 'hang'), { what: 'the hang journal entry' });
    assert.equal(entry.outcome, 'hang');
    assert.ok(!('response' in entry), 'nothing was sent: the client gave up');
    assert.equal((await storedSpans('grpc-hang-a')).total, 0);
    assert.equal((await storedSpans('grpc-hang-b')).total, 1);
  });
});

describe('HTTP wire', () => {
  const json = (/** @type {string} */ service, n = 1) => JSON.stringify(tracesJson(service, n));

  test('a burst of 200 concurrent requests against times 10 faults exactly 10', async () => {
    const rule = await addFault({ action: 'throttle', signals: ['traces'], times: 10, retryAfterMs: 1 });
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => postOtlp(collector.urls.http, '/v1/traces', json('burst', i), 'application/json')));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 429).length, 10);
    assert.equal(statuses.filter((s) => s === 200).length, 190);
    const throttled = responses.find((r) => r.status === 429);
    assert.equal(throttled?.headers['retry-after'], '1');
    assert.match(String(throttled?.headers['content-type']), /^application\/json\b/);
    assert.equal(JSON.parse(String(throttled?.body)).details[0]['@type'], RETRY_INFO);
    assert.equal((await storedSpans('burst')).total, 190);
    const [state] = (await collector.api('/api/faults')).faults;
    assert.deepEqual([state.matched, state.applied, state.remaining, state.spent], [10, 10, 0, true]);
    assert.equal(rule.times, 10);
  });

  test('throttle over protobuf: 429, Retry-After and a protobuf google.rpc.Status', async () => {
    await addFault({ action: 'throttle', retryAfterMs: 2500 });
    const res = await postOtlp(collector.urls.http, '/v1/traces', encodeOtlpRequest('traces', tracesJson('pb')), 'application/x-protobuf');
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '3');
    assert.equal(res.headers['content-type'], 'application/x-protobuf');
    const status = decodeStatus(res.body);
    assert.equal(status.code, grpcStatus.UNAVAILABLE);
    assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: { retryDelay: { seconds: 2, nanos: 500_000_000 } } }]);
  });

  test('match on service.name and on a header decides per request', async () => {
    await addFault({ action: 'reject', match: { resource: { 'service.name': 'billing' }, headers: { 'x-tenant': 'blue' } } });
    const post = (/** @type {string} */ service, /** @type {string} */ tenant) =>
      postOtlp(collector.urls.http, '/v1/traces', json(service), 'application/json', { 'X-Tenant': tenant });
    assert.equal((await post('billing', 'blue')).status, 400);
    assert.equal((await post('billing', 'green')).status, 200);
    assert.equal((await post('search', 'blue')).status, 200);
  });

  test('delay: the normal answer after delayMs, data stored', async () => {
    await addFault({ action: 'delay', delayMs: 300 });
    const res = await postOtlp(collector.urls.http, '/v1/traces', json('slow'), 'application/json');
    assert.equal(res.status, 200);
    assert.ok(res.ms >= 290, `answered after ${res.ms} ms`);
    assert.equal((await storedSpans('slow')).total, 1);
    const [entry] = await traceRequests();
    assert.deepEqual([entry.outcome, entry.fault?.action], ['accepted', 'delay']);
  });

  test('reset: the connection is reset (ECONNRESET) with no answer, nothing stored', async () => {
    await addFault({ action: 'reset', transports: ['http'] });
    await assert.rejects(postOtlp(collector.urls.http, '/v1/traces', json('reset-http'), 'application/json'), (/** @type {any} */ err) => {
      assert.equal(err.code, 'ECONNRESET');
      assert.doesNotMatch(err.message, /socket hang up/, 'a reset, not a close');
      return true;
    });
    assert.equal((await storedSpans('reset-http')).total, 0);
    const entry = await waitFor(async () => (await traceRequests())[0], { what: 'the reset journal entry' });
    assert.deepEqual([entry.outcome, entry.fault?.action, 'response' in entry], ['reset', 'reset', false]);
  });
});

test("hang is bounded by the collector's hang limit on both transports", async (t) => {
  const short = await startTestCollector({ hangLimitMs: 300, faults: [{ action: 'hang' }] });
  t.after(() => short.stop());
  const client = rawGrpcClient(short.urls.grpc);
  t.after(() => client.close());
  const started = Date.now();
  const [grpcResult, httpResult] = await Promise.all([
    client.exportRaw(TRACE_SERVICE, encodeOtlpRequest('traces', tracesJson('bounded')), { timeoutMs: 10_000 }),
    rawRequest(`${short.urls.http}/v1/traces`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(tracesJson('bounded')) }).then(
      () => null,
      (/** @type {Error} */ err) => err,
    ),
  ]);
  const elapsed = Date.now() - started;
  assert.equal(grpcResult.error?.code, grpcStatus.DEADLINE_EXCEEDED);
  assert.ok(httpResult instanceof Error, 'the held HTTP request ends without an answer');
  assert.ok(elapsed >= 290 && elapsed < 5000, `released after ${elapsed} ms`);
  const entries = await waitFor(
    async () => {
      const { requests } = await short.api('/api/requests');
      return requests.length === 2 ? requests : null;
    },
    { what: 'both hang journal entries' },
  );
  const byTransport = Object.fromEntries(entries.map((/** @type {any} */ e) => [e.transport, [e.outcome, e.response?.status ?? null]]));
  assert.deepEqual(byTransport, { grpc: ['hang', grpcStatus.DEADLINE_EXCEEDED], http: ['hang', null] });
});

describe('a client that gives up while its answer is held by a delay', () => {
  /** @param {number} ruleId @returns {Promise<any>} the journal entry, once the delay is over */
  const entryOf = (ruleId) =>
    waitFor(async () => (await traceRequests()).find((e) => e.fault?.id === ruleId), { what: 'the delayed request in the journal', timeoutMs: 5000 });

  test('HTTP: journaled abandoned when the client leaves, with no response; its data stored; a retry after it is judged one', async () => {
    const rule = await addFault({ action: 'delay', delayMs: 3000, times: 1 });
    const send = (/** @type {AbortSignal|undefined} */ signal) =>
      fetch(`${collector.urls.http}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tracesJson('abandoned-http')),
        signal,
      });
    const failed = await send(AbortSignal.timeout(200)).then(
      () => null,
      (/** @type {Error} */ err) => err,
    );
    assert.equal(failed?.name, 'TimeoutError');
    const entry = await entryOf(rule.id);
    assert.deepEqual([entry.outcome, 'response' in entry], ['abandoned', false]);
    assert.ok(entry.durationMs < 2000, `journaled when the client left (after 200 ms by its clock), not after the 3 s delay: ${entry.durationMs} ms`);
    assert.equal((await storedSpans('abandoned-http')).total, 1, 'a delay stores what it holds');
    // What an exporter with time left does: the same batch again.
    assert.equal((await send(undefined)).status, 200);
    const report = await collector.api(`/api/faults/${rule.id}/report`);
    assert.equal(report.ok, true, report.message);
    assert.match(report.message, /the client gave up before the answer/);
  });

  test('gRPC: a client deadline shorter than the delay is journaled abandoned with no response', async () => {
    const rule = await addFault({ action: 'delay', delayMs: 3000, times: 1 });
    const client = rawGrpcClient(collector.urls.grpc);
    const { error } = await client.exportRaw(TRACE_SERVICE, encodeOtlpRequest('traces', tracesJson('abandoned-grpc')), { timeoutMs: 500 });
    client.close();
    assert.equal(error?.code, grpcStatus.DEADLINE_EXCEEDED);
    const entry = await entryOf(rule.id);
    assert.deepEqual([entry.outcome, 'response' in entry], ['abandoned', false]);
    assert.ok(entry.durationMs < 2500, `journaled when the client left, not after the delay: ${entry.durationMs} ms`);
    assert.equal((await storedSpans('abandoned-grpc')).total, 1);
  });

  test("a delay within the client's patience is answered and journaled accepted", async () => {
    const rule = await addFault({ action: 'delay', delayMs: 200, times: 1 });
    const client = rawGrpcClient(collector.urls.grpc);
    const { error } = await client.exportRaw(TRACE_SERVICE, encodeOtlpRequest('traces', tracesJson('patient-grpc')), { timeoutMs: 5000 });
    client.close();
    assert.equal(error, null);
    const entry = await entryOf(rule.id);
    assert.deepEqual([entry.outcome, entry.response.status], ['accepted', 0]);
  });
});
