// Writes OTLP protobuf (the Export*ServiceRequest wire) from what the OTAP tables hold, so that OTAP data takes the
// same ingest path as OTLP/gRPC: decoded lazily, budgeted, journaled, faulted and forwarded alike. Fields at their
// proto3 default are left out, as an OTLP exporter leaves them out.
import protobuf from 'protobufjs';

/** @typedef {import('./any-value.js').AnyValue} AnyValue */

const LEN = 2, VARINT = 0, FIXED64 = 1, FIXED32 = 5;

/**
 * protobufjs takes 64-bit values as anything with `low` and `high` halves.
 * @param {bigint} v @returns {any}
 */
function bits(v) {
  const u = BigInt.asUintN(64, v);
  return { low: Number(u & 0xffffffffn) | 0, high: Number(u >> 32n) | 0 };
}

export class OtlpWriter {
  constructor() {
    this.w = protobuf.Writer.create();
  }

  /** @param {number} field */
  begin(field) {
    this.w.uint32((field << 3) | LEN).fork();
  }

  end() {
    this.w.ldelim();
  }

  /** @param {number} field @param {string} v */
  string(field, v) {
    if (v) this.w.uint32((field << 3) | LEN).string(v);
  }

  /**
   * A trace or span id: the producer writes an absent id as zeros, which OTLP leaves out.
   * @param {number} field @param {Uint8Array|null} v
   */
  id(field, v) {
    if (!v) return;
    for (let i = 0; i < v.length; i++) {
      if (v[i] !== 0) {
        this.w.uint32((field << 3) | LEN).bytes(v);
        return;
      }
    }
  }

  /** @param {number} field @param {number} v unsigned 32-bit or an enum */
  uint(field, v) {
    if (v) this.w.uint32((field << 3) | VARINT).int32(v);
  }

  /** @param {number} field @param {number} v */
  sint32(field, v) {
    if (v) this.w.uint32((field << 3) | VARINT).sint32(v);
  }

  /** @param {number} field @param {bigint} v int64 or uint64, as a varint */
  int64(field, v) {
    if (v) this.w.uint32((field << 3) | VARINT).uint64(bits(v));
  }

  /** @param {number} field @param {bigint} v */
  fixed64(field, v) {
    if (v) this.w.uint32((field << 3) | FIXED64).fixed64(bits(v));
  }

  /** A signed 64-bit value in a oneof: written even when zero. @param {number} field @param {bigint} v */
  sfixed64Always(field, v) {
    this.w.uint32((field << 3) | FIXED64).sfixed64(bits(v));
  }

  /** @param {number} field @param {number} v */
  fixed32(field, v) {
    if (v) this.w.uint32((field << 3) | FIXED32).fixed32(v);
  }

  /** @param {number} field @param {number} v */
  double(field, v) {
    if (v !== 0 || Object.is(v, -0)) this.w.uint32((field << 3) | FIXED64).double(v);
  }

  /** A double that is written even when zero (proto3 `optional`, or inside a oneof). @param {number} field @param {number} v */
  doubleAlways(field, v) {
    this.w.uint32((field << 3) | FIXED64).double(v);
  }

  /** @param {number} field @param {boolean} v */
  bool(field, v) {
    if (v) this.w.uint32((field << 3) | VARINT).bool(true);
  }

  /** @param {number} field @param {bigint[]|number[]} values packed fixed64 */
  packedFixed64(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.w.fixed64(bits(BigInt(v)));
    this.end();
  }

  /** @param {number} field @param {bigint[]} values packed uint64 varints */
  packedUint64(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.w.uint64(bits(v));
    this.end();
  }

  /** @param {number} field @param {number[]} values packed doubles */
  packedDouble(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.w.double(v);
    this.end();
  }

  /** KeyValue list under `field`. @param {number} field @param {[string, AnyValue][]|undefined} attributes */
  attributes(field, attributes) {
    if (!attributes) return;
    for (const [key, value] of attributes) {
      this.begin(field);
      this.string(1, key);
      this.anyValue(2, value);
      this.end();
    }
  }

  /** @param {number} field @param {AnyValue} value */
  anyValue(field, value) {
    const w = this.w;
    this.begin(field);
    switch (value.t) {
      case 'str':
        w.uint32((1 << 3) | LEN).string(value.v);
        break;
      case 'bool':
        w.uint32((2 << 3) | VARINT).bool(value.v);
        break;
      case 'int':
        w.uint32((3 << 3) | VARINT).uint64(bits(value.v));
        break;
      case 'double':
        w.uint32((4 << 3) | FIXED64).double(value.v);
        break;
      case 'array':
        this.begin(5);
        for (const v of value.v) this.anyValue(1, v);
        this.end();
        break;
      case 'kvlist':
        this.begin(6);
        this.attributes(1, value.v);
        this.end();
        break;
      case 'bytes':
        w.uint32((7 << 3) | LEN).bytes(value.v);
        break;
      default:
        break;
    }
    this.end();
  }

  /** @returns {Buffer} */
  finish() {
    return Buffer.from(this.w.finish());
  }
}
