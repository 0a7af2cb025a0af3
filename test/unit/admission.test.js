import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission } from '../../server/api/admission.js';

test('a client has a budget of rate requests a second, refilled as time passes; other clients have their own', () => {
  const admission = new Admission({ concurrency: 1, rate: 4 });
  for (let i = 0; i < 4; i++) assert.equal(admission.charge('a', 1000), null);
  const refused = admission.charge('a', 1000);
  assert.equal(refused?.status, 429);
  assert.equal(refused?.grpcCode, 8);
  assert.equal(refused?.headers['retry-after'], '1');
  assert.match(refused?.message ?? '', /more than 4 admin API requests a second from a \(--admin-rate\)/);
  assert.equal(admission.charge('b', 1000), null, 'another address is not held to the first one');
  assert.equal(admission.charge('a', 1250), null, 'a quarter of a second later, one more');
  assert.equal(admission.charge('a', 1250)?.status, 429);
});

test('rate 0 is no limit', () => {
  const admission = new Admission({ concurrency: 1, rate: 0 });
  for (let i = 0; i < 10_000; i++) assert.equal(admission.charge('a', 0), null);
});

test('turns: at most concurrency at once, the rest in arrival order; an end of turn counts once', async () => {
  const admission = new Admission({ concurrency: 2, rate: 0 });
  const first = await admission.turn();
  const second = await admission.turn();
  assert.equal(typeof first, 'function');
  /** @type {string[]} */
  const order = [];
  const third = admission.turn().then((end) => (order.push('third'), end));
  const fourth = admission.turn().then((end) => (order.push('fourth'), end));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, []);
  assert.deepEqual(admission.stats, { working: 2, waiting: 2 });
  /** @type {() => void} */ (first)();
  /** @type {() => void} */ (first)();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, ['third'], 'ending a turn twice lets one waiter in, not two');
  /** @type {() => void} */ (second)();
  /** @type {any} */ (await third)();
  /** @type {any} */ (await fourth)();
  assert.deepEqual(order, ['third', 'fourth']);
  assert.deepEqual(admission.stats, { working: 0, waiting: 0 });
});

test('past the queue, a turn is refused with 503 and Retry-After', async () => {
  const admission = new Admission({ concurrency: 1, rate: 0, queue: 1 });
  const first = await admission.turn();
  const waiting = admission.turn();
  const refused = await admission.turn();
  assert.equal(typeof refused, 'object');
  assert.equal(/** @type {any} */ (refused).status, 503);
  assert.equal(/** @type {any} */ (refused).headers['retry-after'], '1');
  /** @type {() => void} */ (first)();
  assert.equal(typeof (await waiting), 'function');
});
