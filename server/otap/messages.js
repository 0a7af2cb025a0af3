// The OTAP stream messages (package opentelemetry.proto.experimental.arrow.v1), read and written by hand: a batch is
// three fields, and a status three more.
//   BatchArrowRecords { int64 batch_id = 1; repeated ArrowPayload arrow_payloads = 2; bytes headers = 3 }
//   ArrowPayload      { string schema_id = 1; ArrowPayloadType type = 2; bytes record = 3 }
//   BatchStatus       { int64 batch_id = 1; StatusCode status_code = 2; string status_message = 3 }

/** The tables a payload can carry, by ArrowPayloadType number. */
export const PAYLOAD_TYPES = Object.freeze({
  1: 'RESOURCE_ATTRS',
  2: 'SCOPE_ATTRS',
  10: 'UNIVARIATE_METRICS',
  11: 'NUMBER_DATA_POINTS',
  12: 'SUMMARY_DATA_POINTS',
  13: 'HISTOGRAM_DATA_POINTS',
  14: 'EXP_HISTOGRAM_DATA_POINTS',
  15: 'NUMBER_DP_ATTRS',
  16: 'SUMMARY_DP_ATTRS',
  17: 'HISTOGRAM_DP_ATTRS',
  18: 'EXP_HISTOGRAM_DP_ATTRS',
  19: 'NUMBER_DP_EXEMPLARS',
  20: 'HISTOGRAM_DP_EXEMPLARS',
  21: 'EXP_HISTOGRAM_DP_EXEMPLARS',
  22: 'NUMBER_DP_EXEMPLAR_ATTRS',
  23: 'HISTOGRAM_DP_EXEMPLAR_ATTRS',
  24: 'EXP_HISTOGRAM_DP_EXEMPLAR_ATTRS',
  25: 'MULTIVARIATE_METRICS',
  30: 'LOGS',
  31: 'LOG_ATTRS',
  40: 'SPANS',
  41: 'SPAN_ATTRS',
  42: 'SPAN_EVENTS',
  43: 'SPAN_LINKS',
  44: 'SPAN_EVENT_ATTRS',
  45: 'SPAN_LINK_ATTRS',
});

export class MessageError extends Error {}

/**
 * @typedef {{ schemaId: string, type: number, record: Uint8Array }} ArrowPayload
 * @typedef {{ batchId: bigint, payloads: ArrowPayload[], headers: Uint8Array }} BatchArrowRecords
 */

class Cursor {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }

  varint() {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      if (this.at >= this.bytes.length) throw new MessageError('a varint runs past the end of the message');
      const byte = this.bytes[this.at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
      shift += 7n;
      if (shift > 63n) throw new MessageError('a varint is longer than 10 bytes');
    }
  }

  small() {
    const v = this.varint();
    if (v > 0x7fffffffn) throw new MessageError('a length or number is too large');
    return Number(v);
  }

  bytesField() {
    const n = this.small();
    if (this.at + n > this.bytes.length) throw new MessageError('a field runs past the end of the message');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** @param {number} wire */
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytesField();
    else if (wire === 1 || wire === 5) {
      this.at += wire === 1 ? 8 : 4;
      if (this.at > this.bytes.length) throw new MessageError('a field runs past the end of the message');
    } else throw new MessageError(`wire type ${wire} is not one this message uses`);
  }

  /** @param {(field: number, wire: number) => boolean} read answers whether it took the field */
  fields(read) {
    while (this.at < this.bytes.length) {
      const key = this.small();
      const field = key >>> 3;
      const wire = key & 7;
      if (!read(field, wire)) this.skip(wire);
    }
  }
}

const text = new TextDecoder('utf-8', { fatal: true });

/** @param {Uint8Array} bytes @returns {ArrowPayload} */
function payloadOf(bytes) {
  const c = new Cursor(bytes);
  /** @type {ArrowPayload} */
  const payload = { schemaId: '', type: 0, record: new Uint8Array(0) };
  c.fields((field, wire) => {
    if (field === 1 && wire === 2) {
      try {
        payload.schemaId = text.decode(c.bytesField());
      } catch {
        throw new MessageError('schema_id is not valid UTF-8');
      }
    } else if (field === 2 && wire === 0) payload.type = Number(BigInt.asIntN(32, c.varint()));
    else if (field === 3 && wire === 2) payload.record = c.bytesField();
    else return false;
    return true;
  });
  return payload;
}

/** @param {Uint8Array} bytes @returns {BatchArrowRecords} */
export function decodeBatch(bytes) {
  const c = new Cursor(bytes);
  /** @type {BatchArrowRecords} */
  const batch = { batchId: 0n, payloads: [], headers: new Uint8Array(0) };
  c.fields((field, wire) => {
    if (field === 1 && wire === 0) batch.batchId = BigInt.asIntN(64, c.varint());
    else if (field === 2 && wire === 2) batch.payloads.push(payloadOf(c.bytesField()));
    else if (field === 3 && wire === 2) batch.headers = c.bytesField();
    else return false;
    return true;
  });
  return batch;
}

/** @param {number[]} out @param {bigint} v */
function pushVarint(out, v) {
  let u = BigInt.asUintN(64, v);
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
}

/** @param {bigint} batchId @param {number} code @param {string} message @returns {Buffer} */
export function encodeStatus(batchId, code, message) {
  /** @type {number[]} */
  const head = [];
  if (batchId !== 0n) {
    head.push(0x08);
    pushVarint(head, batchId);
  }
  if (code !== 0) {
    head.push(0x10);
    pushVarint(head, BigInt(code));
  }
  const msg = Buffer.from(message, 'utf8');
  if (msg.length) {
    head.push(0x1a);
    pushVarint(head, BigInt(msg.length));
  }
  return Buffer.concat([Buffer.from(head), msg]);
}
