// OTAP messages built by hand, for tests and the soak: BatchArrowRecords around Arrow IPC records, BatchStatus read
// back, and zstd frames of any shape (decompression bombs included) in an Arrow IPC stream's buffers.
import { RecordBatchStreamWriter, compressionRegistry, CompressionType, tableFromArrays } from 'apache-arrow';

/** @param {number} n */
function varint(n) {
  const out = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** @param {number} field @param {Buffer} bytes */
const lengthDelimited = (field, bytes) => Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);

/** BatchArrowRecords with one ArrowPayload per entry. @param {number} batchId @param {{ schemaId: string, type: number, record: Uint8Array }[]} payloads */
export function batch(batchId, payloads) {
  const parts = [varint(0x08), varint(batchId)];
  for (const p of payloads) {
    const payload = Buffer.concat([lengthDelimited(1, Buffer.from(p.schemaId)), varint(0x10), varint(p.type), lengthDelimited(3, Buffer.from(p.record))]);
    parts.push(lengthDelimited(2, payload));
  }
  return Buffer.concat(parts);
}

/** BatchStatus → { batch, code, message }. @param {Buffer} bytes */
export function statusOf(bytes) {
  const out = { batch: 0, code: 0, message: '' };
  let at = 0;
  const read = () => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[at++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
    }
  };
  while (at < bytes.length) {
    const key = read();
    if (key === 0x08) out.batch = read();
    else if (key === 0x10) out.code = read();
    else if (key === 0x1a) {
      const n = read();
      out.message = bytes.subarray(at, (at += n)).toString();
    }
  }
  return out;
}

/**
 * A zstd frame of `blocks` RLE blocks, each as large as a window of 2^windowLog bytes allows: 4 bytes of frame for
 * each block it decodes to. @param {number} blocks @param {number} windowLog
 */
export function rleBomb(blocks, windowLog) {
  const block = 2 ** windowLog;
  const frame = Buffer.alloc(6 + blocks * 4);
  frame.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3]);
  for (let i = 0; i < blocks; i++) {
    const head = (block << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    frame.set([head & 0xff, (head >> 8) & 0xff, head >> 16, 0x61], 6 + i * 4);
  }
  return frame;
}

/**
 * A LOGS table as an Arrow IPC stream whose buffers are zstd frames: `frameOf` makes each buffer's frame, and each
 * is declared as its buffer's length, as Arrow IPC says (apache-arrow's writer would declare the frame's length).
 * @param {Record<string, string[]>} columns @param {(buffer: Uint8Array) => Buffer} frameOf
 */
export function zstdIpc(columns, frameOf) {
  /** @type {Map<Buffer, number>} */
  const declared = new Map();
  const codec = compressionRegistry.get(CompressionType.ZSTD);
  compressionRegistry.set(CompressionType.ZSTD, {
    encode: (buffer) => {
      const frame = frameOf(buffer);
      declared.set(frame, buffer.length);
      return new Uint8Array(frame);
    },
    // the writer only encodes; whatever decodes in this process (the collector's, in a test) stays as it was
    decode: /** @type {any} */ (codec)?.decode ?? null,
  });
  try {
    const writer = new RecordBatchStreamWriter({ compressionType: CompressionType.ZSTD });
    writer.write(tableFromArrays(columns));
    writer.finish();
    const ipc = Buffer.from(writer.toUint8Array(true));
    for (const [frame, length] of declared) for (let at = ipc.indexOf(frame); at >= 8; at = ipc.indexOf(frame, at + 1)) ipc.writeBigInt64LE(BigInt(length), at - 8);
    return ipc;
  } finally {
    compressionRegistry.set(CompressionType.ZSTD, /** @type {any} */ (codec));
  }
}

/** A frame of one raw block: a buffer as it is. @param {Uint8Array} buffer */
export const rawZstd = (buffer) => {
  const head = (buffer.length << 3) | 1;
  return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, buffer.length & 0xff, head & 0xff, (head >> 8) & 0xff, head >> 16]), buffer]);
};
