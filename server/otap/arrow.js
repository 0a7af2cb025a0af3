// A stream's Arrow state: one IPC stream per schema_id, read a payload at a time. A producer sends a schema once,
// then dictionary batches (deltas add to a dictionary) and record batches in later payloads of the same schema_id,
// so each schema_id keeps its reader across batches. A new schema_id for a payload type replaces the old one.
import { RecordBatchReader, MessageReader, compressionRegistry, CompressionType, Type } from 'apache-arrow';
import { decompress as zstd } from 'fzstd';
import { compacted } from './columns.js';

/** Arrow's typed arrays need 8-byte aligned buffers, and fzstd's output may start anywhere in its own. */
compressionRegistry.set(CompressionType.ZSTD, {
  encode: /** @type {any} */ (null),
  decode: (bytes) => {
    const out = zstd(bytes);
    return out.byteOffset % 8 === 0 ? out : out.slice();
  },
});

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
    if (!this.first) /** @type {any} */ (this.reader)._impl._reader = new MessageReader(bytes);
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
