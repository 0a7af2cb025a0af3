// Content-Encoding on OTLP/HTTP: every encoding the Collector's receiver accepts, over protobuf and JSON bodies.
// The official JS exporters send only gzip (covered in http.test.js), so these bodies come from the reference
// zstd and lz4 tools (fixtures/compressed/generate.sh), Node's zlib and the snappy package; bombs are built here.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { compressSync as snappyBlock, Compressor as SnappyFramer } from 'snappy';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { decodeStatus } from '../../server/otlp/schema.js';
import { DecompressError } from '../../server/transport/decompress.js';
import { zstdInJs } from '../../server/transport/zstd.js';
import { Slicer } from '../../server/transport/slices.js';
import { xxh32 } from '../../server/transport/lz4.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';
/** Small, so that bombs stay small: each one here inflates to hundreds of times this. */
const LIMIT = 1 << 20;
const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;
const FIXTURE_SPANS = 10;

const fixture = (/** @type {string} */ name) => fs.readFileSync(new URL(`../../fixtures/${name}`, import.meta.url));
const BODIES = { protobuf: fixture('traces.pb'), json: fixture('traces.json') };
const TYPES = { protobuf: PROTOBUF, json: JSON_TYPE };

/** @param {Buffer} data */
async function snappyFramed(data) {
  const framer = new SnappyFramer();
  return Buffer.concat([framer.update(data), await framer.finish()]);
}

/** How each encoding's body is made from the plain one. @type {Record<string, (plain: Buffer, kind: 'protobuf'|'json') => Buffer|Promise<Buffer>>} */
const ENCODE = {
  gzip: (plain) => zlib.gzipSync(plain),
  deflate: (plain) => zlib.deflateSync(plain),
  zlib: (plain) => zlib.deflateSync(plain),
  zstd: (_plain, kind) => fixture(`compressed/traces.${kind === 'json' ? 'json' : 'pb'}.zst`),
  lz4: (_plain, kind) => fixture(`compressed/traces.${kind === 'json' ? 'json' : 'pb'}.lz4`),
  snappy: (plain) => snappyBlock(plain),
  'x-snappy-framed': snappyFramed,
};

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
before(async () => {
  collector = await startTestCollector({ maxRequestBytes: LIMIT });
});
after(() => collector.stop());
beforeEach(() => collector.clear());

/** @param {Uint8Array} body @param {string} encoding @param {'protobuf'|'json'} [kind] */
const post = (body, encoding, kind = 'protobuf') => postOtlp(collector.urls.http, '/v1/traces', body, TYPES[kind], { 'content-encoding': encoding });

const spanTotal = async () => (await collector.api('/api/spans?limit=1')).total;

/** The google.rpc.Status of an error answer, in the request's encoding. @param {import('../helpers/http.js').RawResponse} res @param {'protobuf'|'json'} kind */
function statusOf(res, kind) {
  assert.equal(String(res.headers['content-type']).split(';')[0], TYPES[kind]);
  return kind === 'json' ? JSON.parse(res.body.toString('utf8')) : decodeStatus(res.body);
}

describe('every encoding the Collector accepts is decoded and stored', () => {
  for (const [encoding, encode] of Object.entries(ENCODE)) {
    for (const kind of /** @type {const} */ (['protobuf', 'json'])) {
      test(`${encoding}, ${kind}`, async () => {
        const body = await encode(BODIES[kind], kind);
        const res = await post(body, encoding, kind);
        assert.equal(res.status, 200, res.body.toString());
        assert.equal(await spanTotal(), FIXTURE_SPANS);
        const [entry] = (await collector.api('/api/requests?limit=1')).requests;
        assert.deepEqual([entry.contentEncoding, entry.bytes, entry.outcome], [encoding, body.length, 'accepted']);
      });
    }
  }

  test('lz4 with linked 64 KiB blocks and block checksums: twenty requests in one body', async () => {
    assert.equal((await post(fixture('compressed/traces-x20.pb.lz4'), 'lz4')).status, 200);
    assert.equal(await spanTotal(), 20 * FIXTURE_SPANS);
  });

  test('zstd: two frames and a skippable frame in one body', async () => {
    const frame = fixture('compressed/traces.pb.zst');
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    assert.equal((await post(Buffer.concat([skippable, frame, frame]), 'zstd')).status, 200);
    assert.equal(await spanTotal(), 2 * FIXTURE_SPANS);
  });

  test('snappy: a framed body under the name snappy is recognised, as the Collector does', async () => {
    assert.equal((await post(await snappyFramed(BODIES.protobuf), 'snappy')).status, 200);
    assert.equal(await spanTotal(), FIXTURE_SPANS);
  });

  test('encoding names are case-insensitive and may carry spaces', async () => {
    assert.equal((await post(fixture('compressed/traces.pb.zst'), ' ZSTD ')).status, 200);
  });
});

/** A zstd frame of RLE blocks, 128 KiB each from 4 bytes: `total` bytes of zeros from total/32768 bytes. @param {number} total */
function zstdBomb(total) {
  const block = 128 << 10;
  const count = Math.ceil(total / block);
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38])];
  for (let i = 0; i < count; i++) {
    const header = (block << 3) | (1 << 1) | (i === count - 1 ? 1 : 0);
    parts.push(Buffer.from([header & 0xff, (header >>> 8) & 0xff, header >>> 16, 0]));
  }
  return Buffer.concat(parts);
}

/**
 * An lz4 frame whose 4 MiB blocks are each one zero byte and one long match (a length byte per 255 bytes) ending
 * in five literals, as the block format requires: about 16 KiB per block.
 * @param {number} blocks
 */
function lz4Bomb(blocks) {
  const blockBytes = 4 << 20;
  const extra = blockBytes - 1 - 5 - 15 - 4;
  const lengthBytes = Buffer.alloc(Math.floor(extra / 255) + 1, 255);
  lengthBytes[lengthBytes.length - 1] = extra % 255;
  const block = Buffer.concat([Buffer.from([0x1f, 0x00, 0x01, 0x00]), lengthBytes, Buffer.from([0x50, 0, 0, 0, 0, 0])]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(block.length);
  const descriptor = Buffer.from([0x60, 0x70]);
  const header = Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18]), descriptor, Buffer.from([(xxh32(descriptor, 0, 2) >>> 8) & 0xff])]);
  return Buffer.concat([header, ...Array.from({ length: blocks }, () => Buffer.concat([size, block])), Buffer.alloc(4)]);
}

describe('bombs stop at the limit', () => {
  /** @type {[string, string, () => Buffer|Promise<Buffer>][]} */
  const BOMBS = [
    ['zstd RLE blocks, 1 GiB', 'zstd', () => zstdBomb(1 << 30)],
    ['zstd frame declaring 1 GiB', 'zstd', () => Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x80, 0, 0, 0, 0x40, 1, 0, 0])],
    ['zstd frame asking for a 2 GiB window', 'zstd', () => Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 1, 0, 0])],
    ['lz4 blocks, 192 MiB', 'lz4', () => lz4Bomb(48)],
    ['snappy block declaring 1 GiB', 'snappy', () => Buffer.from([0x80, 0x80, 0x80, 0x80, 0x04, 0x00])],
    ['framed snappy, 16 MiB of zeros', 'x-snappy-framed', () => snappyFramed(Buffer.alloc(16 << 20))],
  ];
  for (const [name, encoding, make] of BOMBS) {
    test(`${name}: 413 with a Status, quickly, memory bounded`, async (t) => {
      const body = await make();
      assert.ok(body.length < LIMIT, `the bomb (${body.length} bytes) is under the request limit`);
      globalThis.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
      try {
        for (const kind of /** @type {const} */ (['protobuf', 'json'])) {
          const res = await post(body, encoding, kind);
          assert.equal(res.status, 413, res.body.toString());
          const status = statusOf(res, kind);
          assert.equal(status.code, RESOURCE_EXHAUSTED);
          assert.match(status.message, new RegExp(`limit of ${LIMIT} bytes`));
          assert.ok(res.ms < 2000, `answered in ${res.ms} ms`);
        }
      } finally {
        clearInterval(sampler);
      }
      const grownMiB = (peak - before) / 2 ** 20;
      t.diagnostic(`${body.length} bytes; peak RSS grew ${grownMiB.toFixed(1)} MiB`);
      assert.ok(grownMiB < 48, `resident memory grew by ${grownMiB.toFixed(1)} MiB`);
      assert.equal(await spanTotal(), 0);
    });
  }

  test('the JavaScript zstd decoder (used before Node 22.15) stops at the limit too', async () => {
    const bomb = zstdBomb(64 << 20);
    await assert.rejects(zstdInJs(bomb, LIMIT, new Slicer()), (/** @type {any} */ err) => err instanceof DecompressError && err.tooLarge);
    assert.equal((await zstdInJs(zstdBomb(LIMIT), LIMIT, new Slicer())).length, LIMIT);
  });
});

describe('malformed and truncated bodies of each encoding get 400 naming it', () => {
  for (const [encoding, encode] of Object.entries(ENCODE)) {
    test(`${encoding}: truncated`, async () => {
      const whole = await encode(BODIES.protobuf, 'protobuf');
      for (const kind of /** @type {const} */ (['protobuf', 'json'])) {
        const res = await post(whole.subarray(0, Math.floor(whole.length * 0.6)), encoding, kind);
        assert.equal(res.status, 400, res.body.toString());
        const status = statusOf(res, kind);
        assert.equal(status.code, INVALID_ARGUMENT);
        assert.match(status.message, new RegExp(encoding === 'x-snappy-framed' ? 'snappy framed' : encoding === 'deflate' ? 'deflate|zlib' : encoding));
      }
      assert.equal(await spanTotal(), 0);
    });
  }

  test('checksums are verified: lz4 content, lz4 block, snappy chunk', async () => {
    /** @param {Buffer} body @param {number} at */
    const flip = (body, at) => {
      const copy = Buffer.from(body);
      copy[at] ^= 0x01;
      return copy;
    };
    const cases = [
      ['lz4', flip(fixture('compressed/traces.pb.lz4'), fixture('compressed/traces.pb.lz4').length - 1), /lz4 content checksum/],
      ['lz4', flip(fixture('compressed/traces-x20.pb.lz4'), 40), /lz4 block checksum|malformed lz4 block/],
      ['lz4', flip(fixture('compressed/traces.pb.lz4'), 5), /lz4 frame header/],
      ['x-snappy-framed', flip(await snappyFramed(BODIES.protobuf), 200), /snappy framed stream/],
    ];
    for (const [encoding, body, message] of /** @type {[string, Buffer, RegExp][]} */ (cases)) {
      const res = await post(body, encoding);
      assert.equal(res.status, 400);
      assert.match(statusOf(res, 'protobuf').message, message);
    }
  });

  test('bodies that are not what their encoding says', async () => {
    for (const encoding of Object.keys(ENCODE)) {
      const res = await post(Buffer.from('plainly not compressed, and long enough to look like something'), encoding);
      assert.equal(res.status, 400, `${encoding}: ${res.body}`);
      assert.equal(statusOf(res, 'protobuf').code, INVALID_ARGUMENT);
    }
  });

  test('zstd frames needing a dictionary, and legacy lz4 frames, are refused by name', async () => {
    const withDictionary = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x38, 7, 1, 0, 0]);
    assert.match(statusOf(await post(withDictionary, 'zstd'), 'protobuf').message, /dictionary/);
    const legacy = Buffer.from([0x02, 0x21, 0x4c, 0x18, 0, 0, 0, 0]);
    assert.match(statusOf(await post(legacy, 'lz4'), 'protobuf').message, /legacy lz4/);
  });
});

test('an unknown Content-Encoding gets 400 naming the encodings accepted', async () => {
  for (const encoding of ['br', 'compress', 'gzip, zstd', 'x-unknown']) {
    for (const kind of /** @type {const} */ (['protobuf', 'json'])) {
      const res = await post(zlib.gzipSync(BODIES[kind]), encoding, kind);
      assert.equal(res.status, 400);
      const status = statusOf(res, kind);
      assert.equal(status.code, INVALID_ARGUMENT);
      assert.match(status.message, /gzip, deflate, zlib, zstd, snappy, x-snappy-framed, lz4/);
    }
  }
  assert.equal(await spanTotal(), 0);
});
