// Spans received in protobuf are stored unbuilt and filtered from their bytes; spans received as OTLP/JSON
// are stored decoded. Every span query must answer the same for both.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';

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
