// GET /api/signals: the web app's view of the signal table, which its tabs, counts and signal choices read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';
import { SIGNAL_LIST } from '../../server/otlp/signals.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;

before(async () => {
  collector = await startTestCollector();
});

after(() => collector?.stop());

test('GET /api/signals lists every signal of the table, in its order, with the words the UI shows', async () => {
  const { signals } = await collector.api('/api/signals');
  assert.deepEqual(
    signals.map((/** @type {any} */ s) => s.name),
    SIGNAL_LIST.map((s) => s.name),
  );
  assert.deepEqual(signals[0], { name: 'traces', label: 'Traces', order: 0, listKind: 'spans', item: { one: 'span', many: 'spans' }, short: 'spans' });
  const shown = [...signals].sort((a, b) => a.order - b.order).map((/** @type {any} */ s) => s.label);
  assert.deepEqual(shown, ['Traces', 'Logs', 'Metrics', 'Profiles'], 'the tabs keep their order');
  for (const s of signals) {
    const list = await collector.api(`/api/${s.listKind}`);
    assert.equal(typeof list.total, 'number', `GET /api/${s.listKind} lists the items of ${s.name}`);
  }
  const stats = await collector.api('/api/stats');
  assert.deepEqual(Object.keys(stats.signals).sort(), signals.map((/** @type {any} */ s) => s.name).sort(), 'stats name the same signals');
});

test('/api/openapi.json documents GET /api/signals with its response schema', async () => {
  const doc = await collector.api('/api/openapi.json');
  const schema = doc.paths['/api/signals'].get.responses['200'].content['application/json'].schema;
  const item = doc.components.schemas[schema.properties.signals.items.$ref.replace('#/components/schemas/', '')];
  assert.deepEqual(item.required, ['name', 'label', 'order', 'listKind', 'item', 'short']);
  assert.deepEqual(
    item.properties.name.enum,
    SIGNAL_LIST.map((s) => s.name),
  );
});
