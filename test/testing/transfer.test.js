// Export → import: what one collector stored, replayed into another (through /api/import, --import, or
// plain OTLP/HTTP), gives the same query results, down to 64-bit integers, non-finite doubles and exemplars.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../../server/index.js';
import { send } from './data.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = (/** @type {string} */ name) => readFileSync(join(root, 'fixtures', name));

/** @param {string} key @param {any} value */
const kv = (key, value) => ({ key, value });
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const resource = (/** @type {string} */ service) => ({
  attributes: [kv('service.name', { stringValue: service }), kv('host.cpus', { intValue: '9007199254740993' })],
  droppedAttributesCount: 1,
});
const scope = { name: 'edge-cases', version: '0.0.1', attributes: [kv('scope.attr', { boolValue: true })] };

/** Values a lossy encoder would break: int64 beyond 2^53 both ways, NaN and infinities, bytes, nesting. */
const attributes = [
  kv('int.max', { intValue: '9223372036854775807' }),
  kv('int.min', { intValue: '-9223372036854775808' }),
  kv('int.small', { intValue: '42' }),
  kv('double.nan', { doubleValue: 'NaN' }),
  kv('double.inf', { doubleValue: 'Infinity' }),
  kv('double.ninf', { doubleValue: '-Infinity' }),
  kv('double.tiny', { doubleValue: 5e-324 }),
  kv('bytes', { bytesValue: 'AP8Q' }),
  kv('list', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '18014398509481985' }, {}] } }),
  kv('map', { kvlistValue: { values: [kv('inner', { kvlistValue: { values: [kv('deep', { boolValue: false })] } })] } }),
  kv('unicode', { stringValue: 'naïve ☃ \u0000 "quoted"' }),
];

const traces = {
  resourceSpans: [
    {
      resource: resource('edge'),
      schemaUrl: 'https://opentelemetry.io/schemas/1.30.0',
      scopeSpans: [
        {
          scope,
          schemaUrl: 'https://example.test/scope',
          spans: [
            {
              traceId: TRACE,
              spanId: SPAN,
              parentSpanId: '',
              traceState: 'k=v',
              flags: 769,
              name: 'edge span',
              kind: 'SPAN_KIND_CONSUMER',
              startTimeUnixNano: '18446744073709551614',
              endTimeUnixNano: '18446744073709551615',
              attributes,
              droppedAttributesCount: 2,
              events: [{ timeUnixNano: '1768469400000000001', name: 'ev', attributes: [kv('n', { doubleValue: 'NaN' })], droppedAttributesCount: 3 }],
              droppedEventsCount: 4,
              links: [{ traceId: TRACE, spanId: '00f067aa0ba902b7', traceState: 'a=b', attributes, flags: 256 }],
              droppedLinksCount: 5,
              status: { code: 2, message: 'boom' },
            },
          ],
        },
      ],
    },
  ],
};

const exemplars = [
  { filteredAttributes: attributes, timeUnixNano: '1768469400000000002', asInt: '-9223372036854775807', spanId: SPAN, traceId: TRACE },
  { filteredAttributes: [], timeUnixNano: '1768469400000000003', asDouble: 'Infinity', spanId: '', traceId: '' },
];
const t = { startTimeUnixNano: '1768469300000000000', timeUnixNano: '1768469400000000000' };

const metrics = {
  resourceMetrics: [
    {
      resource: resource('edge'),
      scopeMetrics: [
        {
          scope,
          metrics: [
            {
              name: 'g.int',
              unit: 'By',
              description: 'int gauge',
              metadata: [kv('m', { stringValue: 'x' })],
              gauge: { dataPoints: [{ ...t, asInt: '9223372036854775807', attributes, exemplars, flags: 1 }] },
            },
            {
              name: 'g.nan',
              gauge: {
                dataPoints: [
                  { ...t, asDouble: 'NaN' },
                  { ...t, asDouble: '-Infinity' },
                  { ...t, asDouble: 0.1 },
                ],
              },
            },
            { name: 's', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ ...t, asInt: '-1', exemplars }] } },
            {
              name: 'h',
              histogram: {
                aggregationTemporality: 2,
                dataPoints: [
                  {
                    ...t,
                    count: '18446744073709551615',
                    sum: 'Infinity',
                    bucketCounts: ['18446744073709551615', '0', '1'],
                    explicitBounds: [0, 'Infinity'],
                    min: '-Infinity',
                    max: 'NaN',
                    exemplars,
                  },
                  { ...t, count: '0', bucketCounts: [], explicitBounds: [] },
                ],
              },
            },
            {
              name: 'eh',
              exponentialHistogram: {
                aggregationTemporality: 1,
                dataPoints: [
                  {
                    ...t,
                    count: '9007199254740993',
                    sum: 1.5,
                    scale: -3,
                    zeroCount: '18446744073709551615',
                    zeroThreshold: 1e-300,
                    positive: { offset: -2147483648, bucketCounts: ['1', '9007199254740993'] },
                    negative: { offset: 7, bucketCounts: [] },
                    min: 0,
                    max: 'NaN',
                    exemplars,
                  },
                ],
              },
            },
            {
              name: 'sm',
              summary: {
                dataPoints: [
                  {
                    ...t,
                    count: '3',
                    sum: 'NaN',
                    quantileValues: [
                      { quantile: 0.5, value: 'Infinity' },
                      { quantile: 1, value: -0.5 },
                    ],
                  },
                ],
              },
            },
          ],
        },
      ],
    },
  ],
};

const logs = {
  resourceLogs: [
    {
      resource: resource('edge'),
      scopeLogs: [
        {
          scope,
          logRecords: [
            {
              timeUnixNano: '18446744073709551615',
              observedTimeUnixNano: '1768469400000000000',
              severityNumber: 'SEVERITY_NUMBER_FATAL4',
              severityText: 'FATAL',
              body: { kvlistValue: { values: [kv('big', { intValue: '-9223372036854775808' }), kv('nan', { doubleValue: 'NaN' })] } },
              attributes,
              droppedAttributesCount: 6,
              flags: 1,
              traceId: TRACE,
              spanId: SPAN,
              eventName: 'edge.event',
            },
            { timeUnixNano: '1', body: { bytesValue: '/w==' } },
          ],
        },
      ],
    },
  ],
};

/** @type {Awaited<ReturnType<typeof startCollector>>} */
let source;
let exported = '';
const tmp = mkdtempSync(join(tmpdir(), 'otlp-mock-transfer-'));

/** Everything the query API says about a collector's data; request ids are the receiving collector's own. */
/** @param {Awaited<ReturnType<typeof startCollector>>} c */
async function snapshot(c) {
  /** @param {string} path */
  const get = async (path) => (await fetch(c.urls.ui + path)).json();
  /** @param {any[]} list */
  const strip = (list) => list.map(({ requestId, ...rest }) => rest);
  return {
    spans: strip((await get('/api/spans?limit=100000')).spans),
    logs: strip((await get('/api/logs?limit=100000')).logs),
    metrics: (await get('/api/metrics?limit=100000')).metrics,
    stats: Object.fromEntries(Object.entries(c.store.stats()).map(([k, v]) => [k, v.stored])),
  };
}

before(async () => {
  source = await startCollector();
  const pb = { 'content-type': 'application/x-protobuf' };
  for (const signal of ['traces', 'metrics', 'logs']) {
    const res = await fetch(`${source.urls.http}/v1/${signal}`, { method: 'POST', headers: pb, body: fixture(`${signal}.pb`) });
    assert.equal(res.status, 200);
  }
  assert.equal(await send(source, 'traces', traces), 200);
  assert.equal(await send(source, 'metrics', metrics), 200);
  assert.equal(await send(source, 'logs', logs), 200);
  await source.client.faults.add({ action: 'unavailable', times: 1 });
  assert.equal(await send(source, 'traces', traces), 503, 'a faulted request is not stored, so not exported');
  const res = await fetch(source.urls.ui + '/api/export');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  exported = await res.text();
});
after(async () => {
  await source.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test('the export holds one OTLP/JSON request per stored request, in arrival order, non-finite doubles spelled out', () => {
  const lines = exported.trimEnd().split('\n');
  assert.deepEqual(
    lines.map((l) => Object.keys(JSON.parse(l))[0]),
    ['resourceSpans', 'resourceMetrics', 'resourceLogs', 'resourceSpans', 'resourceMetrics', 'resourceLogs'],
  );
  const edge = JSON.parse(lines[4]).resourceMetrics[0].scopeMetrics[0].metrics;
  assert.deepEqual(
    edge[1].gauge.dataPoints.map((/** @type {any} */ p) => p.asDouble),
    ['NaN', '-Infinity', 0.1],
  );
  assert.equal(edge[0].gauge.dataPoints[0].asInt, '9223372036854775807');
  assert.equal(edge[0].gauge.dataPoints[0].exemplars[0].asInt, '-9223372036854775807');
  assert.equal(JSON.parse(lines[3]).resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano, '18446744073709551615');
});

/** The decoders may order keys differently; what a line says is what counts. @param {string} text */
const parsed = (text) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));

test('importing the export into a fresh collector gives identical query results and the same export', async () => {
  const target = await startCollector();
  try {
    const result = await target.client.import(exported);
    assert.equal(result.requests, 6);
    assert.deepEqual(await snapshot(target), await snapshot(source));
    assert.deepEqual(parsed(await target.client.export()), parsed(exported));
    assert.deepEqual(parsed(await target.client.export({ signal: 'metrics' })), parsed(await source.client.export({ signal: 'metrics' })));
    const journal = await target.client.requests();
    assert.equal(journal.length, 6);
    assert.ok(journal.every((e) => e.transport === 'import' && e.outcome === 'accepted' && e.path === '/api/import'));
    assert.deepEqual(
      (await target.client.requests({ transport: 'import', signal: 'logs' })).map((e) => e.items),
      [2, 28],
    );
  } finally {
    await target.stop();
  }
});

test('each exported line replayed to OTLP/HTTP gives the same results too', async () => {
  const target = await startCollector();
  try {
    for (const line of exported.trimEnd().split('\n')) {
      const signal = { resourceSpans: 'traces', resourceMetrics: 'metrics', resourceLogs: 'logs' }[Object.keys(JSON.parse(line))[0]];
      assert.equal(await send(target, /** @type {any} */ (signal), line), 200);
    }
    assert.deepEqual(await snapshot(target), await snapshot(source));
  } finally {
    await target.stop();
  }
});

test('importFiles (--import) loads an export before the collector listens', async () => {
  const file = join(tmp, 'all.jsonl');
  writeFileSync(file, exported);
  const target = await startCollector({ importFiles: [file] });
  try {
    assert.deepEqual(target.imported, [{ file, requests: 6, items: { traces: 11, metrics: 22, logs: 30, profiles: 0 } }]);
    assert.deepEqual(await snapshot(target), await snapshot(source));
  } finally {
    await target.stop();
  }
});

test('an invalid line is refused by number and nothing of the import is stored', async () => {
  const target = await startCollector();
  try {
    const good = exported.split('\n')[0];
    const bad = good.replace(/"traceId":"[0-9a-f]{32}"/, '"traceId":"not-hex"');
    const res = await fetch(target.urls.ui + '/api/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: `${good}\n\n${bad}\n` });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.line, 3);
    assert.match(body.error, /^line 3: invalid OTLP\/JSON at resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId: /);
    assert.equal((await target.client.stats()).signals.traces.stored, 0);

    const ndjson = { 'content-type': 'application/x-ndjson' };
    const unknown = await fetch(target.urls.ui + '/api/import', { method: 'POST', headers: ndjson, body: '{"spans":[]}' });
    assert.equal(unknown.status, 400);
    assert.match((await unknown.json()).error, /^line 1: cannot tell the signal/);
    const forced = await fetch(target.urls.ui + '/api/import?signal=logs', { method: 'POST', headers: ndjson, body: '{}\n' });
    assert.deepEqual(await forced.json(), { requests: 1, items: { traces: 0, metrics: 0, logs: 0, profiles: 0 } });
  } finally {
    await target.stop();
  }
});

test('the CLI refuses a bad --import file, naming the file and line', () => {
  const file = join(tmp, 'bad.jsonl');
  writeFileSync(file, `${exported.split('\n')[0]}\n{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"LOUD"}]}]}]}\n`);
  const run = spawnSync(process.execPath, ['server/cli.js', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--import', file], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30000,
  });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, new RegExp(`^otlp-mock: import file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line 2: invalid OTLP/JSON at resourceLogs\\[0\\]`));
});
