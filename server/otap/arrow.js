// A stream's Arrow state: one IPC stream per schema_id, read a payload at a time. A producer sends a schema once,
// then dictionary batches (deltas add to a dictionary) and record batches in later payloads of the same schema_id,
// so each schema_id keeps its reader across batches. A new schema_id for a payload type replaces the old one.
import { RecordBatchReader, Message, MessageHeader, Vector, compressionRegistry, CompressionType, Type } from 'apache-arrow';
import { status as CODE } from '@grpc/grpc-js';
import { compacted } from './columns.js';
import { decodeZstd, declaredLength, placed } from './zstd.js';
import { DecompressError } from '../transport/codec-error.js';
import { ClientGone, NoRoom, Slicer } from '../transport/slices.js';
import { zstdOfLength } from '../transport/zstd.js';
import { decodedInSlices } from '../transport/decompress.js';

/** @type {Map<number, Uint8Array>} */
const NOTHING_AHEAD = new Map();
/** While a payload is read: its frames decoded ahead, by where each starts in its bytes. */
let decodedAhead = NOTHING_AHEAD;

compressionRegistry.set(CompressionType.ZSTD, {
  encode: /** @type {any} */ (null),
  decode: (bytes) => {
    const out = decodedAhead.get(bytes.byteOffset);
    if (!out) throw new ArrowError('a zstd buffer was not read ahead of its record');
    return out;
  },
});

export class ArrowError extends Error {
  /**
   * @param {string} message @param {number} [code] the batch's status: INVALID_ARGUMENT but for a limit or a busy server
   * @param {boolean} [paced] a refusal of its compressed buffers, answered at the pace of refused compressed bodies
   */
  constructor(message, code = CODE.INVALID_ARGUMENT, paced = false) {
    super(message);
    this.code = code;
    this.paced = paced;
  }
}

/**
 * How far one batch's compressed Arrow buffers may expand: together, to what they declare up to `limit`
 * (--max-request-bytes, as a request body); each, to its own declared length. A zstd frame of a few kilobytes can
 * declare a few bytes and hold gigabytes: decoded at once, one 80 KB message held the event loop 18 s and left the
 * process 5 GB larger.
 */
export class Inflation {
  /**
   * @param {number} limit @param {() => boolean} gone whether the batch's client left
   * @param {import('../transport/slices.js').Room} [room] the in-flight budget that decoded bytes are taken from
   * @param {boolean} [inSlices] whether the batch's small frames are decoded in slices that take turns (a large batch)
   */
  constructor(limit, gone, room, inSlices = false) {
    this.limit = limit;
    this.left = limit;
    this.gone = gone;
    this.room = room;
    this.inSlices = inSlices;
    /** the slices of the batch's work otherwise done at once: its small frames, the request written from its tables */
    this.slicer = new Slicer(gone);
  }

  /**
   * Waits for the batch's next turn once its slice is spent. Each small frame, or each few rows written, is quick,
   * but a large batch has many: the frames of a batch of 50,000 log records, decoded one after another, held the
   * event loop 45 ms. A small batch does not wait: sliced work waits its share while others' telemetry arrives.
   */
  async turn() {
    if (!this.slicer.due()) return;
    try {
      await this.slicer.pause();
    } catch (err) {
      if (err instanceof ClientGone) throw new ArrowError(err.message);
      throw err;
    }
  }

  /** @param {number} declared a buffer's uncompressed length */
  declare(declared) {
    if (!Number.isSafeInteger(declared) || declared < 0)
      throw new ArrowError(`an Arrow buffer declares ${declared} bytes once decompressed`, CODE.INVALID_ARGUMENT, true);
    if (declared > this.left) {
      throw new ArrowError(
        `the batch's compressed Arrow buffers declare more than the limit of ${this.limit} bytes once decompressed (--max-request-bytes)`,
        CODE.RESOURCE_EXHAUSTED,
        true,
      );
    }
    this.left -= declared;
  }

  /**
   * A frame decoded in slices, refused as soon as it passes its declared length; its windows are judged against the
   * batch's limit, since a small buffer's frame may ask for a larger window than it holds.
   * @param {Uint8Array} frame @param {number} declared @returns {Promise<Buffer>}
   */
  async frame(frame, declared) {
    const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.length);
    try {
      return await decodedInSlices((slicer) => zstdOfLength(bytes, declared, this.limit, slicer), this.gone, this.room);
    } catch (err) {
      if (err instanceof NoRoom) throw new ArrowError(err.message, CODE.UNAVAILABLE);
      if (err instanceof ClientGone) throw new ArrowError(err.message);
      if (!(err instanceof DecompressError)) {
        throw new ArrowError(`a zstd buffer is not valid zstd data: ${err instanceof Error ? err.message : String(err)}`, CODE.INVALID_ARGUMENT, true);
      }
      if (err.pastLimit) throw new ArrowError(`a zstd buffer decodes to more than the ${declared} bytes it declares`, CODE.RESOURCE_EXHAUSTED, true);
      throw new ArrowError(`a zstd buffer declared as ${declared} bytes: ${err.message}`, err.tooLarge ? CODE.RESOURCE_EXHAUSTED : CODE.INVALID_ARGUMENT, true);
    }
  }
}

/** Delta chunks a dictionary may gather before it is made one chunk again; and the types that can be. */
const MAX_CHUNKS = 32;
const COMPACTABLE = new Set([Type.Utf8, Type.Binary, Type.FixedSizeBinary]);

/**
 * The IPC messages of one payload, read straight from its bytes, ahead of apache-arrow's stream reader, and handed to
 * it as it asks (`readMessage`, `readMessageBody`, `readSchema`): without the byte-stream and iterator layers its own
 * MessageReader puts between them, which cost more than the reading for a metrics batch's fifteen payloads; and ahead,
 * so that compressed buffers are decoded in slices before the reader, which is synchronous, asks for them.
 */
class PayloadMessages {
  /** @param {{ message: Message, body: Uint8Array }[]} messages @param {Map<number, Uint8Array>} frames */
  constructor(messages, frames) {
    this.messages = messages;
    /** the frames decoded ahead, by where each starts in the payload's bytes */
    this.frames = frames;
    this.next = 0;
    /** @type {Uint8Array} */
    this.body = new Uint8Array(0);
  }

  /** @param {Uint8Array} bytes @param {Inflation} inflation */
  static async read(bytes, inflation) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const messages = [];
    const frames = new Map();
    let at = 0;
    while (at + 4 <= bytes.length) {
      let length = view.getInt32(at, true);
      at += 4;
      // A continuation marker (-1) comes before the metadata length since Arrow 0.15.
      if (length === -1) {
        if (at + 4 > bytes.length) break;
        length = view.getInt32(at, true);
        at += 4;
      }
      // an end-of-stream marker
      if (length <= 0) break;
      if (at + length > bytes.length) throw new ArrowError(`an Arrow message's metadata of ${length} bytes runs past the record's end`);
      const message = Message.decode(bytes.subarray(at, at + length));
      at += length;
      const bodyLength = Math.max(0, message.bodyLength);
      if (at + bodyLength > bytes.length) throw new ArrowError(`an Arrow message's body of ${bodyLength} bytes runs past the record's end`);
      const body = bytes.subarray(at, at + bodyLength);
      at += bodyLength;
      messages.push({ message, body });
      await decodeAhead(message, body, inflation, frames);
    }
    return new PayloadMessages(messages, frames);
  }

  /** The next message, or null at the end or at an end-of-stream marker. @param {number|null} [type] */
  readMessage(type) {
    const read = this.messages[this.next];
    if (!read) return null;
    this.next++;
    if (type != null && read.message.headerType !== type) throw new ArrowError(`expected an Arrow ${MessageHeader[type]} message`);
    this.body = read.body;
    return read.message;
  }

  /** The body of the message read last. */
  readMessageBody() {
    return this.body;
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
 * Decodes a message's zstd buffers, each counted against the batch's inflation: at once where its frame is small
 * enough (zstd.js), otherwise in slices.
 * @param {Message} message @param {Uint8Array} body @param {Inflation} inflation @param {Map<number, Uint8Array>} frames
 */
async function decodeAhead(message, body, inflation, frames) {
  const dictionary = message.headerType === MessageHeader.DictionaryBatch;
  const header = /** @type {any} */ (message.header());
  const data = dictionary ? header.data : message.headerType === MessageHeader.RecordBatch ? header : null;
  if (data?.compression?.type !== CompressionType.ZSTD) return;
  for (const { offset, length } of data.buffers) {
    if (length === 0) continue;
    if (offset < 0 || length < 8 || offset + length > body.length) {
      throw new ArrowError(`an Arrow buffer of ${length} bytes at ${offset} lies outside its message's body of ${body.length} bytes`);
    }
    const frame = body.subarray(offset + 8, offset + length);
    const declared = /** @type {number} */ (declaredLength(frame));
    // LENGTH_NO_COMPRESSED_DATA: the buffer is stored as it is
    if (declared === -1) continue;
    inflation.declare(declared);
    if (inflation.inSlices) await inflation.turn();
    const shared = !dictionary;
    frames.set(frame.byteOffset, decodeZstd(frame, declared, shared) ?? placed(await inflation.frame(frame, declared), declared, shared));
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
  /** @param {number} type @param {Uint8Array} first its bytes @param {PayloadMessages} messages its messages */
  constructor(type, first, messages) {
    this.type = type;
    this.reader = RecordBatchReader.from(first);
    const impl = /** @type {any} */ (this.reader)._impl;
    impl._reader = messages;
    impl._loadDictionaryBatch = loadDictionaryBatch;
    this.reader.open({ autoDestroy: false });
    if (!this.reader.schema) throw new ArrowError('the first record of a schema_id has no Arrow schema');
    this.first = true;
  }

  /** @param {PayloadMessages} messages */
  next(messages) {
    if (!this.first) /** @type {any} */ (this.reader)._impl._reader = messages;
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
    // the property's name is apache-arrow's, spelling included
    const inflated = this._decompressBuffers(header.data, body, codec).decommpressedBody;
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
   * @param {import('./messages.js').ArrowPayload} payload @param {Inflation} inflation its batch's
   * @returns {Promise<import('apache-arrow').RecordBatch>}
   */
  async read(payload, inflation) {
    // A copy of its own: Arrow's typed arrays need their buffers aligned, and the record sits anywhere in the message.
    const record = new Uint8Array(payload.record);
    let stream;
    let batch;
    try {
      const messages = await PayloadMessages.read(record, inflation);
      stream = this.streams.get(payload.schemaId);
      decodedAhead = messages.frames;
      try {
        if (!stream) {
          for (const [id, other] of this.streams) if (other.type === payload.type) this.streams.delete(id);
          stream = new IpcStream(payload.type, record, messages);
          this.streams.set(payload.schemaId, stream);
        }
        batch = stream.next(messages);
      } finally {
        decodedAhead = NOTHING_AHEAD;
      }
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
