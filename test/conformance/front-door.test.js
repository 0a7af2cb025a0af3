// The UI port's front door (server/api/front-door.js): refusals that need only a request's head are answered from its
// thread, in the API's words, without a connection reaching the API's server; everything else reaches the API as the
// client sent it, from the client's own address.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestCollector } from '../helpers/collector.js';
import { startApi } from '../../server/api/index.js';
import { upgradeRequest } from '../helpers/raw-http.js';
import { seededRandom } from '../helpers/random.js';

const TOKEN = 'front-door-secret';
const RULE = '{"action":"unavailable"}';

/**
 * Writes `parts` on a fresh socket, `gapMs` apart, and reads answers until the server closes or `count` answers
 * (each framed by its Content-Length) have come. `end`: half-close after the last part.
 * @param {number} port @param {string[]} parts @param {{ count?: number, gapMs?: number, end?: boolean }} [options]
 * @returns {Promise<{ status: number, head: string, body: string }[]>}
 */
function exchange(port, parts, { count = 1, gapMs = 0, end = false } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(part);
      }
      if (end) socket.end();
    });
    let text = '';
    /** @type {{ status: number, head: string, body: string }[]} */
    const answers = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s: ${JSON.stringify(text.slice(0, 200))}`));
    }, 10_000);
    const settle = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answers);
    };
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (;;) {
        const at = text.indexOf('\r\n\r\n');
        if (at < 0) return;
        const head = text.slice(0, at);
        const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
        if (text.length < at + 4 + length) return;
        answers.push({ status: Number(head.split(' ')[1]), head, body: text.slice(at + 4, at + 4 + length) });
        text = text.slice(at + 4 + length);
        if (answers.length === count) return settle();
      }
    });
    socket.on('error', () => {});
    socket.on('close', settle);
  });
}

describe('the UI port front door', () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let collector;
  /** @type {Awaited<ReturnType<typeof startApi>>} */
  let api;
  let port = 0;
  let connections = 0;
  /** @type {{ address?: string, port?: number }[]} */
  const peers = [];
  const host = () => `Host: 127.0.0.1:${port}\r\n`;
  const auth = `Authorization: Bearer ${TOKEN}\r\n`;
  /** Requests the door can refuse from their head alone, with what the API answers them. */
  const refused = () => [
    { head: `GET /api/stats HTTP/1.1\r\nHost: rebound.example:${port}\r\n${auth}\r\n`, status: 403 },
    { head: `GET /api/stats HTTP/1.1\r\n${host()}Origin: http://evil.example\r\n${auth}\r\n`, status: 403 },
    { head: `GET /index.html HTTP/1.1\r\nHost: rebound.example\r\n\r\n`, status: 403 },
    { head: upgradeRequest('/api/live', { Host: `127.0.0.1:${port}` }), status: 401 },
    { head: upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' }), status: 403 },
    { head: upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `rebound.example:${port}` }), status: 403 },
    { head: upgradeRequest(`/api/nothing?token=${TOKEN}`, { Host: `127.0.0.1:${port}` }), status: 404 },
    // Methods no open route serves are the admin API's, whatever the path's spelling
    { head: `POST /api/faults HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: ${RULE.length}\r\n\r\n${RULE}`, status: 401 },
    { head: `DELETE /%61pi/telemetry HTTP/1.1\r\n${host()}\r\n`, status: 401 },
    { head: `DELETE /x/../api/telemetry HTTP/1.1\r\n${host()}\r\n`, status: 401 },
    { head: `POST /api/import HTTP/1.1\r\n${host()}${auth}Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`, status: 415 },
    {
      head: `POST /api/faults HTTP/1.1\r\n${host()}${auth}Origin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: ${RULE.length}\r\n\r\n${RULE}`,
      status: 403,
    },
  ];

  before(async () => {
    collector = await startTestCollector();
    api = await startApi({
      store: collector.store,
      journal: collector.journal,
      faults: collector.faults,
      host: '127.0.0.1',
      port: 0,
      access: { host: '127.0.0.1', allowedHosts: [], adminToken: TOKEN },
    });
    port = api.port;
    api.app.server.on('connection', () => connections++);
    api.app.server.on('request', (req) => peers.push({ address: req.socket.remoteAddress, port: req.socket.remotePort }));
  });
  after(async () => {
    await api.close();
    await collector.stop();
  });

  test("refusals read from the head are answered without a connection to the API's server", async () => {
    const before = connections;
    for (const { head, status } of refused()) {
      const [answer] = await exchange(port, [head]);
      assert.equal(answer?.status, status, head);
      assert.match(answer.head, /^connection: close$/im);
    }
    assert.equal(connections, before, 'no refused connection reached the API');
    const [health] = await exchange(port, [`GET /api/health HTTP/1.1\r\n${host()}\r\n`]);
    assert.equal(health.status, 200);
    assert.equal(connections, before + 1);
  });

  test('the door refuses in the words the API uses for the same request', async () => {
    for (const { head } of refused()) {
      const [fromDoor] = await exchange(port, [head]);
      // After a first request answered, the connection is the API's, and so is the answer to the second.
      const [health, fromApi] = await exchange(port, [`GET /api/health HTTP/1.1\r\n${host()}\r\n`, head], { count: 2, gapMs: 200 });
      assert.equal(health.status, 200);
      assert.equal(fromDoor.status, fromApi.status, head);
      assert.deepEqual(JSON.parse(fromDoor.body), JSON.parse(fromApi.body), head);
      assert.equal(/^www-authenticate:.*$/im.exec(fromDoor.head)?.[0], /^www-authenticate:.*$/im.exec(fromApi.head)?.[0], head);
    }
  });

  test('the socket the door hands connections on to takes none without its secret', async () => {
    const before = connections;
    const lines = ['GET /api/health HTTP/1.1\r\n\r\n', `${'0'.repeat(32)} IPv4 10.0.0.1 1\nGET /api/health HTTP/1.1\r\n\r\n`, 'x'.repeat(4096)];
    for (const line of lines) {
      const closed = await new Promise((resolve) => {
        const socket = net.connect(api.frontDoor.inner, () => socket.write(line));
        socket.on('error', () => {});
        socket.on('data', () => resolve(false));
        socket.on('close', () => resolve(true));
      });
      assert.ok(closed, `answered: ${line.slice(0, 40)}`);
    }
    assert.equal(connections, before);
  });

  test("the API sees the client's own address and port", async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answered = new Promise((resolve) => socket.once('data', resolve));
    socket.write(`GET /api/health HTTP/1.1\r\n${host()}\r\n`);
    await answered;
    const own = socket.localPort;
    socket.destroy();
    assert.deepEqual(peers.at(-1), { address: '127.0.0.1', port: own });
  });

  test("a head that comes slowly is the API's to answer, refused or not", async () => {
    const before = connections;
    const [slow] = await exchange(port, [`GET /api/health HTTP/1.1\r\n${host()}`, '\r\n'], { gapMs: 1200 });
    assert.equal(slow.status, 200);
    const [slowRefused] = await exchange(port, [`GET /api/stats HTTP/1.1\r\nHost: rebound.example\r\n`, '\r\n'], { gapMs: 1200 });
    assert.equal(slowRefused.status, 403);
    assert.equal(connections, before + 2);
  });

  test("chunked bodies, bodies over 64 KiB, GET refusals that depend on the route and doubled headers are the API's to read", async () => {
    const before = connections;
    const chunked = await exchange(port, [
      `POST /api/faults HTTP/1.1\r\n${host()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${RULE.length.toString(16)}\r\n${RULE}\r\n0\r\n\r\n`,
    ]);
    assert.equal(chunked[0].status, 401);
    const long = 'x'.repeat(70 * 1024);
    const [over] = await exchange(port, [`POST /api/import HTTP/1.1\r\n${host()}Content-Type: text/plain\r\nContent-Length: ${long.length}\r\n\r\n`, long]);
    assert.equal(over.status, 415);
    const [spelt] = await exchange(port, [`GET /%61pi/stats HTTP/1.1\r\n${host()}\r\n`]);
    assert.equal(spelt.status, 401);
    const [doubled] = await exchange(port, [`GET /api/health HTTP/1.1\r\n${host()}Host: rebound.example\r\n\r\n`]);
    assert.equal(doubled.status, 200, 'Node keeps the first of two Host lines');
    assert.equal(connections, before + 4);
    // What the router cannot read is the API's to refuse (400), not the door's.
    const [unroutable] = await exchange(port, [`DELETE /api/%zz HTTP/1.1\r\n${host()}\r\n`]);
    assert.equal(connections, before + 5);
    assert.equal(unroutable.status, 400);
  });

  test('a long answer reaches a client that half-closed after its request, byte for byte', async () => {
    const whole = await fetch(`http://127.0.0.1:${port}/api/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
    assert.ok(whole.length > 50_000, `the document is ${whole.length} bytes`);
    const [answer] = await exchange(port, [`GET /api/openapi.json HTTP/1.1\r\n${host()}${auth}Connection: close\r\n\r\n`], { end: true });
    assert.equal(answer.status, 200);
    const body = Buffer.from(answer.body, 'latin1').toString('utf8');
    assert.ok(body === whole, `${body.length} characters came of ${whole.length}`);
  });

  /**
   * Declares a 1 GiB verify body and sends it, 64 KiB every `gapMs` (0: as fast as the socket drains), after its 413
   * too. Resolves once the connection is closed, with the answer, the bytes sent and the milliseconds from the answer.
   * @param {number} gapMs
   */
  const sendPastAnswer = (gapMs) =>
    new Promise((resolve) => {
      // Half open: the server's end does not end this side, which goes on sending.
      const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => {});
      const piece = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      let answer = '';
      let answeredAt = 0;
      const pump = () => {
        while (!socket.destroyed) {
          sent += piece.length;
          const more = socket.write(piece);
          if (gapMs) return setTimeout(pump, gapMs);
          if (!more) return socket.once('drain', pump);
        }
      };
      socket.write(`POST /api/verify HTTP/1.1\r\n${host()}${auth}Content-Type: application/json\r\nContent-Length: ${2 ** 30}\r\n\r\n`);
      pump();
      socket.on('data', (chunk) => {
        answer += chunk.toString('latin1');
        answeredAt ||= performance.now();
      });
      socket.once('close', () => resolve({ answer, sent, afterMs: performance.now() - answeredAt }));
    });

  test('a client that goes on sending once the API has closed its end is answered and let go: after 8 MiB, or 2 s', async () => {
    const fast = /** @type {any} */ (await sendPastAnswer(0));
    assert.match(fast.answer, /^HTTP\/1\.1 413 /);
    // What the kernel's buffers on both sides hold comes on top of what the door reads.
    assert.ok(fast.sent < 64 * 1024 * 1024, `${(fast.sent / 1048576).toFixed(0)} MiB were sent before the door closed`);
    const slow = /** @type {any} */ (await sendPastAnswer(50));
    assert.match(slow.answer, /^HTTP\/1\.1 413 /);
    // Not the 30 s idle timeout: 64 KiB every 50 ms keeps a connection busy.
    assert.ok(slow.afterMs < 6000, `closed ${slow.afterMs.toFixed(0)} ms after its answer`);
  });

  test('a burst of upgrades reaches the API no more often than the live feed has room: the rest are refused at the door', async () => {
    const room = api.live.maxClients - api.live.clients;
    let upgrades = 0;
    const counted = () => upgrades++;
    api.app.server.on('upgrade', counted);
    /** @type {net.Socket[]} */
    const sockets = [];
    try {
      const statuses = await Promise.all(
        Array.from(
          { length: room + 200 },
          () =>
            new Promise((resolve) => {
              const socket = net.connect(port, '127.0.0.1', () => socket.write(upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${port}` })));
              sockets.push(socket);
              socket.on('error', () => resolve(0));
              socket.once('data', (chunk) => resolve(Number(String(chunk).split(' ')[1])));
              socket.on('close', () => resolve(0));
            }),
        ),
      );
      assert.equal(statuses.filter((s) => s === 101).length, room, 'the feed took as many as it has room for');
      assert.equal(statuses.filter((s) => s === 503).length, 200, 'the rest were refused');
      assert.ok(upgrades <= room, `${upgrades} upgrades reached the API, with room for ${room}`);
    } finally {
      api.app.server.off('upgrade', counted);
      for (const socket of sockets) socket.destroy();
    }
    // The feed's count falls as its clients go, and the door hands an upgrade on again.
    for (let i = 0; i < 100 && api.live.clients > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(api.live.clients, 0);
    const [hello] = await exchange(port, [upgradeRequest(`/api/live?token=${TOKEN}`, { Host: `127.0.0.1:${port}` })]);
    assert.equal(hello.status, 101);
  });

  test('any bytes: mutated, cut, oversized and vanishing heads are answered or closed, and the door holds its connections', async () => {
    // A connection handed on before the flood: were the door's thread to fail on some head, it would be cut with it.
    const held = net.connect(port, '127.0.0.1');
    held.on('error', () => {});
    const first = new Promise((resolve) => held.once('data', resolve));
    held.write(`GET /api/health HTTP/1.1\r\n${host()}\r\n`);
    await first;
    const next = seededRandom(0xd00d);
    const int = (/** @type {number} */ n) => Math.floor(next() * n);
    const seeds = [...refused().map((r) => r.head), `GET /api/health HTTP/1.1\r\n${host()}\r\n`];
    /** @param {string} seed */
    const mutated = (seed) => {
      const bytes = Buffer.from(seed, 'latin1');
      for (let i = 0, n = 1 + int(4); i < n; i++) bytes[int(bytes.length)] = int(256);
      return int(4) === 0 ? bytes.subarray(0, int(bytes.length)) : bytes;
    };
    const heads = [
      ...Array.from({ length: 600 }, () => mutated(seeds[int(seeds.length)])),
      Buffer.from(`GET /api/health HTTP/1.1\r\n${host()}X-Long: ${'a'.repeat(20 * 1024)}\r\n\r\n`),
      Buffer.from(`GET /api/health HTTP/1.1\r\n${host()}Connection: upgrade\r\nUpgrade: websocket\r\nUpgrade: h2c\r\n\r\n`),
      Buffer.from(`GET /api/health HTTP/1.1\r\n ${host()}\r\n\r\n`),
      Buffer.from(`GET /api/health HTTP/1.1\n${host()}\n\n`),
    ];
    let taken = 0;
    const lane = async () => {
      while (taken < heads.length) {
        const head = heads[taken++];
        await new Promise((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.write(head);
            // some vanish at once, some half-close, the rest wait for an answer or the server's close
            const fate = int(3);
            if (fate === 0) socket.resetAndDestroy();
            if (fate === 1) socket.end();
          });
          socket.setTimeout(1500, () => socket.destroy());
          socket.on('error', () => {});
          socket.on('data', () => socket.destroy());
          socket.on('close', resolve);
        });
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    assert.ok(!held.destroyed, 'a connection handed on before the flood is still open');
    const again = new Promise((resolve) => held.once('data', (chunk) => resolve(String(chunk))));
    held.write(`GET /api/health HTTP/1.1\r\n${host()}\r\n`);
    assert.match(String(await again), /^HTTP\/1\.1 200 /);
    held.destroy();
  });
});
