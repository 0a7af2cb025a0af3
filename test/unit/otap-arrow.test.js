// OTAP's Arrow reading (server/otap/arrow.js, zstd.js, columns.js): zstd frames of each kind the reader treats apart,
// and hand-built IPC streams with dictionary deltas across payloads of one schema_id, nulls, empty batches and
// truncated records. The real producer's streams, zstd buffers included, are in test/interop/otap*.test.js.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  Dictionary,
  Field,
  Int32,
  Message,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  makeData,
  vectorFromArray,
  compressionRegistry,
  CompressionType,
} from 'apache-arrow';
import { status as grpcStatus } from '@grpc/grpc-js';
import { ArrowState, ArrowError, Inflation } from '../../server/otap/arrow.js';
import { column } from '../../server/otap/columns.js';
import { decodeZstd, placed } from '../../server/otap/zstd.js';
import { rleBomb } from '../helpers/otap-payloads.js';

const hex = (/** @type {string} */ s) => Uint8Array.from(Buffer.from(s, 'hex'));
const TEXT = new TextEncoder().encode('hello hello hello hello world world world 12345678');
/** `zstd --no-check` of TEXT: one compressed block, the content size in the header. */
const COMPRESSED_SIZED = hex('28b52ffd2032dd00009868656c6c6f20776f726c6431323334353637380200e0d0f14a11');
/** `zstd --no-content-size` of TEXT, as an OTAP producer frames its buffers: no content size, a checksum. */
const COMPRESSED_UNSIZED = hex('28b52ffd0400dd00009868656c6c6f20776f726c6431323334353637380200e0d0f14a1125784361');

/** A zstd frame of one raw block, with a checksum field as the producer writes it. @param {Uint8Array} bytes */
function rawFrame(bytes) {
  const head = (bytes.length << 3) | 1;
  return Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00, head & 0xff, (head >> 8) & 0xff, head >> 16, ...bytes, 1, 2, 3, 4]);
}

/** A zstd frame of one RLE block. @param {number} byte @param {number} size */
function rleFrame(byte, size) {
  const head = (size << 3) | (1 << 1) | 1;
  return Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, head & 0xff, (head >> 8) & 0xff, head >> 16, byte]);
}

const MiB = 1024 * 1024;
/** A batch's inflation with room for all it declares, up to `limit`. @param {number} [limit] */
const inflation = (limit = 64 * MiB) => new Inflation(limit, () => false);

/** A frame decoded ahead as the reader does it (arrow.js decodeAhead): in slices, then placed. @param {Uint8Array} frame @param {number} declared */
async function decodedAhead(frame, declared) {
  const batch = inflation();
  batch.declare(declared);
  return placed(await batch.frame(frame, declared), declared, true);
}

describe('zstd buffers', () => {
  test('a lone raw block is copied, 8-byte aligned, in a shared slab or an array of its own', () => {
    const a = /** @type {Uint8Array} */ (decodeZstd(rawFrame(TEXT), TEXT.length, true));
    const b = /** @type {Uint8Array} */ (decodeZstd(rawFrame(TEXT.subarray(0, 3)), 3, true));
    const own = /** @type {Uint8Array} */ (decodeZstd(rawFrame(TEXT), TEXT.length, false));
    for (const out of [a, b, own]) assert.equal(out.byteOffset % 8, 0);
    assert.deepEqual(a, TEXT);
    assert.deepEqual(b, TEXT.subarray(0, 3));
    assert.deepEqual(own, TEXT);
    assert.equal(a.buffer, b.buffer);
    assert.ok(b.byteOffset >= a.byteOffset + a.length, 'slab cuts do not overlap');
    assert.equal(own.buffer.byteLength, TEXT.length);
  });

  test('a lone RLE block is filled', () => {
    assert.deepEqual(decodeZstd(rleFrame(7, 300), 300, true), new Uint8Array(300).fill(7));
  });

  test('a frame that holds less than its declared length reads as zeros past its end, at once or in slices', async () => {
    const padded = new Uint8Array([...TEXT, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(decodeZstd(rawFrame(TEXT), TEXT.length + 8, true), padded);
    assert.deepEqual(await decodedAhead(rawFrame(TEXT), TEXT.length + 8), padded);
  });

  test('compressed blocks decode, with or without a content size in the frame, at once or in slices, 8-byte aligned', async () => {
    for (const frame of [COMPRESSED_SIZED, COMPRESSED_UNSIZED]) {
      for (const out of [decodeZstd(frame, TEXT.length, true), decodeZstd(frame, TEXT.length, false), await decodedAhead(frame, TEXT.length)]) {
        assert.deepEqual(out, TEXT);
        assert.equal(/** @type {Uint8Array} */ (out).byteOffset % 8, 0);
      }
    }
  });

  test('what one decode leaves in the scratch array is not read by the next', () => {
    decodeZstd(COMPRESSED_UNSIZED, TEXT.length, true);
    const out = /** @type {Uint8Array} */ (decodeZstd(COMPRESSED_UNSIZED, TEXT.length + 4, true));
    assert.deepEqual(out.subarray(0, TEXT.length), TEXT);
    assert.deepEqual(out.subarray(TEXT.length), new Uint8Array(4));
  });

  test('two frames in one buffer are left to the sliced decoder, which decodes their concatenation', async () => {
    const two = new Uint8Array([...COMPRESSED_UNSIZED, ...rawFrame(TEXT)]);
    assert.equal(decodeZstd(two, TEXT.length * 2, true), null);
    assert.deepEqual(await decodedAhead(two, TEXT.length * 2), new Uint8Array([...TEXT, ...TEXT]));
  });

  test('a truncated frame is left to the sliced decoder, which names it an ArrowError', async () => {
    for (const cut of [COMPRESSED_UNSIZED.subarray(0, 12), rawFrame(TEXT).subarray(0, 20)]) {
      assert.equal(decodeZstd(cut, TEXT.length, true), null);
      await assert.rejects(decodedAhead(cut, TEXT.length), ArrowError);
    }
  });

  test('a frame whose blocks could write more than 1 MiB is left to the sliced decoder, its headers read only that far', () => {
    const bomb = new Uint8Array(rleBomb(20_000, 17));
    const started = performance.now();
    assert.equal(decodeZstd(bomb, 1000, true), null);
    assert.ok(performance.now() - started < 50);
  });

  test('a frame that expands past its declared length is refused at it, in time and memory of that length', async () => {
    // 80 KB of frame that decodes to 2.5 GB, declared as 1,000 bytes: decoded at once it held the loop 18 s
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    await assert.rejects(
      decodedAhead(new Uint8Array(rleBomb(20_000, 17)), 1000),
      (err) => err instanceof ArrowError && err.code === grpcStatus.RESOURCE_EXHAUSTED && /1000 bytes it declares/.test(err.message),
    );
    assert.ok(performance.now() - started < 2000, `refused after ${performance.now() - started} ms`);
    assert.ok(process.memoryUsage().rss - rss < 256 * MiB, 'the frame is not decoded whole');
  });

  test("declared lengths are bounded: each a length, all of a batch's together within its limit", () => {
    const batch = inflation(1000);
    for (const bad of [-2, 2 ** 62, 0.5])
      assert.throws(
        () => batch.declare(bad),
        (err) => err instanceof ArrowError && err.code === grpcStatus.INVALID_ARGUMENT,
      );
    batch.declare(600);
    assert.throws(
      () => batch.declare(401),
      (err) => err instanceof ArrowError && err.code === grpcStatus.RESOURCE_EXHAUSTED && /--max-request-bytes/.test(err.message),
    );
    batch.declare(400);
  });
});

const DICTIONARY = new Dictionary(new Utf8(), new Int32(), 0);
const SCHEMA = new Schema([new Field('name', DICTIONARY, true), new Field('n', new Int32(), true)]);

/**
 * A record batch of SCHEMA: `names` index into `dictionary`, null where null.
 * @param {any} dictionary a Vector of strings @param {(number|null)[]} names @param {(number|null)[]} ns
 */
function batchOf(dictionary, names, ns) {
  const indices = makeData({
    type: DICTIONARY,
    length: names.length,
    nullCount: names.filter((x) => x === null).length,
    nullBitmap: bitmap(names),
    data: Int32Array.from(names, (x) => x ?? 0),
    dictionary,
  });
  const n = vectorFromArray(ns, new Int32()).data[0];
  const data = makeData({ type: new Struct(SCHEMA.fields), length: names.length, children: [indices, n] });
  return new RecordBatch(SCHEMA, data);
}

/** @param {unknown[]} values */
function bitmap(values) {
  const bits = new Uint8Array(Math.ceil(values.length / 8) || 1);
  values.forEach((v, i) => v !== null && (bits[i >> 3] |= 1 << (i & 7)));
  return bits;
}

/**
 * The IPC stream of `batches`, cut into payloads as an OTAP producer sends them: the schema and what comes before
 * the first record batch in the first, then each record batch with the (delta) dictionaries before it.
 * Its buffers are stored uncompressed: apache-arrow's writer keeps a buffer whose frame is not smaller as it is (and
 * would write the frame's length where Arrow wants the uncompressed one), so zstd frames are tested on their own.
 * @param {RecordBatch[]} batches @returns {Uint8Array[]}
 */
function payloadsOf(batches) {
  const codec = compressionRegistry.get(CompressionType.ZSTD);
  compressionRegistry.set(CompressionType.ZSTD, { encode: rawFrame, decode: /** @type {any} */ (codec).decode });
  let bytes;
  try {
    const writer = new RecordBatchStreamWriter({ compressionType: CompressionType.ZSTD });
    writer.reset(undefined, SCHEMA);
    for (const batch of batches) writer.write(batch);
    writer.finish();
    bytes = writer.toUint8Array(true);
  } finally {
    compressionRegistry.set(CompressionType.ZSTD, /** @type {any} */ (codec));
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloads = [];
  let start = 0;
  let at = 0;
  for (;;) {
    const length = view.getInt32(at + 4, true);
    if (length === 0) break;
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + length));
    at += 8 + length + Number(message.bodyLength);
    if (message.isRecordBatch()) {
      payloads.push(bytes.slice(start, at));
      start = at;
    }
  }
  return payloads;
}

/** @param {any} batch @param {string} name */
const rows = (batch, name) => Array.from({ length: batch.numRows }, (_, row) => column(batch, name)(row));

describe('Arrow streams', () => {
  const first = vectorFromArray(['a', 'b'], new Utf8());
  const grown = first.concat(vectorFromArray(['c'], new Utf8()));
  const grownMore = grown.concat(vectorFromArray(['d', 'e'], new Utf8()));

  test('dictionary deltas across payloads of one schema_id add to what was read before', async () => {
    const payloads = payloadsOf([batchOf(first, [0, 1, null], [1, null, 3]), batchOf(grown, [2, 0], [4, 5]), batchOf(grownMore, [4, null, 3, 2], [6, 7, 8, 9])]);
    assert.equal(payloads.length, 3);
    const state = new ArrowState({ maxDictionaryValues: 100 });
    const read = [];
    for (const record of payloads) read.push(await state.read({ schemaId: 's', type: 11, record }, inflation()));
    assert.deepEqual(rows(read[0], 'name'), ['a', 'b', null]);
    assert.deepEqual(rows(read[0], 'n'), [1, null, 3]);
    assert.deepEqual(rows(read[1], 'name'), ['c', 'a']);
    assert.deepEqual(rows(read[2], 'name'), ['e', null, 'd', 'c']);
    assert.deepEqual(rows(read[2], 'n'), [6, 7, 8, 9]);
  });

  test('an empty record batch reads as no rows', async () => {
    const [record] = payloadsOf([batchOf(first, [], [])]);
    const batch = await new ArrowState({ maxDictionaryValues: 100 }).read({ schemaId: 's', type: 11, record }, inflation());
    assert.equal(batch.numRows, 0);
  });

  test('a truncated record is an ArrowError, and its schema_id starts over', async () => {
    const payloads = payloadsOf([batchOf(first, [0], [1]), batchOf(grown, [2], [2])]);
    const state = new ArrowState({ maxDictionaryValues: 100 });
    await state.read({ schemaId: 's', type: 11, record: payloads[0] }, inflation());
    for (const cut of [6, 40, payloads[1].length - 3]) {
      await assert.rejects(state.read({ schemaId: 's', type: 11, record: payloads[1].subarray(0, cut) }, inflation()), ArrowError);
    }
    await assert.rejects(state.read({ schemaId: 's', type: 11, record: payloads[1] }, inflation()), ArrowError, 'a continuation without its schema');
    assert.deepEqual(rows(await state.read({ schemaId: 's', type: 11, record: payloads[0] }, inflation()), 'name'), ['a']);
  });

  test('dictionaries past the limit are refused', async () => {
    const payloads = payloadsOf([batchOf(first, [0], [1]), batchOf(grownMore, [4], [2])]);
    const state = new ArrowState({ maxDictionaryValues: 4 });
    await state.read({ schemaId: 's', type: 11, record: payloads[0] }, inflation());
    await assert.rejects(state.read({ schemaId: 's', type: 11, record: payloads[1] }, inflation()), /more than 4 values/);
  });

  test('a dictionary past its chunk limit is made one chunk, its values kept', async () => {
    let dictionary = vectorFromArray(['v0'], new Utf8());
    const batches = [batchOf(dictionary, [0], [0])];
    for (let i = 1; i <= 40; i++) {
      dictionary = dictionary.concat(vectorFromArray([`v${i}`], new Utf8()));
      batches.push(batchOf(dictionary, [i, 0], [i, i]));
    }
    const state = new ArrowState({ maxDictionaryValues: 100 });
    const read = [];
    for (const record of payloadsOf(batches)) read.push(await state.read({ schemaId: 's', type: 11, record }, inflation()));
    assert.deepEqual(rows(read[40], 'name'), ['v40', 'v0']);
    assert.ok(read.every((batch, i) => rows(batch, 'name')[0] === `v${i}`));
    assert.ok(/** @type {any} */ (read[40]).getChild('name').data[0].dictionary.data.length <= 32);
  });
});
