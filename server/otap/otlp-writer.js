// Writes OTLP protobuf (the Export*ServiceRequest wire) from what the OTAP tables hold, so that OTAP data takes the
// same ingest path as OTLP/gRPC: decoded lazily, budgeted, journaled, faulted and forwarded alike. Fields at their
// proto3 default are left out, as an OTLP exporter leaves them out.
/** @typedef {import('./any-value.js').AnyValue} AnyValue */

const LEN = 2,
  VARINT = 0,
  FIXED64 = 1,
  FIXED32 = 5;

/**
 * The buffer writers write into, shared: a request is written from the constructor to `finish` in one synchronous
 * call, and `finish` copies it out, so one buffer (grown to the largest request yet) serves every batch.
 */
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/** The request a batch makes would pass its limit. */
export class WriterFull extends Error {}

/**
 * Written into one growing buffer: a nested message reserves one byte for its length and, when the length needs
 * more, its bytes move up (protobufjs' writer allocated an object per field, and the collector spent more time
 * collecting them than writing).
 */
export class OtlpWriter {
  /**
   * @param {number} [max] the most bytes the request may take: a batch's rows can name one dictionary value, or an
   *   empty row, any number of times, so a message of a few kilobytes could otherwise write gigabytes
   */
  constructor(max = Infinity) {
    this.max = max;
    this.buf = scratch;
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.pos = 0;
    /** @type {number[]} where each open message's length byte is */
    this.open = [];
  }

  /** @param {number} n bytes about to be written */
  room(n) {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos + n > this.max) throw new WriterFull(`the batch's OTLP form passes the limit of ${this.max} bytes`);
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
    scratch = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  /** @param {number} v an unsigned 32-bit value */
  varint(v) {
    this.room(5);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** @param {bigint} v 64 bits, as a varint */
  varint64(v) {
    this.room(10);
    let u = BigInt.asUintN(64, v);
    while (u > 0x7fn) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  /** @param {number} field @param {number} wire */
  tag(field, wire) {
    this.varint(((field << 3) | wire) >>> 0);
  }

  /** @param {number} field */
  begin(field) {
    this.tag(field, LEN);
    this.room(1);
    this.open.push(this.pos++);
  }

  end() {
    const at = /** @type {number} */ (this.open.pop());
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buf[at] = length;
      return;
    }
    let extra = 0;
    for (let n = length >>> 7; n > 0; n >>>= 7) extra++;
    this.room(extra);
    this.buf.copy(this.buf, at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let v = length;
    let i = at;
    while (v > 0x7f) {
      this.buf[i++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[i] = v;
  }

  /** @param {Uint8Array} v */
  raw(v) {
    this.varint(v.length);
    this.room(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** @param {string} v */
  text(v) {
    // Names, keys and most values are short ASCII: written a char at a byte, without two calls into C++.
    if (v.length < 0x80) {
      this.room(v.length + 1);
      const buf = this.buf;
      const at = this.pos + 1;
      let i = 0;
      while (i < v.length) {
        const c = v.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at + i++] = c;
      }
      if (i === v.length) {
        buf[this.pos] = i;
        this.pos = at + i;
        return;
      }
    }
    const n = Buffer.byteLength(v);
    this.varint(n);
    this.room(n);
    this.pos += this.buf.write(v, this.pos, n, 'utf8');
  }

  /** @param {bigint} v */
  eight(v) {
    this.room(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, v), true);
    this.pos += 8;
  }

  /** @param {number} v */
  float(v) {
    this.room(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** @param {number} field @param {string} v */
  string(field, v) {
    if (!v) return;
    this.tag(field, LEN);
    this.text(v);
  }

  /**
   * A trace or span id: the producer writes an absent id as zeros, which OTLP leaves out.
   * @param {number} field @param {Uint8Array|null} v
   */
  id(field, v) {
    if (!v) return;
    for (let i = 0; i < v.length; i++) {
      if (v[i] !== 0) {
        this.tag(field, LEN);
        this.raw(v);
        return;
      }
    }
  }

  /** @param {number} field @param {number} v an enum or an unsigned 32-bit value (a negative enum as int32 is) */
  uint(field, v) {
    if (!v) return;
    this.tag(field, VARINT);
    if (v > 0) this.varint(v >>> 0);
    else this.varint64(BigInt(v));
  }

  /** @param {number} field @param {number} v */
  sint32(field, v) {
    if (!v) return;
    this.tag(field, VARINT);
    this.varint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** @param {number} field @param {bigint} v */
  fixed64(field, v) {
    if (!v) return;
    this.tag(field, FIXED64);
    this.eight(v);
  }

  /** A signed 64-bit value in a oneof: written even when zero. @param {number} field @param {bigint} v */
  sfixed64Always(field, v) {
    this.tag(field, FIXED64);
    this.eight(v);
  }

  /** @param {number} field @param {number} v */
  fixed32(field, v) {
    if (!v) return;
    this.tag(field, FIXED32);
    this.room(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  /** @param {number} field @param {number} v */
  double(field, v) {
    if (v !== 0 || Object.is(v, -0)) this.doubleAlways(field, v);
  }

  /** A double that is written even when zero (proto3 `optional`, or inside a oneof). @param {number} field @param {number} v */
  doubleAlways(field, v) {
    this.tag(field, FIXED64);
    this.float(v);
  }

  /** @param {number} field @param {boolean} v */
  bool(field, v) {
    if (!v) return;
    this.tag(field, VARINT);
    this.varint(1);
  }

  /** @param {number} field @param {bigint[]|number[]} values packed fixed64 */
  packedFixed64(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.eight(BigInt(v));
    this.end();
  }

  /** @param {number} field @param {bigint[]} values packed uint64 varints */
  packedUint64(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.varint64(v);
    this.end();
  }

  /** @param {number} field @param {number[]} values packed doubles */
  packedDouble(field, values) {
    if (!values.length) return;
    this.begin(field);
    for (const v of values) this.float(v);
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

  /** An AnyValue: its one field is written even when it holds a default. @param {number} field @param {AnyValue} value */
  anyValue(field, value) {
    this.begin(field);
    switch (value.t) {
      case 'str':
        this.tag(1, LEN);
        this.text(value.v);
        break;
      case 'bool':
        this.tag(2, VARINT);
        this.varint(value.v ? 1 : 0);
        break;
      case 'int':
        this.tag(3, VARINT);
        this.varint64(value.v);
        break;
      case 'double':
        this.doubleAlways(4, value.v);
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
        this.tag(7, LEN);
        this.raw(value.v);
        break;
      default:
        break;
    }
    this.end();
  }

  /** The request, in a buffer of its own at its size (the store keeps it). @returns {Buffer} */
  finish() {
    const out = Buffer.allocUnsafeSlow(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }
}
