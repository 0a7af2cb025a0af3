// Node's zlib decoders (gzip, deflate, and zstd from Node 22.15) run in libuv's thread pool. Read as a stream a
// piece at a time, they decode little ahead of what is read, so the time each piece takes can count as the
// decoder's slice (./slices.js): a body that inflates to the limit takes its turns as the JavaScript decoders do.
import { gathered } from './pieces.js';

/** Output pieces larger than zlib's 16 KiB default, so that a large body costs the event loop fewer turns. */
const PIECE = 256 << 10;

/**
 * @param {(options: import('node:zlib').ZlibOptions) => import('node:stream').Transform} open a zlib stream factory
 * @param {Buffer} body @param {number} limit @param {import('./slices.js').Slicer} slicer @returns {Promise<Buffer>}
 */
export async function zlibInSlices(open, body, limit, slicer) {
  slicer.acrossWaits = true;
  const stream = open({ chunkSize: PIECE });
  return gathered(limit, slicer, async (out) => {
    stream.end(body);
    for await (const piece of stream) {
      out.add(piece);
      if (slicer.due()) await slicer.pause();
    }
  });
}
