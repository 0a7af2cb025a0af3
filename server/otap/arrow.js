// A stream's Arrow state: one IPC stream per schema_id, read a payload at a time. A producer sends a schema once,
// then dictionary batches (deltas add to a dictionary) and record batches in later payloads of the same schema_id,
// so each schema_id keeps its reader across batches. A new schema_id for a payload type replaces the old one.
import { RecordBatchReader, Message, MessageHeader, compressionRegistry, CompressionType, Type } from 'apache-arrow';
import { decompress as zstd } from 'fzstd';
import { compacted } from './columns.js';

/** A declared size past this is not trusted for an allocation: fzstd then grows its output as the data comes. */
const MAX_BUFFER = 64 * 1024 * 1024;

/**
 * Arrow IPC compresses each buffer on its own, after an int64 of its uncompressed length, and apache-arrow hands the
 * codec the bytes just after that length (reader.mjs `_decompressBuffers`; apache-arrow is pinned). Given the length,
 * fzstd writes into one 8-byte aligned array of that size: the producer's frames declare no content size, so fzstd
 * would otherwise allocate its window, a chunk per block and their concatenation, and an unaligned result be copied
 * again; a metrics batch has hundreds of such buffers, most of a few bytes.
 * @param {Uint8Array} frame @returns {number|null}
 */
function declaredLength(frame) {
  if (frame.byteOffset < 8) return null;
  const length = Number(new DataView(frame.buffer, frame.byteOffset - 8, 8).getBigInt64(0, true));
  return length >= 0 && length <= MAX_BUFFER ? length : null;
}

compressionRegistry.set(CompressionType.ZSTD, {
  encode: /** @type {any} */ (null),
  decode: (bytes) => {
    const length = declaredLength(bytes);
    if (length !== null) {
      const out = zstd(bytes, new Uint8Array(length));
      if (out.length === length) return out;
    }
    const out = zstd(bytes);
    return out.byteOffset % 8 === 0 ? out : out.slice();
  },
});

/**
 * The IPC messages of one payload, read straight from its bytes: what apache-arrow's stream reader asks of its
 * message source (`readMessage`, `readMessageBody`, `readSchema`), without the byte-stream and iterator layers
 * its own MessageReader puts between them, which cost a metrics batch (fifteen payloads) more than reading them.
 */
class PayloadMessages {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  /** The next message, or null at the end (or at an end-of-stream marker). @param {number|null} [type] */
  readMessage(type) {
    if (this.at + 4 > this.bytes.length) return null;
    let length = this.view.getInt32(this.at, true);
    this.at += 4;
    // A continuation marker (-1) comes before the metadata length since Arrow 0.15.
    if (length === -1) {
      if (this.at + 4 > this.bytes.length) return null;
      length = this.view.getInt32(this.at, true);
      this.at += 4;
    }
    if (length <= 0) return null;
    if (this.at + length > this.bytes.length) throw new Error(`Expected to read ${length} metadata bytes, but only ${this.bytes.length - this.at} remain`);
    const message = Message.decode(this.bytes.subarray(this.at, this.at + length));
    this.at += length;
    if (type != null && message.headerType !== type) throw new Error(`Expected ${MessageHeader[type]} Message in stream`);
    return message;
  }

  /** @param {number} length */
  readMessageBody(length) {
    if (length <= 0) return new Uint8Array(0);
    if (this.at + length > this.bytes.length) throw new Error(`Expected to read ${length} bytes for message body, but only ${this.bytes.length - this.at} remain`);
    const body = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return body;
  }

  readSchema() {
    return this.readMessage(MessageHeader.Schema)?.header();
  }

  return() {
    return { done: true, value: null };
  }

  throw() {
    return { done: true, value: null };
  }
}

export class ArrowError extends Error {}

/** Delta chunks a dictionary may gather before it is made one chunk again; and the types that can be. */
const MAX_CHUNKS = 32;
const COMPACTABLE = new Set([Type.Utf8, Type.Binary, Type.FixedSizeBinary]);

/**
 * apache-arrow's stream reader keeps the schema and dictionaries and reads messages from one source; the next
 * payload of the same schema_id is the continuation of that IPC stream, so it becomes the reader's source.
 * `_impl._reader` is the only internal touched (apache-arrow is pinned in package.json).
 */
class IpcStream {
  /** @param {number} type @param {Uint8Array} first */
  constructor(type, first) {
    this.type = type;
    this.reader = RecordBatchReader.from(first);
    this.reader.open({ autoDestroy: false });
    if (!this.reader.schema) throw new ArrowError('the first record of a schema_id has no Arrow schema');
    this.first = true;
  }

  /** @param {Uint8Array} bytes */
  next(bytes) {
    if (!this.first) /** @type {any} */ (this.reader)._impl._reader = new PayloadMessages(bytes);
    this.first = false;
    const { done, value } = this.reader.next();
    if (done || !value) throw new ArrowError('the record holds no record batch');
    const dictionaries = /** @type {any} */ (this.reader)._impl.dictionaries;
    for (const [id, dictionary] of dictionaries) {
      if (dictionary.data.length <= MAX_CHUNKS || !COMPACTABLE.has(dictionary.type.typeId)) continue;
      const one = compacted(dictionary);
      if (one) dictionaries.set(id, one);
    }
    return value;
  }

  dictionaryValues() {
    let n = 0;
    for (const dict of /** @type {any} */ (this.reader)._impl.dictionaries.values()) n += dict.length;
    return n;
  }
}

export class ArrowState {
  /** @param {{ maxDictionaryValues: number }} limits */
  constructor(limits) {
    /** @type {Map<string, IpcStream>} */
    this.streams = new Map();
    this.limits = limits;
  }

  /**
   * The record batch of one payload.
   * @param {import('./messages.js').ArrowPayload} payload
   * @returns {import('apache-arrow').RecordBatch}
   */
  read(payload) {
    // A copy of its own: Arrow's typed arrays need their buffers aligned, and the record sits anywhere in the message.
    const record = new Uint8Array(payload.record);
    let stream = this.streams.get(payload.schemaId);
    let batch;
    try {
      if (!stream) {
        for (const [id, other] of this.streams) if (other.type === payload.type) this.streams.delete(id);
        stream = new IpcStream(payload.type, record);
        this.streams.set(payload.schemaId, stream);
      }
      batch = stream.next(record);
    } catch (err) {
      // A broken IPC stream cannot go on: the producer starts the schema_id over once it hears of the error.
      this.streams.delete(payload.schemaId);
      if (err instanceof ArrowError) throw err;
      throw new ArrowError(`schema_id ${JSON.stringify(payload.schemaId)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (stream.dictionaryValues() > this.limits.maxDictionaryValues) {
      this.streams.delete(payload.schemaId);
      throw new ArrowError(`schema_id ${JSON.stringify(payload.schemaId)} has dictionaries of more than ${this.limits.maxDictionaryValues} values`);
    }
    return batch;
  }
}
