// A stream's Arrow state: one IPC stream per schema_id, read a payload at a time. A producer sends a schema once,
// then dictionary batches (deltas add to a dictionary) and record batches in later payloads of the same schema_id,
// so each schema_id keeps its reader across batches. A new schema_id for a payload type replaces the old one.
import { RecordBatchReader, Message, MessageHeader, Vector, compressionRegistry, CompressionType, Type } from 'apache-arrow';
import { compacted } from './columns.js';
import { decodeZstd, declaredLength } from './zstd.js';

/** Set while a dictionary batch is read: its buffers outlive the batch (zstd.js). */
let readingDictionary = false;

compressionRegistry.set(CompressionType.ZSTD, {
  encode: /** @type {any} */ (null),
  decode: (bytes) => decodeZstd(bytes, declaredLength(bytes), !readingDictionary),
});

export class ArrowError extends Error {}

/** Delta chunks a dictionary may gather before it is made one chunk again; and the types that can be. */
const MAX_CHUNKS = 32;
const COMPACTABLE = new Set([Type.Utf8, Type.Binary, Type.FixedSizeBinary]);

/**
 * The IPC messages of one payload, read straight from its bytes: what apache-arrow's stream reader asks of its
 * message source (`readMessage`, `readMessageBody`, `readSchema`), without the byte-stream and iterator layers its
 * own MessageReader puts between them, which cost more than the reading for a metrics batch's fifteen payloads.
 */
class PayloadMessages {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  /** The next message, or null at the end or at an end-of-stream marker. @param {number|null} [type] */
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
    if (this.at + length > this.bytes.length) throw new ArrowError(`an Arrow message's metadata of ${length} bytes runs past the record's end`);
    const message = Message.decode(this.bytes.subarray(this.at, this.at + length));
    this.at += length;
    if (type != null && message.headerType !== type) throw new ArrowError(`expected an Arrow ${MessageHeader[type]} message`);
    return message;
  }

  /** @param {number} length */
  readMessageBody(length) {
    if (length <= 0) return new Uint8Array(0);
    if (this.at + length > this.bytes.length) throw new ArrowError(`an Arrow message's body of ${length} bytes runs past the record's end`);
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

/**
 * apache-arrow's stream reader (its `_impl`) keeps the schema and dictionaries and reads messages from one source;
 * the next payload of the same schema_id is the continuation of that IPC stream, so it becomes the reader's source.
 * Two internals are touched, which is why apache-arrow is pinned in package.json: `_impl._reader`, the source, and
 * `_impl._loadDictionaryBatch`, whose own version wraps each dictionary, after every delta, in a memo the size of
 * the whole dictionary that nothing here reads (columns.js keeps decoded dictionary values of its own).
 */
class IpcStream {
  /** @param {number} type @param {Uint8Array} first */
  constructor(type, first) {
    this.type = type;
    this.reader = RecordBatchReader.from(first);
    const impl = /** @type {any} */ (this.reader)._impl;
    impl._reader = new PayloadMessages(first);
    impl._loadDictionaryBatch = loadDictionaryBatch;
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

/**
 * apache-arrow's `_loadDictionaryBatch` (ipc/reader.mjs), less the memo: a delta's chunk is added to the
 * dictionary's chunks.
 * @this {any} the reader's `_impl` @param {any} header @param {Uint8Array} body
 */
function loadDictionaryBatch(header, body) {
  const { id, isDelta } = header;
  const type = this.schema.dictionaries.get(id);
  let data;
  if (header.data.compression != null) {
    const codec = compressionRegistry.get(header.data.compression.type);
    if (!codec?.decode) throw new ArrowError('a dictionary batch is compressed with a codec this reader lacks');
    readingDictionary = true;
    let inflated;
    try {
      // the property's name is apache-arrow's, spelling included
      inflated = this._decompressBuffers(header.data, body, codec).decommpressedBody;
    } finally {
      readingDictionary = false;
    }
    data = this._loadCompressedVectors(header.data, inflated, [type]);
  } else {
    data = this._loadVectors(header.data, body, [type]);
  }
  const dictionary = this.dictionaries.get(id);
  return dictionary && isDelta ? dictionary.concat(new Vector(data)) : new Vector(data);
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
