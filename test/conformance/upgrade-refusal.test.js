// A refused WebSocket upgrade whose client never reads the answer and resets the socket (TCP RST) must not end
// the process: Node hands an upgrade's socket over without an error listener. The collector runs in this
// process, so an unhandled 'error' would end this test run; afterwards the store must still hold what it held.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { WebSocket } from 'ws';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { sampleRequest } from '../helpers/payloads.js';
import { rawUpgrade, upgradeRequest } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'upgrade-secret';
/** The live feed's client limit (server/api/live.js). */
const MAX_CLIENTS = 128;
const RESETS_PER_REASON = 600;
const CONCURRENCY = 32;

/**
 * Opens a socket, writes `request`, never reads, and resets the socket after `delayMs` (0: as soon as it is
 * written), so that the reset meets the server before, while or after it answers.
 * @param {number} port @param {string} request @param {number} delayMs
 */
function refusedAndReset(port, request, delayMs) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(request);
      if (delayMs === 0) socket.resetAndDestroy();
      else setTimeout(() => socket.resetAndDestroy(), delayMs);
    });
    socket.pause();
    socket.on('error', () => {});
    socket.on('close', resolve);
  });
}

/**
 * Runs `count` refused-and-reset upgrades, `CONCURRENCY` at a time, with delays of 0 to 3 ms.
 * @param {number} port @param {string} request @param {number} count
 */
async function flood(port, request, count) {
  let next = 0;
  const worker = async () => {
    while (next < count) await refusedAndReset(port, request, next++ % 4);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** @param {string} url */
const portOf = (url) => Number(new URL(url).port);

describe('refused upgrades reset by their clients', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let c;
  let port = 0;
  const auth = { authorization: `Bearer ${TOKEN}` };
  before(async () => {
    c = await startTestCollector({ adminToken: TOKEN });
    port = portOf(c.urls.ui);
    for (let i = 0; i < 5; i++) {
      const res = await postOtlp(
        c.urls.http,
        '/v1/traces',
        JSON.stringify(sampleRequest('traces', { service: 'kept', spanId: `00000000000000a${i}` })),
        'application/json',
      );
      assert.equal(res.status, 200);
    }
  });
  after(() => c.stop());

  /** @returns {Promise<number>} spans stored, read over the API */
  const spansStored = async () => (await c.api('/api/stats', { headers: auth })).signals.traces.stored;

  const host = () => `127.0.0.1:${port}`;
  const reasons = /** @type {const} */ ([
    ['a Host it does not serve', () => upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `rebound.example:${port}` })],
    ['a cross-site Origin', () => upgradeRequest(`/api/live?token=${TOKEN}`, { Host: host(), Origin: 'http://evil.example' })],
    ['no token', () => upgradeRequest('/api/live', { Host: host() })],
    ['a wrong token', () => upgradeRequest('/api/live?token=wrong', { Host: host() })],
    ['a path that is not /api/live', () => upgradeRequest(`/api/spans?token=${TOKEN}`, { Host: host() })],
    ['an unparsable path', () => upgradeRequest(`/api/%zz?token=${TOKEN}`, { Host: host() })],
  ]);

  // Before the floods below, whose refusals without a token spend the token's pace for seconds.
  test('a refused client that reads but never closes is let go by the server at once', async () => {
    const started = Date.now();
    const answer = await new Promise((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(upgradeRequest('/api/live', { Host: host() })));
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => {});
      socket.on('end', () => {
        resolve(text);
        socket.destroy();
      });
    });
    assert.match(String(answer), /^HTTP\/1\.1 401 /);
    assert.match(String(answer), /\r\nwww-authenticate: Bearer realm="otlp-mock"\r\n/i);
    assert.match(String(answer), /admin token/);
    assert.ok(Date.now() - started < 2000, `closed after ${Date.now() - started} ms`);
  });

  for (const [reason, request] of reasons) {
    test(`${reason}: ${RESETS_PER_REASON} refusals reset unread leave the process up and the store intact`, async () => {
      await flood(port, request(), RESETS_PER_REASON);
      assert.equal(await spansStored(), 5);
      assert.equal((await c.api('/api/health')).status, 'ok');
    });
  }

  test(`the client past the limit of ${MAX_CLIENTS}: refusals reset unread leave the process up; the feed serves again once one leaves`, async () => {
    /** @type {WebSocket[]} */
    const open = [];
    try {
      for (let i = 0; i < MAX_CLIENTS; i++) {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/live?token=${TOKEN}`);
        open.push(ws);
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      }
      const past = await rawUpgrade(port, `/api/live?token=${TOKEN}`);
      assert.equal(past.status, 503);
      await flood(port, upgradeRequest(`/api/live?token=${TOKEN}`, { Host: host() }), RESETS_PER_REASON);
      assert.equal(await spansStored(), 5);
      const one = /** @type {WebSocket} */ (open.pop());
      one.close();
      await new Promise((resolve) => one.once('close', resolve));
      const again = await waitFor(
        () =>
          new Promise((resolve) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/api/live?token=${TOKEN}`);
            ws.on('error', () => resolve(null));
            ws.once('open', () => resolve(ws));
          }),
        { what: 'a live client admitted after one left' },
      );
      open.push(/** @type {WebSocket} */ (again));
    } finally {
      for (const ws of open) ws.terminate();
    }
  });
});

test('upgrades refused and reset while the server is stopping do not end the process, and the store is kept', async () => {
  const c = await startTestCollector({ adminToken: TOKEN });
  const port = portOf(c.urls.ui);
  const res = await postOtlp(c.urls.http, '/v1/traces', JSON.stringify(sampleRequest('traces', { service: 'kept' })), 'application/json');
  assert.equal(res.status, 200);
  // An upgraded client that never reads holds the live feed's close in its grace period.
  const held = net.connect(port, '127.0.0.1', () => held.write(upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${port}` })));
  held.on('error', () => {});
  const upgraded = await new Promise((resolve) => held.once('data', (chunk) => resolve(String(chunk))));
  held.pause();
  assert.match(String(upgraded), /^HTTP\/1\.1 101 /);
  const stopping = c.stop();
  await flood(port, upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${port}` }), 200);
  await stopping;
  held.destroy();
  assert.equal(c.store.stats().traces.stored, 1);
});
