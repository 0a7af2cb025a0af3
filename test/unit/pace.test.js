import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { MAX_WAIT_MS, Pacer } from '../../server/transport/pace.js';

/** A client that can leave: what `turn` watches. */
class Client extends EventEmitter {
  destroyed = false;
  leave() {
    this.destroyed = true;
    this.emit('close');
  }
}

test('a burst of as many refusals as the rate is answered at once, and the next waits its interval', () => {
  const pacer = new Pacer(10);
  for (let i = 0; i < 10; i++) assert.equal(pacer.wait(1000), 0, `refusal ${i + 1}`);
  assert.equal(pacer.wait(1000), 100);
  assert.equal(pacer.wait(1000), 200);
});

test('a flood is answered at the rate, and the burst comes back once the flood stops', () => {
  const pacer = new Pacer(10);
  for (let i = 0; i < 10; i++) pacer.wait(0);
  // one refusal every 100 ms, as they arrive: each waits for the one before it
  for (let at = 0; at < 1000; at += 100) assert.equal(pacer.wait(at), 100);
  // after ten seconds without refusals, ten are answered at once again
  for (let i = 0; i < 10; i++) assert.equal(pacer.wait(11_000), 0);
  assert.ok(pacer.wait(11_000) > 0);
});

test('two pacers on one state keep one pace between them, across threads', async () => {
  const { Worker } = await import('node:worker_threads');
  const here = new Pacer(10);
  for (let i = 0; i < 5; i++) assert.equal(here.wait(1000), 0);
  // A thread of its own (as the UI port's front door is) takes the next five of the burst, and one more.
  const waits = await new Promise((resolve, reject) => {
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       import(workerData.module).then(({ Pacer }) => {
         const there = new Pacer(10, workerData.due);
         parentPort.postMessage(Array.from({ length: 6 }, () => there.wait(1000)));
       });`,
      { eval: true, workerData: { module: new URL('../../server/transport/pace.js', import.meta.url).href, due: here.due } },
    );
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  assert.deepEqual(waits, [0, 0, 0, 0, 0, 100]);
  assert.equal(here.wait(1000), 200);
});

test('a refusal that would wait longer than MAX_WAIT_MS is not held, and takes nothing of the pace', () => {
  const pacer = new Pacer(10);
  const held = 10 + (MAX_WAIT_MS / 1000) * 10;
  for (let i = 0; i < held; i++) assert.ok(pacer.wait(0) >= 0, `refusal ${i + 1}`);
  assert.equal(pacer.wait(0), -1);
  assert.equal(pacer.wait(0), -1);
  // the first slot past the wait opens after one interval
  assert.equal(pacer.wait(100), MAX_WAIT_MS);
});

test('another kind of refusal has its own pace', () => {
  const tokens = new Pacer(10);
  const bodies = new Pacer(10);
  for (let i = 0; i < 20; i++) tokens.wait(0);
  assert.equal(bodies.wait(0), 0);
});

test('turn: at once within the burst; a held client that leaves is let go and answered nothing', async () => {
  const pacer = new Pacer(1);
  const first = new Client();
  assert.equal(await pacer.turn(first), true);
  const second = new Client();
  const turn = pacer.turn(second);
  assert.equal(pacer.held, 1);
  second.leave();
  assert.equal(await turn, false);
  assert.equal(pacer.held, 0);
  assert.equal(second.listenerCount('close'), 0);
});

test('turn: a held client still there is answered when its time comes', async () => {
  const pacer = new Pacer(50);
  for (let i = 0; i < 50; i++) pacer.wait();
  const client = new Client();
  assert.equal(await pacer.turn(client), true);
  assert.equal(pacer.held, 0);
  assert.equal(client.listenerCount('close'), 0);
});

test('a pace must be a positive rate', () => {
  assert.throws(() => new Pacer(0), /positive rate/);
  assert.throws(() => new Pacer(Number.NaN), /positive rate/);
});
