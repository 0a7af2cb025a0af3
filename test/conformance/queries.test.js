// Spans received in protobuf are stored unbuilt and filtered from their bytes; spans received as OTLP/JSON
// are stored decoded. Every span query must answer the same for both.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { encodeRequest } from '../../server/otlp/schema.js';

/** @param {string} file */
const fixture = (file) => readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));

test('span filters answer alike for spans stored unbuilt (protobuf) and decoded (JSON)', async (t) => {
  const proto = await startTestCollector({ print: 'none' });
  const json = await startTestCollector({ print: 'none' });
  t.after(() => Promise.all([proto.stop(), json.stop()]));
  assert.equal((await postOtlp(proto.urls.http, '/v1/traces', fixture('traces.pb'), 'application/x-protobuf')).status, 200);
  assert.equal((await postOtlp(json.urls.http, '/v1/traces', fixture('traces.json'), 'application/json')).status, 200);

  const { spans } = await json.api('/api/spans');
  assert.ok(spans.length > 5);
  const queries = new Set(['', 'error=true', 'name=nothing-is-called-this', 'attr.absent=1', 'limit=2']);
  for (const s of spans) {
    queries.add(`name=${encodeURIComponent(s.name)}`);
    queries.add(`traceId=${s.traceId}`);
    queries.add(`service=${encodeURIComponent(s.resource['service.name'] ?? '')}&error=true`);
    for (const [key, value] of Object.entries({ ...s.attributes, ...s.resource }).slice(0, 6)) {
      const text = typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
      queries.add(`attr.${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
      queries.add(`attr.${encodeURIComponent(key)}=${encodeURIComponent(text)}&name=${encodeURIComponent(s.name)}`);
    }
  }
  let nonEmpty = 0;
  for (const q of queries) {
    const [a, b] = await Promise.all([proto.api(`/api/spans?${q}`), json.api(`/api/spans?${q}`)]);
    assert.deepStrictEqual(a, b, q);
    if (a.total > 0 && a.total < spans.length) nonEmpty++;
  }
  assert.ok(nonEmpty > 10, `${nonEmpty} of ${queries.size} queries select some spans but not all`);
});

test('GET /api/traces summarises every stored trace from its spans, alike for protobuf and JSON', async (t) => {
  const proto = await startTestCollector({ print: 'none' });
  const json = await startTestCollector({ print: 'none' });
  t.after(() => Promise.all([proto.stop(), json.stop()]));
  const orphan = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'worker' } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: '11111111111111111111111111111111',
                spanId: '2222222222222222',
                parentSpanId: '3333333333333333',
                name: 'late child',
                startTimeUnixNano: '1768469400000000000',
                endTimeUnixNano: '1768469400002500000',
                status: { code: 2 },
              },
            ],
          },
        ],
      },
    ],
  };
  /** @type {[import('../helpers/collector.js').TestCollector, Uint8Array, string][]} */
  const sends = [
    [proto, fixture('traces.pb'), 'application/x-protobuf'],
    [json, fixture('traces.json'), 'application/json'],
    [proto, encodeRequest('traces', orphan), 'application/x-protobuf'],
    [json, Buffer.from(JSON.stringify(orphan)), 'application/json'],
  ];
  for (const [c, body, type] of sends) assert.equal((await postOtlp(c.urls.http, '/v1/traces', body, type)).status, 200);

  const all = await proto.api('/api/traces');
  assert.deepStrictEqual(all, await json.api('/api/traces'));
  const { spans } = await json.api('/api/spans');
  const ids = [...new Set(spans.map((/** @type {any} */ s) => s.traceId))];
  assert.equal(all.total, ids.length);
  assert.deepStrictEqual(
    all.traces.map((/** @type {any} */ r) => r.traceId),
    ids,
    'in order of first arrival',
  );
  for (const row of all.traces) {
    const own = spans.filter((/** @type {any} */ s) => s.traceId === row.traceId);
    const root = own.find((/** @type {any} */ s) => s.parentSpanId === '');
    const starts = own.map((/** @type {any} */ s) => BigInt(s.startTimeUnixNano));
    const ends = own.map((/** @type {any} */ s) => BigInt(s.endTimeUnixNano));
    const min = starts.reduce((/** @type {bigint} */ a, /** @type {bigint} */ b) => (b < a ? b : a));
    const max = ends.reduce((/** @type {bigint} */ a, /** @type {bigint} */ b) => (b > a ? b : a));
    assert.deepStrictEqual(row, {
      traceId: row.traceId,
      rootName: (root ?? own[0]).name,
      rootService: (root ?? own[0]).service,
      hasRoot: Boolean(root),
      services: [...new Set(own.map((/** @type {any} */ s) => s.service))],
      spanCount: own.length,
      errorCount: own.filter((/** @type {any} */ s) => s.status.code === 2).length,
      startTimeUnixNano: String(min),
      endTimeUnixNano: String(max),
      durationNanos: String(max - min),
    });
  }
  const orphanRow = all.traces.find((/** @type {any} */ r) => r.traceId === '11111111111111111111111111111111');
  assert.equal(orphanRow.hasRoot, false);
  assert.equal(orphanRow.rootName, 'late child');
  assert.equal(orphanRow.durationNanos, '2500000');

  const errors = await proto.api('/api/traces?error=true');
  assert.deepStrictEqual(
    errors.traces,
    all.traces.filter((/** @type {any} */ r) => r.errorCount > 0),
  );
  const worker = await proto.api('/api/traces?service=worker');
  assert.deepStrictEqual(worker.traces, [orphanRow]);
  const newest = await proto.api('/api/traces?limit=1');
  assert.deepStrictEqual(newest.traces, [all.traces.at(-1)]);
  assert.equal(newest.total, all.total);
  const older = await proto.api(`/api/traces?limit=1&cursor=${newest.nextCursor}`);
  assert.deepStrictEqual(older, { traces: [all.traces.at(-2)], total: all.total }, 'the last page has no nextCursor');
});
