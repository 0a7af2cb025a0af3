import zlib from 'node:zlib';
import { Readable } from 'node:stream';

const MIB = 1 << 20;

/**
 * A valid gzip stream that inflates to `mebibytes` MiB of zeros, produced lazily from one compressed block so that
 * neither this process nor its memory has to compress (or hold) the whole inflated size.
 * After a full flush deflate starts from an empty window on a byte boundary, so compressing one MiB of zeros yields
 * the same bytes every time: the stream is the gzip header, that block repeated, an empty final block and the trailer.
 * @param {number} mebibytes
 * @returns {Promise<{ stream: () => Readable, compressedBytes: number }>}
 */
export async function gzipZeros(mebibytes) {
  const zeros = Buffer.alloc(MIB);
  const gzip = zlib.createGzip({ level: 9 });
  /** @type {Buffer[]} */
  const out = [];
  gzip.on('data', (c) => out.push(c));
  const flushed = async () => {
    await new Promise((resolve) => gzip.flush(zlib.constants.Z_FULL_FLUSH, () => resolve(undefined)));
    return Buffer.concat(out.splice(0));
  };
  gzip.write(zeros);
  const first = await flushed();
  gzip.write(zeros);
  const block = await flushed();
  gzip.destroy();
  const header = first.subarray(0, first.length - block.length);
  if (!first.subarray(header.length).equals(block) || header.length !== 10) throw new Error('deflate did not produce a repeatable block for zeros');
  const finalBlock = Buffer.from([0x03, 0x00]);
  const compressedBytes = header.length + block.length * mebibytes + finalBlock.length + 8;

  const stream = () =>
    Readable.from(
      (function* () {
        yield header;
        let crc = 0;
        for (let i = 0; i < mebibytes; i++) {
          crc = zlib.crc32(zeros, crc);
          yield block;
        }
        const trailer = Buffer.alloc(8);
        trailer.writeUInt32LE(crc >>> 0, 0);
        trailer.writeUInt32LE((mebibytes * MIB) % 2 ** 32, 4);
        yield Buffer.concat([finalBlock, trailer]);
      })(),
      { objectMode: false },
    );
  return { stream, compressedBytes };
}
