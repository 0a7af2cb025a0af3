// A request over 1 MiB, or holding many items, is decoded and stored a part at a time (receive.js decideCounted), so
// that a request of as many items as the store keeps (spans, tiny log records, samples of one profile read through its
// dictionary) does not hold the event loop. Stored in parts or not, it must be the one request it was: stored whole or
// not at all, one journal entry, one printed line, its fault rules matched over all of it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { startTestCollector } from '../helpers/collector.js';
import { rawRequest } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { encodePb } from '../helpers/payloads.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { profileRequest } from '../helpers/ui-data.js';
import { SIGNALS } from '../../server/otlp/signals.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { encodeRequest } from '../../server/otlp/schema.js';

const TRACES = 'opentelemetry.proto.collector.trace.v1.TraceService';
const SPANS = 100_000;
const SAMPLES = 100_000;

/**
 * `n` spans of one service, in traces of 10 spans, with `pad` bytes of attribute each.
 * @param {number} n @param {{ service?: string, pad?: number, badLast?: boolean }} [options] `badLast`: the last span's
 *   trace id is 15 bytes, which the decode refuses
 */
function spans(n, { service = 'large', pad = 0, badLast = false } = {}) {
  const id = (/** @type {number} */ i, /** @type {number} */ bytes) => i.toString(16).padStart(2 * bytes, '0');
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            scope: { name: 'large' },
            spans: Array.from({ length: n }, (_, i) => ({
              traceId: badLast && i === n - 1 ? id(1, 15) : id(1 + Math.floor(i / 10), 16),
              spanId: id(1 + i, 8),
              name: 's',
              ...(pad ? { attributes: [{ key: 'pad', value: { stringValue: 'p'.repeat(pad) } }] } : {}),
            })),
          },
        ],
      },
    ],
  };
}

/** @param {string} url @param {Uint8Array|string} body @param {string} [type] */
const post = (url, body, type = 'application/x-protobuf') => rawRequest(`${url}/v1/traces`, { headers: { 'content-type': type }, body });

describe('a request of as many spans as the store keeps', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  before(async () => {
    c = await startTestCollector({ print: 'none' });
  });
  after(() => c.stop());

  test('is stored whole, once, over HTTP in protobuf and OTLP/JSON and over gRPC', async () => {
    const request = spans(SPANS);
    const protobuf = encodePb('traces', request);
    assert.ok(protobuf.length > 3_000_000, `${protobuf.length} bytes`);
    const grpc = rawGrpcClient(c.urls.grpc);
    try {
      const answers = [
        (await post(c.urls.http, protobuf)).status,
        (await post(c.urls.http, JSON.stringify(request), 'application/json')).status,
        (await grpc.exportRaw(TRACES, protobuf)).error?.code ?? 0,
      ];
      assert.deepEqual(answers, [200, 200, grpcStatus.OK]);
    } finally {
      grpc.close();
    }
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.traces.stored, SPANS);
    assert.equal(stats.signals.traces.received, 3 * SPANS);
    const journal = await c.api('/api/requests?limit=10');
    assert.deepEqual(
      journal.requests.map((/** @type {any} */ r) => r.items),
      [SPANS, SPANS, SPANS],
    );
    // The last request's spans are the store: its first trace and its last whole.
    const first = await c.api('/api/traces/' + (1).toString(16).padStart(32, '0'));
    const last = await c.api('/api/traces/' + (SPANS / 10).toString(16).padStart(32, '0'));
    assert.equal(first.spans.length, 10);
    assert.equal(last.spans.length, 10);
    await c.clear();
  });

  test('each in a resource group of its own is stored whole, each span with its own service', async () => {
    const one = spans(1).resourceSpans[0];
    const request = {
      resourceSpans: Array.from({ length: SPANS }, (_, i) => ({
        resource: { attributes: [{ key: 'service.name', value: { stringValue: `service-${i % 1000}` } }] },
        scopeSpans: [{ ...one.scopeSpans[0], spans: [{ ...one.scopeSpans[0].spans[0], traceId: (i + 1).toString(16).padStart(32, '0') }] }],
      })),
    };
    const res = await post(c.urls.http, encodePb('traces', request));
    assert.equal(res.status, 200);
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.traces.stored, SPANS);
    const last = await c.api('/api/traces/' + SPANS.toString(16).padStart(32, '0'));
    assert.equal(last.spans[0].service, `service-${(SPANS - 1) % 1000}`);
    await c.clear();
  });

  test('whose last span is malformed is refused, and nothing of it is stored', async () => {
    const res = await post(c.urls.http, encodePb('traces', spans(SPANS, { badLast: true })));
    assert.equal(res.status, 400);
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.traces.received, 0);
  });

  test('meets the fault rules that match its resource, and nothing of it is stored when it is refused', async () => {
    await c.api('/api/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'unavailable', match: { resource: { 'service.name': 'refused' } } }),
    });
    const refused = await post(c.urls.http, encodePb('traces', spans(SPANS, { service: 'refused' })));
    assert.equal(refused.status, 503);
    const kept = await post(c.urls.http, encodePb('traces', spans(SPANS, { service: 'kept' })));
    assert.equal(kept.status, 200);
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.traces.received, SPANS);
    await c.api('/api/faults', { method: 'DELETE' });
    await c.clear();
  });
});

test('a large request stored in parts is printed as one line holding all its spans', async () => {
  const out = new PassThrough();
  let printed = '';
  out.setEncoding('utf8');
  out.on('data', (chunk) => (printed += chunk));
  const c = await startTestCollector({ print: 'json', printTo: out });
  try {
    // 5,000 spans of 250 bytes: 1.4 MB, stored in three parts.
    const body = encodePb('traces', spans(5000, { pad: 200 }));
    assert.ok(body.length > 1024 * 1024);
    assert.equal((await post(c.urls.http, body)).status, 200);
    const line = await waitFor(() => printed.includes('\n') && printed, { what: 'the printed line' });
    const lines = line.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const request = JSON.parse(lines[0]);
    const names = request.resourceSpans.flatMap((/** @type {any} */ g) => g.scopeSpans.flatMap((/** @type {any} */ s) => s.spans));
    assert.equal(names.length, 5000);
  } finally {
    await c.stop();
  }
});

test('a profile of 100,000 samples, each with a stack of its own, is stored whole over HTTP in protobuf and OTLP/JSON and over gRPC', async () => {
  const c = await startTestCollector({ print: 'none' });
  const grpc = rawGrpcClient(c.urls.grpc);
  try {
    const samples = Array.from({ length: SAMPLES }, (_, i) => ({ stack: [`leaf${i % 50}`, `caller${i % 7}`, 'main'], value: 1 + (i % 10) }));
    const request = profileRequest('profiled', [{ profileId: 'ab'.repeat(16), type: 'cpu', unit: 'nanoseconds', startMs: 1_700_000_000_000, durMs: 1000, samples }]);
    const protobuf = encodeRequest('profiles', decodeJson(SIGNALS.profiles, JSON.stringify(request)));
    assert.ok(protobuf.length > 1024 * 1024, `${protobuf.length} bytes: decoded in slices`);
    const url = `${c.urls.http}${SIGNALS.profiles.httpPath}`;
    const answers = [
      (await rawRequest(url, { headers: { 'content-type': 'application/x-protobuf' }, body: protobuf })).status,
      (await rawRequest(url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) })).status,
      (await grpc.exportRaw(SIGNALS.profiles.grpcService, protobuf)).error?.code ?? 0,
    ];
    assert.deepEqual(answers, [200, 200, grpcStatus.OK]);
    const stats = await c.api('/api/stats');
    assert.equal(stats.signals.profiles.stored, SAMPLES);
    assert.equal(stats.signals.profiles.received, 3 * SAMPLES);
    // The store holds the last request's samples, each read through the dictionary.
    const aggregate = await c.api('/api/profiles/aggregate?top=3');
    assert.equal(aggregate.samples, SAMPLES);
    assert.equal(
      aggregate.total,
      samples.reduce((sum, s) => sum + s.value, 0),
    );
    assert.deepEqual(
      aggregate.tree.children.map((/** @type {any} */ n) => [n.name, n.total]),
      [['main', aggregate.total]],
    );
  } finally {
    grpc.close();
    await c.stop();
  }
});

test('a request under 1 MiB holding many items is stored in parts, one of fewer items at once, in protobuf and OTLP/JSON', async () => {
  const c = await startTestCollector({ print: 'none' });
  /** @type {number[]} the items of each batch the store's observers saw */
  const parts = [];
  c.store.subscribe(({ entries }) => parts.push(entries.length));
  const logs = (/** @type {number} */ n) => ({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: n }, () => ({})) }] }] });
  /** The batches a request of `n` empty log records was stored in. @param {number} n @param {boolean} json */
  const storedIn = async (n, json) => {
    parts.length = 0;
    const body = json ? JSON.stringify(logs(n)) : encodePb('logs', logs(n));
    const type = json ? 'application/json' : 'application/x-protobuf';
    assert.equal((await rawRequest(`${c.urls.http}/v1/logs`, { headers: { 'content-type': type }, body })).status, 200);
    return [...parts];
  };
  try {
    for (const json of [false, true]) {
      // 40,000 records: 80 KB of protobuf, more than the 32,768 items a request decided at once may hold.
      const many = await storedIn(40_000, json);
      assert.ok(many.length > 10, `${many.length} parts`);
      assert.equal(
        many.reduce((a, b) => a + b, 0),
        40_000,
      );
      assert.deepEqual(await storedIn(30_000, json), [30_000]);
    }
    const journal = await c.api('/api/requests?limit=10');
    assert.deepEqual(
      journal.requests.map((/** @type {any} */ r) => r.items),
      [30_000, 40_000, 30_000, 40_000],
    );
  } finally {
    await c.stop();
  }
});
