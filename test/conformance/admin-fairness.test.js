// The admin API takes its turn after ingest: a client past its budget gets 429 with Retry-After and a
// google.rpc.Status, refused and open requests spend no budget, and admin requests take turns without a query that
// waits for data holding anyone up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCollector } from '../helpers/collector.js';

const TOKEN = 'fair-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** @param {string} base @param {string} path @param {RequestInit} [init] */
async function call(base, path, init) {
  const res = await fetch(base + path, init);
  return { status: res.status, headers: res.headers, body: await res.json().catch(() => null) };
}

test('past --admin-rate a client gets 429, Retry-After and a google.rpc.Status; refused and open requests cost no budget', async () => {
  const c = await startTestCollector({ print: 'none', adminToken: TOKEN, adminRate: 3 });
  try {
    const base = c.urls.ui;
    for (let i = 0; i < 10; i++) assert.equal((await call(base, '/api/stats')).status, 401);
    for (let i = 0; i < 10; i++) assert.equal((await call(base, '/api/health')).status, 200);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(base, '/api/stats', { headers: AUTH }));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 429],
    );
    const refused = answers[3];
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.body.code, 8, 'RESOURCE_EXHAUSTED');
    assert.deepEqual(refused.body.details, []);
    assert.match(refused.body.message, /more than 3 admin API requests a second .*--admin-rate/);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await call(base, '/api/stats', { headers: AUTH })).status, 200, 'the budget fills again');
  } finally {
    await c.stop();
  }
});

test('admin requests take turns (--admin-concurrency 1): all are answered, and a waiting query holds no turn', async () => {
  const c = await startTestCollector({ print: 'none' });
  try {
    const base = c.urls.ui;
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => call(base, i % 2 ? '/api/spans?limit=5' : '/api/stats')));
    assert.deepEqual(new Set(many.map((a) => a.status)), new Set([200]));

    const waiter = call(base, '/api/spans?service=nobody&minCount=1&timeoutMs=3000');
    const alone = call(base, '/api/logs?service=nobody&timeoutMs=3000');
    const verify = call(base, '/api/verify', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeoutMs: 3000, expectations: [{ signal: 'spans', where: { service: 'nobody' }, count: { atLeast: 1 } }] }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    assert.equal((await call(base, '/api/stats')).status, 200);
    assert.ok(performance.now() - started < 1500, 'a query waiting for data does not keep the next request waiting');
    assert.equal((await waiter).status, 408);
    assert.equal((await alone).status, 408);
    assert.equal((await verify).body.ok, false);
  } finally {
    await c.stop();
  }
});
