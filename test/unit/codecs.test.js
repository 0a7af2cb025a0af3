// The decoders behind Content-Encoding and grpc-encoding (server/transport/decompress.js): large valid bodies
// decode byte-exact however they were made, every limit is refused by name, and malformed bodies name the codec.
// zstd and lz4 bodies come from the reference command-line tools where they are installed; snappy bodies from the
// snappy package; gzip and deflate from Node's zlib.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { compressSync as snappyBlock, Compressor as SnappyFramer } from 'snappy';
import { decompress, DecompressError } from '../../server/transport/decompress.js';
import { xxh32, Xxh32, LZ4_MAX_FRAMES } from '../../server/transport/lz4.js';
import { ZSTD_MAX_FRAMES, ZSTD_MAX_WINDOW, ZSTD_MAX_SHORT_BLOCKS } from '../../server/transport/zstd.js';
import { seededRandom } from '../helpers/random.js';

const MiB = 1 << 20;
const LIMIT = 64 * MiB;

/**
 * About `size` bytes that compress as telemetry does: repeated keys and names, varying ids and numbers.
 * @param {number} size @param {number} seed
 */
function telemetryLike(size, seed) {
  const random = seededRandom(seed);
  const names = ['GET /api/orders', 'SELECT orders', 'redis GET', 'POST /checkout', 'render'];
  const parts = [];
  let length = 0;
  for (let i = 0; length < size; i++) {
    const id = Math.floor(random() * 2 ** 48)
      .toString(16)
      .padStart(12, '0');
    const part = `{"traceId":"${id}${i.toString(16).padStart(20, '0')}","name":"${names[i % names.length]}","duration":${Math.floor(random() * 1e6)},"attributes":[{"key":"http.status_code","value":{"intValue":"${200 + (i % 5)}"}}]}\n`;
    parts.push(part);
    length += part.length;
  }
  return Buffer.from(parts.join(''));
}

const PLAIN = telemetryLike(24 * MiB, 22);

/** @param {string} tool @param {string[]} args @param {Buffer} input */
function runTool(tool, args, input) {
  const run = spawnSync(tool, args, { input, maxBuffer: 256 * MiB });
  if (run.error || run.status !== 0) return null;
  return run.stdout;
}
const hasTool = (/** @type {string} */ tool) => !spawnSync(tool, ['--version']).error;
const ZSTD_CLI = hasTool('zstd') ? false : 'the zstd command-line tool is not installed';
const LZ4_CLI = hasTool('lz4') ? false : 'the lz4 command-line tool is not installed';

/** @param {Buffer} data */
async function snappyFramed(data) {
  const framer = new SnappyFramer();
  return Buffer.concat([framer.update(data), await framer.finish()]);
}

/** @param {Buffer} body @param {string} encoding @param {number} [limit] @param {import('../../server/transport/slices.js').Room} [room] */
async function refusal(body, encoding, limit = LIMIT, room = undefined) {
  try {
    await decompress(body, encoding, limit, undefined, room);
  } catch (err) {
    assert.ok(err instanceof DecompressError, String(err));
    return err;
  }
  assert.fail(`${encoding}: the body was decoded`);
}

/** Three zstd frames of the same 4 MiB, with a skippable frame between. */
function threeZstdFrames() {
  const frame = runTool('zstd', ['-q', '-3', '-c'], PLAIN.subarray(0, 4 * MiB));
  return frame && Buffer.concat([frame, Buffer.from([0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]), frame, frame]);
}

describe('large valid bodies decode byte-exact', () => {
  /** @type {[string, string, () => Buffer|null|Promise<Buffer>, string|false][]} */
  const CASES = [
    ['gzip', 'gzip', () => zlib.gzipSync(PLAIN), false],
    ['gzip, two members', 'gzip', () => Buffer.concat([zlib.gzipSync(PLAIN.subarray(0, 5 * MiB)), zlib.gzipSync(PLAIN.subarray(5 * MiB))]), false],
    ['deflate (zlib stream)', 'deflate', () => zlib.deflateSync(PLAIN), false],
    ['deflate (raw stream)', 'deflate', () => zlib.deflateRawSync(PLAIN), false],
    ['snappy block', 'snappy', () => snappyBlock(PLAIN), false],
    ['framed snappy', 'x-snappy-framed', () => snappyFramed(PLAIN), false],
    ['framed snappy, as snappy', 'snappy', () => snappyFramed(PLAIN), false],
    ['zstd -1, streamed (no content size)', 'zstd', () => runTool('zstd', ['-q', '-1', '-c'], PLAIN), ZSTD_CLI],
    [
      'zstd -19 with a checksum, from a file size (content size)',
      'zstd',
      () => runTool('zstd', ['-q', '-19', '--check', '-c', '--stream-size', String(PLAIN.length)], PLAIN),
      ZSTD_CLI,
    ],
    ['zstd, three frames and a skippable frame', 'zstd', threeZstdFrames, ZSTD_CLI],
    ['lz4, linked 64 KiB blocks with block checksums', 'lz4', () => runTool('lz4', ['-q', '-1', '-B4', '-BD', '-BX', '-c'], PLAIN), LZ4_CLI],
    ['lz4 -9, independent 4 MiB blocks with content size', 'lz4', () => runTool('lz4', ['-q', '-9', '-B7', '--content-size', '-c'], PLAIN), LZ4_CLI],
  ];
  for (const [name, encoding, make, skip] of CASES) {
    test(name, { skip }, async (t) => {
      const body = await make();
      assert.ok(body, 'the body could be made');
      const started = performance.now();
      const out = await decompress(body, encoding, LIMIT);
      const ms = performance.now() - started;
      t.diagnostic(`${body.length} bytes → ${out.length} in ${ms.toFixed(0)} ms (${(out.length / 1e6 / (ms / 1000)).toFixed(0)} MB/s)`);
      assert.ok(out.equals(make === threeZstdFrames ? Buffer.concat(Array(3).fill(PLAIN.subarray(0, 4 * MiB))) : PLAIN));
    });
  }
});

test('snappy: runs of copies with one offset (periods 1 to 70, lengths across the 64-byte copy size) decode byte-exact', async () => {
  const random = seededRandom(7);
  const parts = [];
  for (let i = 0; i < 400; i++) {
    const period = 1 + Math.floor(random() * 70);
    const unit = Buffer.from(Array.from({ length: period }, () => Math.floor(random() * 256)));
    const length = Math.floor(random() * 5000);
    parts.push(Buffer.alloc(length, unit), Buffer.from(Array.from({ length: Math.floor(random() * 20) }, () => Math.floor(random() * 256))));
  }
  const plain = Buffer.concat(parts);
  assert.ok((await decompress(snappyBlock(plain), 'snappy', LIMIT)).equals(plain));
  const bomb = Buffer.alloc(3 * MiB + 17, 0x2a);
  assert.ok((await decompress(snappyBlock(bomb), 'snappy', LIMIT)).equals(bomb));
});

/**
 * `data` in every encoding (null where its tool is not installed).
 * @param {Buffer} data @returns {Promise<[string, Buffer|null][]>}
 */
const everyCodec = async (data) => [
  ['gzip', zlib.gzipSync(data)],
  ['deflate', zlib.deflateSync(data)],
  ['snappy', snappyBlock(data)],
  ['x-snappy-framed', await snappyFramed(data)],
  ['zstd', ZSTD_CLI ? null : runTool('zstd', ['-q', '-3', '-c'], data)],
  ['lz4', LZ4_CLI ? null : runTool('lz4', ['-q', '-c'], data)],
];

test('a small body decodes into a buffer of its own size, since the store keeps the buffer it is given', async () => {
  const data = PLAIN.subarray(0, 20_000);
  for (const [encoding, body] of await everyCodec(data)) {
    if (!body) continue;
    const out = await decompress(body, encoding, LIMIT);
    assert.ok(out.equals(data), encoding);
    assert.equal(out.buffer.byteLength, data.length, `${encoding}: the decoded body holds on to ${out.buffer.byteLength} bytes`);
  }
});

describe('limits are refused by name, as too large', () => {
  test('zstd: more frames than allowed', async () => {
    const empty = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 1, 0, 0]);
    assert.equal((await decompress(Buffer.concat(Array(ZSTD_MAX_FRAMES).fill(empty)), 'zstd', LIMIT)).length, 0);
    const err = await refusal(Buffer.concat(Array(ZSTD_MAX_FRAMES + 1).fill(empty)), 'zstd');
    assert.ok(err.tooLarge);
    assert.match(err.message, new RegExp(`more than ${ZSTD_MAX_FRAMES} frames`));
  });

  test('zstd: a window over 8 MiB, declared or by a single segment', async () => {
    // Window descriptor: exponent 14 → 16 MiB; a single-segment frame's window is its content size (4 bytes here: 9 MiB).
    for (const body of [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 14 << 3, 1, 0, 0]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, ...u32le(9 * MiB), 1, 0, 0])]) {
      const err = await refusal(body, 'zstd');
      assert.ok(err.tooLarge);
      assert.match(err.message, new RegExp(`windows of up to ${ZSTD_MAX_WINDOW} bytes`));
    }
    // 8 MiB itself is decoded.
    assert.equal((await decompress(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3, 1, 0, 0]), 'zstd', LIMIT)).length, 0);
  });

  test('zstd: a frame of tiny blocks, each of which would move the whole window', async () => {
    const blocks = ZSTD_MAX_SHORT_BLOCKS + 10;
    const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3])];
    for (let i = 0; i < blocks; i++) parts.push(Buffer.from([(1 << 3) | (i === blocks - 1 ? 1 : 0), 0, 0, 0x41]));
    const err = await refusal(Buffer.concat(parts), 'zstd');
    assert.ok(err.tooLarge);
    assert.match(err.message, new RegExp(`more than ${ZSTD_MAX_SHORT_BLOCKS} blocks`));
  });

  test('lz4: more frames than allowed', async () => {
    const descriptor = Buffer.from([0x60, 0x40]);
    const empty = Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18]), descriptor, Buffer.from([(xxh32(descriptor, 0, 2) >>> 8) & 0xff]), Buffer.alloc(4)]);
    assert.equal((await decompress(Buffer.concat(Array(LZ4_MAX_FRAMES).fill(empty)), 'lz4', LIMIT)).length, 0);
    const err = await refusal(Buffer.concat(Array(LZ4_MAX_FRAMES + 1).fill(empty)), 'lz4');
    assert.ok(err.tooLarge);
    assert.match(err.message, new RegExp(`more than ${LZ4_MAX_FRAMES} frames`));
  });

  test('each codec stops at the limit', async () => {
    const limit = 4 * MiB;
    const zeros = Buffer.alloc(limit + 1);
    for (const [encoding, body] of /** @type {[string, Buffer][]} */ ([
      ['gzip', zlib.gzipSync(zeros)],
      ['deflate', zlib.deflateSync(zeros)],
      ['snappy', snappyBlock(zeros)],
      ['x-snappy-framed', await snappyFramed(zeros)],
    ])) {
      const err = await refusal(body, encoding, limit);
      assert.ok(err.tooLarge, `${encoding}: ${err.message}`);
      assert.match(err.message, new RegExp(`limit of ${limit} bytes`));
      assert.equal((await decompress(body, encoding, limit + 1)).length, limit + 1);
    }
  });
});

/** @param {number} n */
function u32le(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return [...b];
}

describe('malformed bodies are refused naming the codec and what is wrong', () => {
  test('snappy blocks', async () => {
    const whole = snappyBlock(PLAIN.subarray(0, MiB));
    const cases = /** @type {[Buffer, RegExp][]} */ ([
      [Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80]), /snappy data: it does not start with a length/],
      [whole.subarray(0, whole.length >> 1), /snappy data: it holds \d+ bytes but declares|runs past the end/],
      [Buffer.from([0x05, 0x01, 0x00]), /snappy data: a copy refers to 0 bytes back/],
      [Buffer.from([0x08, 0x00, 0x41, 0x0d, 0x09]), /snappy data: a copy refers to 9 bytes back/],
      [Buffer.from([0x01, 0x04, 0x41, 0x42]), /snappy data: it holds more than the length it declares/],
    ]);
    for (const [body, message] of cases) {
      const err = await refusal(body, 'snappy');
      assert.equal(err.tooLarge, false);
      assert.match(err.message, message);
    }
  });

  test('framed snappy: a corrupted compressed chunk', async () => {
    const framed = await snappyFramed(PLAIN.subarray(0, MiB));
    const bad = Buffer.from(framed);
    bad.fill(0xff, 30, 60);
    const err = await refusal(bad, 'x-snappy-framed');
    assert.match(err.message, /malformed snappy framed stream/);
  });

  test('truncated bodies of every codec', async () => {
    for (const [encoding, body] of await everyCodec(PLAIN.subarray(0, MiB))) {
      if (!body) continue;
      for (const cut of [0.3, 0.9]) {
        const err = await refusal(body.subarray(0, Math.floor(body.length * cut)), encoding);
        assert.equal(err.tooLarge, false, err.message);
        assert.match(err.message, new RegExp(encoding === 'x-snappy-framed' ? 'snappy framed' : encoding === 'deflate' ? 'deflate|zlib' : encoding));
      }
    }
  });
});

describe('decoded bytes are taken from the in-flight budget before they are allocated', () => {
  /** A budget of `size` bytes that records the most it ever lent. @param {number} size */
  const budget = (size) => {
    const room = {
      held: 0,
      most: 0,
      take: (/** @type {number} */ n) => {
        if (room.held + n > size) return false;
        room.held += n;
        room.most = Math.max(room.most, room.held);
        return true;
      },
      give: (/** @type {number} */ n) => {
        room.held -= n;
      },
    };
    return room;
  };
  const data = PLAIN.subarray(0, 3 * MiB);
  const bodies = () => everyCodec(data);

  test('a decoded body holds exactly its length, and never more than a piece beyond it', async () => {
    for (const [encoding, body] of await bodies()) {
      if (!body) continue;
      const room = budget(64 * MiB);
      const out = await decompress(body, encoding, LIMIT, undefined, room);
      assert.ok(out.equals(data), encoding);
      assert.equal(room.held, data.length, encoding);
      assert.ok(room.most <= data.length + MiB, `${encoding}: ${room.most} bytes lent`);
    }
  });

  test('a body that does not fit is refused as busy, and gives back what it took', async () => {
    for (const [encoding, body] of await bodies()) {
      if (!body) continue;
      const room = budget(2 * MiB);
      const err = await refusal(body, encoding, LIMIT, room);
      assert.ok(err.busy && !err.tooLarge, `${encoding}: ${err.message}`);
      assert.match(err.message, /--max-inflight-bytes/);
      assert.equal(room.held, 0, encoding);
      assert.ok(room.most <= 2 * MiB, encoding);
    }
  });

  test('past the request limit, what was taken is given back', async () => {
    const room = budget(64 * MiB);
    const err = await refusal(snappyBlock(Buffer.alloc(4 * MiB + 1)), 'snappy', 4 * MiB, room);
    assert.ok(err.tooLarge);
    const zerr = await refusal(zlib.gzipSync(Buffer.alloc(4 * MiB + 1)), 'gzip', 4 * MiB, room);
    assert.ok(zerr.tooLarge);
    assert.equal(room.held, 0);
  });
});

test('a body whose client has gone away is no longer decoded', async () => {
  let gone = false;
  let turns = 0;
  const pending = decompress(snappyBlock(PLAIN), 'snappy', LIMIT, () => {
    turns++;
    return gone;
  });
  gone = true;
  await assert.rejects(pending, (/** @type {any} */ err) => err instanceof DecompressError && /went away/.test(err.message));
  assert.equal(turns, 1, 'it stopped at its first turn');
});

test('XXH32 over pieces equals XXH32 over the whole', () => {
  const random = seededRandom(7);
  for (const length of [0, 1, 15, 16, 17, 100, 4099]) {
    const data = new Uint8Array(length).map(() => Math.floor(random() * 256));
    const hash = new Xxh32();
    for (let p = 0; p < length;) {
      const end = Math.min(length, p + 1 + Math.floor(random() * 40));
      hash.update(data, p, end);
      p = end;
    }
    assert.equal(hash.digest(), xxh32(data, 0, length), `length ${length}`);
  }
});
