// The gRPC port's HTTP/2 sessions (server/transport/h2) against clients that break the protocol, written frame by frame
// on a raw socket: each is told what it did wrong (GOAWAY or RST_STREAM with the code RFC 9113 gives), costs the
// server nothing it keeps, and the port goes on serving everyone else.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestCollector } from '../helpers/collector.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';
import { CODES } from '../../server/transport/h2/session.js';
import { CLIENT_START, FLAG, PREFACE, SETTINGS_FRAME, TYPE, frame, requestBlock } from '../helpers/h2-frames.js';

const { END_STREAM, END_HEADERS, PADDED } = FLAG;

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;

before(async () => {
  collector = await startTestCollector();
});

after(async () => {
  await collector?.stop();
});

/** @param {string} service */
function message(service) {
  const body = encodePb('traces', sampleRequest('traces', { service }));
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

/** A raw connection that collects every frame the server sends. */
class RawClient {
  /** @param {Buffer} [start] what to send first: the preface and an empty SETTINGS unless given */
  static async open(start = CLIENT_START) {
    const url = new URL(collector.urls.grpc);
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const client = new RawClient(socket);
    socket.write(start);
    return client;
  }

  /** @param {net.Socket} socket */
  constructor(socket) {
    this.socket = socket;
    /** @type {{ type: number, flags: number, id: number, payload: Buffer }[]} */
    this.frames = [];
    this.closed = false;
    let rest = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      rest = Buffer.concat([rest, chunk]);
      while (rest.length >= 9 && rest.length >= 9 + rest.readUIntBE(0, 3)) {
        const length = rest.readUIntBE(0, 3);
        this.frames.push({ type: rest[3], flags: rest[4], id: rest.readUInt32BE(5) & 0x7fffffff, payload: rest.subarray(9, 9 + length) });
        rest = rest.subarray(9 + length);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => (this.closed = true));
  }

  /** @param {Buffer} bytes */
  send(bytes) {
    this.socket.write(bytes);
  }

  /** The first frame that `match` accepts, waiting up to 5 s. @param {(f: RawClient['frames'][number]) => boolean} match */
  async next(match) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no such frame; got ${JSON.stringify(this.frames.map((f) => [f.type, f.flags, f.id]))}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The GOAWAY's error code. */
  async goaway() {
    const f = await this.next((x) => x.type === TYPE.GOAWAY);
    return f.payload.readUInt32BE(4);
  }

  /** @param {number} id the RST_STREAM's error code on stream `id` */
  async reset(id) {
    const f = await this.next((x) => x.type === TYPE.RST_STREAM && x.id === id);
    return f.payload.readUInt32BE(0);
  }

  async whenClosed() {
    const deadline = Date.now() + 5000;
    while (!this.closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return this.closed;
  }

  close() {
    this.socket.destroy();
  }
}

/** A whole Export call on stream `id`, and the grpc-status its trailers give. @param {RawClient} client @param {number} id @param {string} service */
async function exportOn(client, id, service) {
  client.send(Buffer.concat([frame(TYPE.HEADERS, END_HEADERS, id, requestBlock()), frame(TYPE.DATA, END_STREAM, id, message(service))]));
  const trailers = await client.next((f) => f.type === TYPE.HEADERS && f.id === id && (f.flags & END_STREAM) !== 0);
  return trailers.payload.toString('latin1');
}

/** Whether the port still serves: a fresh connection's Export is stored. @param {string} service */
async function stillServes(service) {
  const client = await RawClient.open();
  try {
    assert.match(await exportOn(client, 1, service), /grpc-status.0/);
  } finally {
    client.close();
  }
  assert.equal((await collector.api(`/api/spans?service=${service}`)).total, 1);
}

test('a well-behaved raw client: settings acknowledged, the window raised, PING answered, an Export stored and answered OK', async () => {
  const client = await RawClient.open();
  try {
    const settings = await client.next((f) => f.type === TYPE.SETTINGS && (f.flags & 1) === 0);
    assert.equal(settings.payload.length % 6, 0);
    await client.next((f) => f.type === TYPE.SETTINGS && (f.flags & 1) === 1);
    const update = await client.next((f) => f.type === TYPE.WINDOW_UPDATE && f.id === 0);
    assert.equal(update.payload.readUInt32BE(0), 8 * 1024 * 1024 - 65_535);
    client.send(frame(TYPE.PING, 0, 0, Buffer.from('12345678')));
    const pong = await client.next((f) => f.type === TYPE.PING);
    assert.deepEqual([pong.flags, pong.payload.toString()], [1, '12345678']);
    assert.match(await exportOn(client, 1, 'h2-raw-ok'), /grpc-status.0/);
    assert.equal((await collector.api('/api/spans?service=h2-raw-ok')).total, 1);
  } finally {
    client.close();
  }
});

test('a header block cut into CONTINUATION frames, sent a byte at a time, is one request', async () => {
  const client = await RawClient.open();
  try {
    const block = requestBlock();
    const bytes = Buffer.concat([
      frame(TYPE.HEADERS, 0, 1, block.subarray(0, 10)),
      frame(TYPE.CONTINUATION, 0, 1, block.subarray(10, 30)),
      frame(TYPE.CONTINUATION, END_HEADERS, 1, block.subarray(30)),
      frame(TYPE.DATA, PADDED | END_STREAM, 1, Buffer.concat([Buffer.from([4]), message('h2-raw-slow'), Buffer.alloc(4)])),
    ]);
    for (const octet of bytes) {
      client.send(Buffer.from([octet]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await client.next((f) => f.type === TYPE.HEADERS && f.id === 1 && (f.flags & END_STREAM) !== 0);
    assert.equal((await collector.api('/api/spans?service=h2-raw-slow')).total, 1);
  } finally {
    client.close();
  }
});

test('frames cut anywhere by what the server reads at once, in short and long pieces, are read as sent', async () => {
  const client = await RawClient.open();
  try {
    // Ten calls, each message in forty DATA frames padded to about 260 octets: 100 KB for the pieces below to cut.
    const calls = [];
    for (let i = 0; i < 10; i++) {
      const id = 2 * i + 1;
      const whole = message(`h2-raw-cut-${i}`);
      const step = Math.ceil(whole.length / 40);
      calls.push(frame(TYPE.HEADERS, END_HEADERS, id, requestBlock()));
      for (let at = 0; at < whole.length; at += step) {
        const flags = PADDED | (at + step >= whole.length ? END_STREAM : 0);
        calls.push(frame(TYPE.DATA, flags, id, Buffer.concat([Buffer.from([255]), whole.subarray(at, at + step), Buffer.alloc(255)])));
      }
    }
    const bytes = Buffer.concat(calls);
    const pieces = [40_000, 5, 16_500, 9, 33_333, 1, 17_000];
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const piece = pieces[i % pieces.length];
      client.send(bytes.subarray(at, at + piece));
      at += piece;
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    for (let i = 0; i < 10; i++) await client.next((f) => f.type === TYPE.HEADERS && f.id === 2 * i + 1 && (f.flags & END_STREAM) !== 0);
    for (let i = 0; i < 10; i++) assert.equal((await collector.api(`/api/spans?service=h2-raw-cut-${i}`)).total, 1, `call ${i}`);
    assert.equal(client.frames.filter((f) => f.type === TYPE.GOAWAY || f.type === TYPE.RST_STREAM).length, 0);
  } finally {
    client.close();
  }
});

test('connection errors end the connection with GOAWAY and the code that names them', async () => {
  const cases = [
    ['a frame past 16 KiB', frame(TYPE.DATA, 0, 1, Buffer.alloc(16_385)), CODES.FRAME_SIZE_ERROR],
    ['a header block that does not decode', frame(TYPE.HEADERS, END_HEADERS, 1, Buffer.from([0x80 | 120])), CODES.COMPRESSION_ERROR],
    ['HEADERS on an even stream', frame(TYPE.HEADERS, END_HEADERS, 2, requestBlock()), CODES.PROTOCOL_ERROR],
    ['a frame inside a header block', Buffer.concat([frame(TYPE.HEADERS, 0, 1, requestBlock()), frame(TYPE.PING, 0, 0, Buffer.alloc(8))]), CODES.PROTOCOL_ERROR],
    ['CONTINUATION with no HEADERS', frame(TYPE.CONTINUATION, END_HEADERS, 1, requestBlock()), CODES.PROTOCOL_ERROR],
    ['a PING of 7 octets', frame(TYPE.PING, 0, 0, Buffer.alloc(7)), CODES.FRAME_SIZE_ERROR],
    ['SETTINGS of 5 octets', frame(TYPE.SETTINGS, 0, 0, Buffer.alloc(5)), CODES.FRAME_SIZE_ERROR],
    ['a connection WINDOW_UPDATE of 0', frame(TYPE.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)), CODES.PROTOCOL_ERROR],
    ['DATA on a stream never opened', frame(TYPE.DATA, 0, 9, Buffer.alloc(4)), CODES.PROTOCOL_ERROR],
    [
      'padding longer than its DATA frame',
      Buffer.concat([frame(TYPE.HEADERS, END_HEADERS, 1, requestBlock()), frame(TYPE.DATA, PADDED, 1, Buffer.from([9, 0, 0]))]),
      CODES.PROTOCOL_ERROR,
    ],
  ];
  for (const [what, bytes, code] of cases) {
    const client = await RawClient.open();
    try {
      client.send(/** @type {Buffer} */ (bytes));
      assert.equal(await client.goaway(), code, /** @type {string} */ (what));
      assert.ok(await client.whenClosed(), `${what}: the connection is closed`);
    } finally {
      client.close();
    }
  }
  await stillServes('h2-after-goaways');
});

test('a first frame other than SETTINGS, and bytes that are not HTTP/2, are refused', async () => {
  const noSettings = await RawClient.open(Buffer.concat([PREFACE, frame(TYPE.PING, 0, 0, Buffer.alloc(8))]));
  assert.equal(await noSettings.goaway(), CODES.PROTOCOL_ERROR);
  noSettings.close();
  const http1 = await RawClient.open(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  assert.ok(await http1.whenClosed());
  await stillServes('h2-after-refusals');
});

test('a header block that never ends is cut at 128 KiB (ENHANCE_YOUR_CALM), before it is held whole', async () => {
  const client = await RawClient.open();
  try {
    client.send(frame(TYPE.HEADERS, 0, 1, requestBlock()));
    const junk = frame(TYPE.CONTINUATION, 0, 1, Buffer.alloc(16_000, 0x82));
    for (let i = 0; i < 10 && !client.closed; i++) client.send(junk);
    assert.equal(await client.goaway(), CODES.ENHANCE_YOUR_CALM);
  } finally {
    client.close();
  }
});

test('streams past the 100 a connection may have open are refused (REFUSED_STREAM), which clients retry', async () => {
  const client = await RawClient.open();
  try {
    const opens = [];
    for (let i = 0; i < 101; i++) opens.push(frame(TYPE.HEADERS, END_HEADERS, 1 + 2 * i, requestBlock()));
    client.send(Buffer.concat(opens));
    assert.equal(await client.reset(201), CODES.REFUSED_STREAM);
    assert.ok(!client.frames.some((f) => f.type === TYPE.RST_STREAM && f.id < 201));
  } finally {
    client.close();
  }
});

test('a stream the client resets mid-message stores nothing, and the connection goes on', async () => {
  const client = await RawClient.open();
  try {
    const whole = message('h2-reset');
    const reset = Buffer.alloc(4);
    reset.writeUInt32BE(CODES.CANCEL);
    client.send(Buffer.concat([frame(TYPE.HEADERS, END_HEADERS, 1, requestBlock()), frame(TYPE.DATA, 0, 1, whole.subarray(0, 30)), frame(TYPE.RST_STREAM, 0, 1, reset)]));
    // DATA still in flight after the reset is dropped, not read into a new stream.
    client.send(frame(TYPE.DATA, END_STREAM, 1, whole.subarray(30)));
    assert.match(await exportOn(client, 3, 'h2-after-reset'), /grpc-status.0/);
    assert.equal((await collector.api('/api/spans?service=h2-reset')).total, 0);
  } finally {
    client.close();
  }
});

test('a client that opens and resets streams faster than 200 a second is cut off (ENHANCE_YOUR_CALM); 150 are not', async () => {
  const client = await RawClient.open();
  try {
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(CODES.CANCEL);
    const block = requestBlock();
    /** @param {number} from @param {number} count */
    const openAndReset = (from, count) => {
      const pairs = [];
      for (let i = from; i < from + count; i++) pairs.push(frame(TYPE.HEADERS, END_HEADERS, 1 + 2 * i, block), frame(TYPE.RST_STREAM, 0, 1 + 2 * i, cancel));
      client.send(Buffer.concat(pairs));
    };
    openAndReset(0, 150);
    assert.match(await exportOn(client, 301, 'h2-before-rapid-reset'), /grpc-status.0/);
    openAndReset(151, 100);
    assert.equal(await client.goaway(), CODES.ENHANCE_YOUR_CALM);
  } finally {
    client.close();
  }
  await stillServes('h2-after-rapid-reset');
});

test('PING and SETTINGS floods (over 1,000 a second) are cut off (ENHANCE_YOUR_CALM); a few are answered', async () => {
  for (const ask of [frame(TYPE.PING, 0, 0, Buffer.alloc(8)), SETTINGS_FRAME]) {
    const client = await RawClient.open();
    try {
      client.send(Buffer.concat(Array.from({ length: 900 }, () => ask)));
      await client.next((f) => f.type === ask[3] && (f.flags & 1) === 1);
      assert.ok(!client.frames.some((f) => f.type === TYPE.GOAWAY));
      client.send(Buffer.concat(Array.from({ length: 200 }, () => ask)));
      assert.equal(await client.goaway(), CODES.ENHANCE_YOUR_CALM);
    } finally {
      client.close();
    }
  }
  await stillServes('h2-after-floods');
});

test('a PING after each call is answered, thousands a second: grpc-go probes bandwidth so under load', async () => {
  const client = await RawClient.open();
  try {
    const call = message('h2-ping-per-call');
    const ping = frame(TYPE.PING, 0, 0, Buffer.alloc(8));
    for (let batch = 0; batch < 30; batch++) {
      const ids = Array.from({ length: 100 }, (_, i) => 1 + 2 * (100 * batch + i));
      client.send(Buffer.concat(ids.flatMap((id) => [frame(TYPE.HEADERS, END_HEADERS, id, requestBlock()), frame(TYPE.DATA, END_STREAM, id, call), ping])));
      for (const id of ids) await client.next((f) => (f.type === TYPE.HEADERS && f.id === id && (f.flags & END_STREAM) !== 0) || f.type === TYPE.GOAWAY);
      assert.deepEqual(
        client.frames.filter((f) => f.type === TYPE.GOAWAY),
        [],
        `cut after ${batch} batches of 100 calls and PINGs`,
      );
    }
    await client.next((f) => f.type === TYPE.PING && client.frames.filter((x) => x.type === TYPE.PING).length === 3000);
  } finally {
    client.close();
  }
});

test('a client that vanishes mid-frame or mid-message costs nothing stored', async () => {
  const client = await RawClient.open();
  const whole = message('h2-vanished');
  client.send(
    Buffer.concat([frame(TYPE.HEADERS, END_HEADERS, 1, requestBlock()), frame(TYPE.DATA, 0, 1, whole.subarray(0, 20)), frame(TYPE.DATA, 0, 1, whole).subarray(0, 12)]),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  client.close();
  await stillServes('h2-after-vanish');
  assert.equal((await collector.api('/api/spans?service=h2-vanished')).total, 0);
});

test('a connection that never sends its preface and SETTINGS is closed after the idle timeout; one that did is kept', async () => {
  const quick = await startTestCollector({ idleTimeoutMs: 300 });
  try {
    const url = new URL(quick.urls.grpc);
    const silent = net.connect(Number(url.port), url.hostname);
    silent.on('error', () => {});
    silent.resume();
    silent.write(PREFACE.subarray(0, 10));
    const started = Date.now();
    await once(silent, 'close');
    assert.ok(Date.now() - started < 3000);
    const idle = net.connect(Number(url.port), url.hostname);
    idle.on('error', () => {});
    idle.write(CLIENT_START);
    await new Promise((resolve) => setTimeout(resolve, 900));
    assert.ok(!idle.destroyed && idle.readyState === 'open');
    idle.destroy();
  } finally {
    await quick.stop();
  }
});
