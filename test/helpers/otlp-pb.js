// A small protobuf writer for OTLP requests written in OTLP/JSON shape, independent of the server's
// schema and decoders, so the conformance suites can send one payload in both encodings and compare.
// It covers the fields the suites use; field numbers follow the OTLP specification.

/**
 * @typedef {'string'|'hexId'|'base64'|'fixed64'|'fixed32'|'varint'|'int64'|'sfixed64'|'double'|'bool'} Scalar
 * @typedef {[number, Scalar|Spec, boolean?]} FieldSpec  field number, type, repeated
 * @typedef {{ [field: string]: FieldSpec }} Spec
 */

/** @type {Spec} */ const AnyValue = {};
/** @type {Spec} */ const KeyValue = { key: [1, 'string'], value: [2, AnyValue] };
/** @type {Spec} */ const ArrayValue = { values: [1, AnyValue, true] };
/** @type {Spec} */ const KeyValueList = { values: [1, KeyValue, true] };
Object.assign(AnyValue, {
  stringValue: [1, 'string'],
  boolValue: [2, 'bool'],
  intValue: [3, 'int64'],
  doubleValue: [4, 'double'],
  arrayValue: [5, ArrayValue],
  kvlistValue: [6, KeyValueList],
  bytesValue: [7, 'base64'],
});
/** @param {number} n @returns {FieldSpec} */ const attrs = (n) => [n, KeyValue, true];

/** @type {Spec} */ const Resource = { attributes: attrs(1), droppedAttributesCount: [2, 'varint'] };
/** @type {Spec} */ const Scope = { name: [1, 'string'], version: [2, 'string'], attributes: attrs(3), droppedAttributesCount: [4, 'varint'] };

/** @type {Spec} */ const Status = { message: [2, 'string'], code: [3, 'varint'] };
/** @type {Spec} */ const SpanEvent = { timeUnixNano: [1, 'fixed64'], name: [2, 'string'], attributes: attrs(3), droppedAttributesCount: [4, 'varint'] };
/** @type {Spec} */ const SpanLink = {
  traceId: [1, 'hexId'],
  spanId: [2, 'hexId'],
  traceState: [3, 'string'],
  attributes: attrs(4),
  droppedAttributesCount: [5, 'varint'],
  flags: [6, 'fixed32'],
};
/** @type {Spec} */ const Span = {
  traceId: [1, 'hexId'],
  spanId: [2, 'hexId'],
  traceState: [3, 'string'],
  parentSpanId: [4, 'hexId'],
  flags: [16, 'fixed32'],
  name: [5, 'string'],
  kind: [6, 'varint'],
  startTimeUnixNano: [7, 'fixed64'],
  endTimeUnixNano: [8, 'fixed64'],
  attributes: attrs(9),
  droppedAttributesCount: [10, 'varint'],
  events: [11, SpanEvent, true],
  droppedEventsCount: [12, 'varint'],
  links: [13, SpanLink, true],
  droppedLinksCount: [14, 'varint'],
  status: [15, Status],
};
/** @type {Spec} */ const ScopeSpans = { scope: [1, Scope], spans: [2, Span, true], schemaUrl: [3, 'string'] };
/** @type {Spec} */ const ResourceSpans = { resource: [1, Resource], scopeSpans: [2, ScopeSpans, true], schemaUrl: [3, 'string'] };

/** @type {Spec} */ const LogRecord = {
  timeUnixNano: [1, 'fixed64'],
  observedTimeUnixNano: [11, 'fixed64'],
  severityNumber: [2, 'varint'],
  severityText: [3, 'string'],
  body: [5, AnyValue],
  attributes: attrs(6),
  droppedAttributesCount: [7, 'varint'],
  flags: [8, 'fixed32'],
  traceId: [9, 'hexId'],
  spanId: [10, 'hexId'],
  eventName: [12, 'string'],
};
/** @type {Spec} */ const ScopeLogs = { scope: [1, Scope], logRecords: [2, LogRecord, true], schemaUrl: [3, 'string'] };
/** @type {Spec} */ const ResourceLogs = { resource: [1, Resource], scopeLogs: [2, ScopeLogs, true], schemaUrl: [3, 'string'] };

/** @type {Spec} */ const NumberDataPoint = {
  attributes: attrs(7),
  startTimeUnixNano: [2, 'fixed64'],
  timeUnixNano: [3, 'fixed64'],
  asDouble: [4, 'double'],
  asInt: [6, 'sfixed64'],
  flags: [8, 'varint'],
};
/** @type {Spec} */ const HistogramDataPoint = {
  attributes: attrs(9),
  startTimeUnixNano: [2, 'fixed64'],
  timeUnixNano: [3, 'fixed64'],
  count: [4, 'fixed64'],
  sum: [5, 'double'],
  bucketCounts: [6, 'fixed64', true],
  explicitBounds: [7, 'double', true],
  flags: [10, 'varint'],
  min: [11, 'double'],
  max: [12, 'double'],
};
/** @type {Spec} */ const Gauge = { dataPoints: [1, NumberDataPoint, true] };
/** @type {Spec} */ const Sum = { dataPoints: [1, NumberDataPoint, true], aggregationTemporality: [2, 'varint'], isMonotonic: [3, 'bool'] };
/** @type {Spec} */ const Histogram = { dataPoints: [1, HistogramDataPoint, true], aggregationTemporality: [2, 'varint'] };
/** @type {Spec} */ const Metric = {
  name: [1, 'string'],
  description: [2, 'string'],
  unit: [3, 'string'],
  gauge: [5, Gauge],
  sum: [7, Sum],
  histogram: [9, Histogram],
};
/** @type {Spec} */ const ScopeMetrics = { scope: [1, Scope], metrics: [2, Metric, true], schemaUrl: [3, 'string'] };
/** @type {Spec} */ const ResourceMetrics = { resource: [1, Resource], scopeMetrics: [2, ScopeMetrics, true], schemaUrl: [3, 'string'] };

/** @type {Record<'traces'|'metrics'|'logs', Spec>} */
const REQUESTS = {
  traces: { resourceSpans: [1, ResourceSpans, true] },
  metrics: { resourceMetrics: [1, ResourceMetrics, true] },
  logs: { resourceLogs: [1, ResourceLogs, true] },
};

class Writer {
  constructor() {
    /** @type {Uint8Array[]} */
    this.parts = [];
  }
  /** @param {bigint} v unsigned */
  varint(v) {
    /** @type {number[]} */
    const bytes = [];
    while (v > 0x7fn) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.parts.push(Uint8Array.from(bytes));
  }
  /** @param {number} field @param {number} wire */
  tag(field, wire) {
    this.varint(BigInt((field << 3) | wire));
  }
  /** @param {Uint8Array} b */
  raw(b) {
    this.parts.push(b);
  }
  /** @param {Uint8Array} b */
  lengthDelimited(b) {
    this.varint(BigInt(b.length));
    this.raw(b);
  }
  finish() {
    return new Uint8Array(Buffer.concat(this.parts));
  }
}

const WIRE = { varint: 0, fixed64: 1, len: 2, fixed32: 5 };

/** @param {Scalar} type */
function wireOf(type) {
  switch (type) {
    case 'varint':
    case 'int64':
    case 'bool':
      return WIRE.varint;
    case 'fixed64':
    case 'sfixed64':
    case 'double':
      return WIRE.fixed64;
    case 'fixed32':
      return WIRE.fixed32;
    default:
      return WIRE.len;
  }
}

/** @param {Writer} w @param {Scalar} type @param {any} v */
function writeScalarPayload(w, type, v) {
  switch (type) {
    case 'string':
      w.lengthDelimited(Buffer.from(String(v), 'utf8'));
      return;
    case 'hexId':
      w.lengthDelimited(Buffer.from(v, 'hex'));
      return;
    case 'base64':
      w.lengthDelimited(Buffer.from(v, 'base64'));
      return;
    case 'bool':
      w.varint(v ? 1n : 0n);
      return;
    case 'varint':
    case 'int64':
      w.varint(BigInt.asUintN(64, BigInt(v)));
      return;
    case 'fixed64':
    case 'sfixed64': {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(BigInt.asUintN(64, BigInt(v)));
      w.raw(b);
      return;
    }
    case 'fixed32': {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(Number(v) >>> 0);
      w.raw(b);
      return;
    }
    case 'double': {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(typeof v === 'string' ? Number(v) : v);
      w.raw(b);
      return;
    }
  }
}

/** @param {Spec} spec @param {any} json @returns {Uint8Array} */
function encodeMessage(spec, json) {
  const w = new Writer();
  for (const [name, [field, type, repeated]] of Object.entries(spec)) {
    const value = json[name];
    if (value === undefined || value === null) continue;
    const values = repeated ? value : [value];
    for (const v of values) {
      if (typeof type === 'object') {
        w.tag(field, WIRE.len);
        w.lengthDelimited(encodeMessage(type, v));
      } else {
        w.tag(field, wireOf(type));
        writeScalarPayload(w, type, v);
      }
    }
  }
  return w.finish();
}

/**
 * Encodes an Export*ServiceRequest given in OTLP/JSON shape (camelCase, hex ids, enums as integers).
 * @param {'traces'|'metrics'|'logs'} signal @param {any} json
 */
export function encodeOtlpRequest(signal, json) {
  return encodeMessage(REQUESTS[signal], json);
}

/**
 * Splits a protobuf message into its top-level fields, checking the framing; enough to inspect responses.
 * @param {Uint8Array} bytes
 * @returns {{ field: number, wire: number, value: bigint|Uint8Array }[]}
 */
export function readFields(bytes) {
  const out = [];
  let i = 0;
  const varint = () => {
    let shift = 0n;
    let v = 0n;
    for (;;) {
      if (i >= bytes.length) throw new Error('truncated varint');
      const b = bytes[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < bytes.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    /** @type {bigint|Uint8Array} */
    let value;
    if (wire === WIRE.varint) value = varint();
    else if (wire === WIRE.fixed64) value = bytes.subarray(i, (i += 8));
    else if (wire === WIRE.fixed32) value = bytes.subarray(i, (i += 4));
    else if (wire === WIRE.len) {
      const n = Number(varint());
      value = bytes.subarray(i, (i += n));
    } else throw new Error(`unexpected wire type ${wire}`);
    if (i > bytes.length) throw new Error('truncated field');
    out.push({ field, wire, value });
  }
  return out;
}
