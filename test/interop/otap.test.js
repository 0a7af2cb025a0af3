// OTAP (OTel Arrow) interop: a Go client on otel-arrow's own producer and gRPC stubs (test/otap, the producer the
// Collector's otelarrow exporter uses) sends the same pdata over OTAP to one collector and over OTLP/gRPC to another;
// what each stores must be the same. Without go a developer's run skips it and says why; CI=true makes that a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { startTestCollector } from '../helpers/collector.js';
import { waitFor } from '../helpers/wait.js';
import { otapClient, otapSkip as skip } from '../helpers/otap-client.js';

const send = otapClient();
/** @type {Awaited<ReturnType<typeof startTestCollector>>} */
let otap;
/** @type {Awaited<ReturnType<typeof startTestCollector>>} */
let otlp;

before(async () => {
  if (skip) return;
  otap = await startTestCollector();
  otlp = await startTestCollector();
});

after(async () => {
  await otap?.stop();
  await otlp?.stop();
});

/** The snapshot with its signal's part sorted by content: streams interleave, so arrival order differs. */
async function stored(/** @type {any} */ collector) {
  const snapshot = await collector.api('/api/snapshot');
  for (const key of Object.keys(snapshot)) {
    if (Array.isArray(snapshot[key])) snapshot[key] = snapshot[key].map((x) => JSON.stringify(x)).sort();
  }
  return snapshot;
}

for (const signal of ['traces', 'logs', 'metrics']) {
  test(`OTAP ${signal}: many batches on one stream and across streams, stored as the same data over OTLP`, { skip }, async () => {
    await otap.clear();
    await otlp.clear();
    const args = ['-signal', signal, '-batches', '6', '-size', '50'];
    const one = await send(otap, [...args, '-streams', '1']);
    const three = await send(otap, [...args, '-streams', '3']);
    for (const { statuses, summary } of [one, three]) {
      assert.equal(summary.error, undefined);
      assert.equal(summary.statuses, summary.sent);
      assert.ok(
        statuses.every((/** @type {any} */ s) => s.code === 0),
        JSON.stringify(statuses.find((/** @type {any} */ s) => s.code !== 0)),
      );
      for (const stream of new Set(statuses.map((/** @type {any} */ s) => s.stream))) {
        const batches = statuses.filter((/** @type {any} */ s) => s.stream === stream).map((/** @type {any} */ s) => s.batch);
        assert.deepEqual(batches, [0, 1, 2, 3, 4, 5], 'one status per batch, in order');
      }
    }
    await send(otlp, [...args, '-streams', '1', '-via', 'otlp']);
    await send(otlp, [...args, '-streams', '3', '-via', 'otlp']);
    assert.deepEqual(await stored(otap), await stored(otlp));

    const { requests } = await otap.api('/api/requests?limit=100&transport=otap');
    assert.equal(requests.length, 24, 'one journal entry per batch');
    for (const entry of requests) {
      assert.equal(entry.transport, 'otap');
      assert.equal(entry.signal, signal);
      assert.equal(entry.items, 50);
      assert.equal(entry.outcome, 'accepted');
      assert.ok(entry.bytes > 0);
    }
    /** @type {Map<number, string[]>} */
    const byStream = new Map();
    for (const entry of [...requests].reverse()) byStream.set(entry.otap.stream, [...(byStream.get(entry.otap.stream) ?? []), entry.otap.batch]);
    assert.equal(byStream.size, 4, 'four streams, each with a number of its own');
    for (const batches of byStream.values()) assert.deepEqual(batches, ['0', '1', '2', '3', '4', '5'], 'each stream names its batches');
  });
}

test('OTAP logs: batches of 50,000 records, written and stored in slices, are stored whole as over OTLP', { skip }, async () => {
  await otap.clear();
  await otlp.clear();
  const args = ['-signal', 'logs', '-batches', '2', '-size', '50000', '-quiet'];
  const { summary } = await send(otap, args);
  assert.equal(summary.error, undefined);
  assert.equal(summary.statuses, 2);
  await send(otlp, [...args, '-via', 'otlp']);
  const { requests } = await otap.api('/api/requests?limit=10&transport=otap');
  assert.deepEqual(
    requests.map((/** @type {any} */ r) => [r.items, r.outcome]),
    [
      [50_000, 'accepted'],
      [50_000, 'accepted'],
    ],
  );
  const [a, b] = await Promise.all([otap, otlp].map((c) => c.api('/api/stats')));
  assert.equal(a.signals.logs.stored, 100_000);
  assert.equal(b.signals.logs.stored, 100_000);
  // The first and last records of each batch (test/otap/data.go gives each an attribute of its own), as either path stored them.
  for (const unique of ['s0-b0-i0', 's0-b0-i49999', 's0-b1-i0', 's0-b1-i49999']) {
    const [x, y] = await Promise.all([otap, otlp].map((c) => c.api(`/api/logs?attr.unique=${unique}`)));
    assert.equal(x.logs.length, 1, unique);
    assert.deepEqual(x.logs, y.logs, unique);
  }
});

/** @param {Record<string, unknown>} rule */
async function withRule(rule) {
  await otap.api('/api/faults', { method: 'DELETE' });
  await otap.clear();
  await otap.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transports: ['otap'], times: 1, ...rule }) });
}

const FAULTS = [
  { rule: { action: 'unavailable' }, code: 14 },
  { rule: { action: 'throttle', retryAfterMs: 2000 }, code: 8, message: /retry after 2 s/ },
  { rule: { action: 'throttle', retryAfterMs: 1500, grpcCode: 'ABORTED' }, code: 10, message: /retry after 1.5 s/ },
  { rule: { action: 'unavailable', retryAfterMs: 1500 }, code: 14, message: /retry after 1.5 s/ },
  { rule: { action: 'reject' }, code: 3 },
];

for (const { rule, code, message } of FAULTS) {
  test(`OTAP fault ${rule.action}${rule.grpcCode ? ` ${rule.grpcCode}` : ''}: the faulted batch's status is code ${code}, and the stream goes on`, { skip }, async () => {
    await withRule(rule);
    const { statuses, summary } = await send(otap, ['-signal', 'logs', '-batches', '3', '-size', '5']);
    assert.equal(summary.error, undefined);
    assert.deepEqual(
      statuses.map((/** @type {any} */ s) => [s.batch, s.code]),
      [
        [0, code],
        [1, 0],
        [2, 0],
      ],
    );
    if (message) assert.match(statuses[0].message, message);
    const { requests } = await otap.api('/api/requests?limit=10');
    const faulted = requests.find((/** @type {any} */ e) => e.fault);
    assert.equal(faulted.transport, 'otap');
    assert.equal(faulted.response.status, code);
    assert.equal((await otap.api('/api/logs?limit=100')).logs.length, 10, 'the faulted batch is not stored');
  });
}

test('OTAP fault delay: the status comes after the delay, and the batch is stored', { skip }, async () => {
  await withRule({ action: 'delay', delayMs: 600 });
  const { statuses, summary } = await send(otap, ['-signal', 'traces', '-batches', '2', '-size', '5']);
  assert.deepEqual(
    statuses.map((/** @type {any} */ s) => s.code),
    [0, 0],
  );
  assert.ok(summary.seconds >= 0.6, `took ${summary.seconds} s`);
  assert.equal((await otap.api('/api/spans?limit=100')).spans.length, 10);
});

test('OTAP fault reset: the stream ends, with nothing stored of the batch', { skip }, async () => {
  await withRule({ action: 'reset' });
  const { statuses, summary } = await send(otap, ['-signal', 'traces', '-batches', '3', '-size', '5']);
  assert.equal(statuses.length, 0);
  assert.match(summary.error, /Canceled|Unavailable|EOF|RST_STREAM/i);
  const { requests } = await otap.api('/api/requests?limit=10');
  assert.deepEqual(
    requests.map((/** @type {any} */ e) => e.outcome),
    ['reset'],
  );
});

test('OTAP fault hang: the status is withheld until the hang limit, then DEADLINE_EXCEEDED', { skip }, async () => {
  const hung = await startTestCollector({ hangLimitMs: 700 });
  try {
    await hung.api('/api/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'hang', transports: ['otap'], times: 1 }),
    });
    const { statuses, summary } = await send(hung, ['-signal', 'metrics', '-batches', '2', '-size', '5']);
    assert.deepEqual(
      statuses.map((/** @type {any} */ s) => s.code),
      [4, 0],
    );
    assert.ok(summary.seconds >= 0.7, `took ${summary.seconds} s`);
  } finally {
    await hung.stop();
  }
});

test('OTAP: a rule for other transports leaves OTAP batches alone', { skip }, async () => {
  await withRule({ action: 'unavailable', transports: ['grpc', 'http'], times: 5 });
  const { statuses } = await send(otap, ['-signal', 'traces', '-batches', '2', '-size', '5']);
  assert.deepEqual(
    statuses.map((/** @type {any} */ s) => s.code),
    [0, 0],
  );
  await otap.api('/api/faults', { method: 'DELETE' });
});

test('OTAP forward: batches received over OTAP go on to an OTLP/gRPC target as the same data', { skip }, async () => {
  const target = await startTestCollector();
  const mid = await startTestCollector({ forward: [target.urls.grpc.replace(/^http:/, 'grpc:')] });
  try {
    const { statuses } = await send(mid, ['-signal', 'traces', '-batches', '3', '-size', '20']);
    assert.deepEqual(
      statuses.map((/** @type {any} */ s) => s.code),
      [0, 0, 0],
    );
    assert.deepEqual(await stored(target), await stored(mid));
    const { requests } = await mid.api('/api/requests?limit=10');
    assert.ok(
      requests.every((/** @type {any} */ e) => e.transport === 'otap' && e.upstream?.outcome === 'accepted'),
      JSON.stringify(requests[0]),
    );
  } finally {
    await mid.stop();
    await target.stop();
  }
});

/** The rule's retry report once it is final. @param {Awaited<ReturnType<typeof startTestCollector>>} collector @param {string} id */
async function finalReport(collector, id) {
  let report;
  for (let i = 0; i < 50; i++) {
    report = await collector.api(`/api/faults/${id}/report`);
    if (report.final) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return report;
}

test('OTAP retry report: batches answered by a fault are judged by what a BatchStatus can say, and a resent batch counts as its retry', { skip }, async () => {
  const judged = await startTestCollector({ retryWindowMs: 200 });
  try {
    const post = (/** @type {Record<string, unknown>} */ rule) =>
      judged.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transports: ['otap'], times: 1, ...rule }) });

    const dropped = await post({ action: 'unavailable' });
    await send(judged, ['-signal', 'traces', '-batches', '1', '-size', '7']);
    const notRetried = await finalReport(judged, dropped.id);
    assert.equal(notRetried.verdict, 'did not retry', notRetried.message);
    assert.match(notRetried.message, /OTAP status code 14: retryable/);

    // The retry hint is only in the message, so a resend sooner than it asks is no fault of the exporter's.
    const unavailable = await post({ action: 'unavailable', retryAfterMs: 5000 });
    const resent = await send(judged, ['-signal', 'traces', '-batches', '2', '-size', '9', '-retry', '50ms']);
    assert.deepEqual(
      resent.statuses.map((/** @type {any} */ s) => s.code),
      [14, 0, 0],
    );
    const retried = await finalReport(judged, unavailable.id);
    assert.equal(retried.verdict, 'retried', retried.message);
    assert.equal(retried.ok, true);

    // RESOURCE_EXHAUSTED without RetryInfo is given up, as otel-arrow's exporter gives it up.
    const throttle = await post({ action: 'throttle', retryAfterMs: 1000 });
    const throttled = await send(judged, ['-signal', 'traces', '-batches', '1', '-size', '11', '-retry', '50ms']);
    assert.deepEqual(
      throttled.statuses.map((/** @type {any} */ s) => s.code),
      [8],
    );
    assert.match(throttled.statuses[0].message, /retry after 1 s/);
    const gaveUp = await finalReport(judged, throttle.id);
    assert.equal(gaveUp.verdict, 'did not retry a non-retryable error', gaveUp.message);
    assert.match(gaveUp.message, /RESOURCE_EXHAUSTED in an OTAP BatchStatus, which carries no RetryInfo/);
    assert.equal((await judged.api('/api/spans?limit=100')).spans.length, 9 * 2, 'each batch stored once, the faulted ones not at all');
  } finally {
    await judged.stop();
  }
});

test("OTAP console lines: each batch's line names its stream and batch_id, so interleaved streams read apart", { skip }, async () => {
  const out = new PassThrough();
  let printed = '';
  out.setEncoding('utf8').on('data', (chunk) => (printed += chunk));
  const printing = await startTestCollector({ print: 'summary', printTo: out });
  try {
    await send(printing, ['-signal', 'logs', '-batches', '2', '-size', '3', '-streams', '2']);
    await waitFor(() => printed.split('\n').filter((l) => l.includes(' otap ')).length === 4, { what: 'four OTAP lines' });
    /** @type {Map<string, string[]>} */
    const batches = new Map();
    for (const line of printed.split('\n').filter((l) => l.includes(' otap '))) {
      const [, stream, batch] = /otap (\d+)#(\d+) +logs .* 3 log records$/.exec(line) ?? assert.fail(line);
      batches.set(stream, [...(batches.get(stream) ?? []), batch].sort());
    }
    assert.deepEqual(
      [...batches.values()],
      [
        ['0', '1'],
        ['0', '1'],
      ],
    );
  } finally {
    await printing.stop();
  }
});
