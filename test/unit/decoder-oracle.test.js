// The hand-written decoders against the reference: protobufjs (schema.js oracleDecode) for protobuf,
// and the protobuf decoder for OTLP/JSON. Same canonical model out of every encoding of a request.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { decodeProto } from '../../server/otlp/items.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest, oracleDecode, requestType } from '../../server/otlp/schema.js';
import { createRandom, encodeLiberally, randomRequest, toOtlpJson } from '../helpers/random-otlp.js';

/** @typedef {'traces'|'metrics'|'logs'} SignalName */
/** @type {SignalName[]} */
const SIGNAL_NAMES = ['traces', 'metrics', 'logs'];
const RANDOM_PER_SIGNAL = 300;
/** A decoder that loops forever must fail the suite, not stall it. */
const BOUNDED = { timeout: 120_000 };

/** @param {SignalName} name */
function signal(name) {
  return /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName(name));
}

/** @param {string} file */
function fixture(file) {
  return readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));
}

/**
 * Runs `decode`; returns its result or the DecodeError it threw. Anything else thrown is a bug.
 * @param {() => any} decode
 */
function outcome(decode) {
  try {
    return { value: decode() };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err };
    throw err;
  }
}

/** @param {number} field @param {number} wireType */
const tag = (field, wireType) => (field << 3) | wireType;

/** Builds bytes by hand: a message is a list of [field, wireType, payload] with payload bytes or a number. */
function wire(/** @type {[number, number, Uint8Array | number][]} */ fields) {
  const w = protobuf.Writer.create();
  for (const [field, wt, payload] of fields) {
    w.uint32(tag(field, wt));
    if (wt === 0) w.uint64(/** @type {number} */ (payload));
    else if (wt === 1) w.fixed64(/** @type {number} */ (payload));
    else if (wt === 5) w.fixed32(/** @type {number} */ (payload));
    else w.bytes(/** @type {Uint8Array} */ (payload));
  }
  return w.finish();
}

// ---- fixtures ----

for (const name of SIGNAL_NAMES) {
  test(`fixture ${name}.pb: decodeProto equals the protobufjs reference`, () => {
    const bytes = fixture(`${name}.pb`);
    const decoded = decodeProto(signal(name), bytes);
    assert.deepStrictEqual(decoded, oracleDecode(name, bytes));
    assert.ok(signal(name).countItems(decoded) > 5);
  });

  test(`fixture ${name}.json: decodeJson equals decodeProto of ${name}.pb`, () => {
    const fromJson = decodeJson(signal(name), fixture(`${name}.json`));
    assert.deepStrictEqual(fromJson, decodeProto(signal(name), fixture(`${name}.pb`)));
    assert.deepStrictEqual(decodeJson(signal(name), fixture(`${name}.json`).toString('utf8')), fromJson);
  });

  test(`fixture ${name}.pb: every truncation is rejected exactly when protobufjs rejects it`, BOUNDED, () => {
    const bytes = fixture(`${name}.pb`);
    let accepted = 0;
    for (let end = 0; end < bytes.length; end++) {
      const prefix = bytes.subarray(0, end);
      const mine = outcome(() => decodeProto(signal(name), prefix));
      let reference;
      try {
        reference = { value: oracleDecode(name, prefix) };
      } catch (err) {
        reference = { error: err };
      }
      if (reference.error) {
        assert.ok(mine.error, `prefix of ${end} bytes: protobufjs rejects it (${reference.error}), decodeProto accepts it`);
      } else {
        assert.deepStrictEqual(mine.value, reference.value, `prefix of ${end} bytes`);
        accepted++;
      }
    }
    // Only the cuts between top-level resource groups are complete messages.
    assert.ok(accepted >= 2 && accepted < 10, `${accepted} prefixes decoded`);
  });
}

// ---- seeded random messages ----

const ID_HEX_LENGTHS = new Map([
  ['traceId', 32],
  ['spanId', 16],
  ['parentSpanId', 16],
]);

/** Whether a decoded request holds a trace or span id that is neither empty nor 16 or 8 bytes. @param {any} value */
function malformedId(value) {
  if (Array.isArray(value)) return value.some(malformedId);
  if (value === null || typeof value !== 'object') return false;
  for (const [key, v] of Object.entries(value)) {
    const length = ID_HEX_LENGTHS.get(key);
    if (length !== undefined && typeof v === 'string') {
      if (v !== '' && v.length !== length) return true;
    } else if (malformedId(v)) {
      return true;
    }
  }
  return false;
}

for (const name of SIGNAL_NAMES) {
  const type = requestType(name);

  test(`${RANDOM_PER_SIGNAL} random ${name} requests: decodeProto equals the reference, however encoded`, BOUNDED, () => {
    const r = createRandom(0x5eed + name.length);
    let rejected = 0;
    for (let i = 0; i < RANDOM_PER_SIGNAL; i++) {
      const request = randomRequest(r, type, { anyIds: i % 4 === 3, maxDepth: 10 });
      const plain = encodeRequest(name, request);
      const liberal = encodeLiberally(r, type, request);
      const expected = oracleDecode(name, plain);
      assert.deepStrictEqual(oracleDecode(name, liberal), expected, `message ${i}: both encodings carry the same request`);
      if (malformedId(expected)) {
        assert.throws(() => decodeProto(signal(name), plain), DecodeError, `message ${i}: an id of the wrong length`);
        assert.throws(() => decodeProto(signal(name), liberal), DecodeError, `message ${i}: an id of the wrong length`);
        rejected++;
        continue;
      }
      assert.deepStrictEqual(decodeProto(signal(name), plain), expected, `message ${i}, protobufjs encoding`);
      assert.deepStrictEqual(decodeProto(signal(name), liberal), expected, `message ${i}, liberal encoding`);
    }
    assert.ok(rejected > 10 && rejected < RANDOM_PER_SIGNAL / 3, `${rejected} requests with a malformed id`);
  });

  test(`${RANDOM_PER_SIGNAL} random ${name} requests as OTLP/JSON (camelCase and snake_case) decode like the protobuf`, BOUNDED, () => {
    const r = createRandom(0x7a5 + name.length);
    for (let i = 0; i < RANDOM_PER_SIGNAL; i++) {
      const request = randomRequest(r, type, { maxDepth: 10 });
      const expected = decodeProto(signal(name), encodeRequest(name, request));
      for (const snake of [false, true]) {
        const text = toOtlpJson(r, type, expected, { snake });
        assert.deepStrictEqual(decodeJson(signal(name), text), expected, `message ${i}, ${snake ? 'snake_case' : 'camelCase'}`);
      }
    }
  });
}

test('OTLP/JSON 64-bit integers written as numbers stay exact, next to doubles of any precision', () => {
  const point = (/** @type {string} */ value) =>
    `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"timeUnixNano":1768469400000000001,"asDouble":${value}}]}}]}]}]}`;
  for (const value of ['0.000005048574018292129', '1.2345678901234567', '-43136.692815460265', '1.7976931348623157e+308', '5e-324', '0']) {
    const decoded = decodeJson(signal('metrics'), point(value));
    const [p] = decoded.resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints;
    assert.equal(p.timeUnixNano, '1768469400000000001', value);
    assert.equal(p.asDouble, Number(value), value);
  }
});

test('decoding the same bytes twice gives equal, independent results', () => {
  const bytes = fixture('traces.pb');
  const a = decodeProto(signal('traces'), bytes);
  const b = decodeProto(signal('traces'), Uint8Array.from(bytes));
  assert.deepStrictEqual(a, b);
});

test('an empty body is an empty request in both encodings', () => {
  for (const name of SIGNAL_NAMES) {
    const root = signal(name).rootField;
    assert.deepStrictEqual(decodeProto(signal(name), new Uint8Array(0)), { [root]: [] });
    assert.deepStrictEqual(decodeJson(signal(name), '{}'), { [root]: [] });
    assert.deepStrictEqual(oracleDecode(name, new Uint8Array(0)), { [root]: [] });
  }
});

test('nested attribute values decode alike up to the depth limit, and deeper nesting is a DecodeError', () => {
  /** @param {number} depth */
  const nested = (depth) => {
    /** @type {any} */
    let value = { stringValue: 'leaf' };
    for (let i = 0; i < depth; i++) value = i % 2 ? { arrayValue: { values: [value] } } : { kvlistValue: { values: [{ key: `k${i}`, value }] } };
    return { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: value }] }] }] };
  };
  const bytes = encodeRequest('logs', nested(16));
  assert.deepStrictEqual(decodeProto(signal('logs'), bytes), oracleDecode('logs', bytes));
  assert.deepStrictEqual(decodeJson(signal('logs'), JSON.stringify(nested(16))), decodeProto(signal('logs'), bytes));

  // Built without recursion: an attacker's nesting is deeper than any encoder's stack.
  const depth = 3000;
  let body = wire([[1, 2, new TextEncoder().encode('leaf')]]);
  for (let i = 0; i < depth; i++) body = wire([[5, 2, wire([[1, 2, body]])]]);
  const tooDeep = wire([[1, 2, wire([[2, 2, wire([[2, 2, wire([[5, 2, body]])]])]])]]);
  assert.throws(() => decodeProto(signal('logs'), tooDeep), DecodeError);
  const json =
    '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":' + '{"arrayValue":{"values":['.repeat(depth) + '{"stringValue":"leaf"}' + ']}}'.repeat(depth) + '}]}]}]}';
  assert.throws(() => decodeJson(signal('logs'), json), DecodeError);
});

// ---- malformed input ----

/** Wraps span bytes into an ExportTraceServiceRequest. @param {Uint8Array} spanBytes */
function inTrace(spanBytes) {
  return wire([[1, 2, wire([[2, 2, wire([[2, 2, spanBytes]])]])]]);
}

const WRONG_WIRE_TYPES = {
  'root resourceSpans as a varint': wire([[1, 0, 5]]),
  'span name as a varint': inTrace(wire([[5, 0, 1]])),
  'span start time as a varint': inTrace(wire([[7, 0, 12345]])),
  'span kind as fixed32': inTrace(wire([[6, 5, 2]])),
  'span flags as a varint': inTrace(wire([[16, 0, 1]])),
  'span attributes as fixed64': inTrace(wire([[9, 1, 7]])),
  'span status as a varint': inTrace(wire([[15, 0, 2]])),
  'attribute value as fixed32': inTrace(wire([[9, 2, wire([[2, 5, 1]])]])),
  'AnyValue string as a varint': inTrace(wire([[9, 2, wire([[2, 2, wire([[1, 0, 3]])]])]])),
  'AnyValue double as fixed32': inTrace(wire([[9, 2, wire([[2, 2, wire([[4, 5, 3]])]])]])),
  'resource as fixed64': wire([[1, 2, wire([[1, 1, 3]])]]),
};

for (const [what, bytes] of Object.entries(WRONG_WIRE_TYPES)) {
  test(`wrong wire type is a DecodeError: ${what}`, () => {
    assert.throws(() => decodeProto(signal('traces'), bytes), DecodeError);
  });
}

const MALFORMED = {
  'varint longer than 10 bytes': Uint8Array.from([0x0a, ...Array(11).fill(0xff), 0x01]),
  'length running past the end': Uint8Array.from([0x0a, 0x05, 0x12, 0x00]),
  'length near 2^32': Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]),
  'field number 0': Uint8Array.from([0x02, 0x00]),
  'wire type 6': Uint8Array.from([0x0e, 0x00]),
  'wire type 7': Uint8Array.from([0x0f, 0x00]),
  'end of a group that never started': Uint8Array.from([0x0c]),
  'group never closed': Uint8Array.from([0xa3, 0x06, 0x08, 0x01]),
  'truncated fixed64 inside a span': inTrace(Uint8Array.from([0x39, 1, 2, 3])),
  'unknown groups nested 10 000 deep': Uint8Array.from([
    ...Array(10000)
      .fill(0xa3)
      .flatMap(() => [0xa3, 0x06]),
    0x08,
    0x01,
  ]),
};

for (const [what, bytes] of Object.entries(MALFORMED)) {
  test(`malformed protobuf is a DecodeError: ${what}`, () => {
    for (const name of SIGNAL_NAMES) assert.throws(() => decodeProto(signal(name), bytes), DecodeError);
  });
}

test('malformed protobuf is a DecodeError: packed explicit bounds not a multiple of 8 bytes', () => {
  const point = wire([[7, 2, Uint8Array.from([1, 2, 3])]]);
  const metric = wire([[9, 2, wire([[1, 2, point]])]]);
  const bytes = wire([[1, 2, wire([[2, 2, wire([[2, 2, metric]])]])]]);
  assert.throws(() => decodeProto(signal('metrics'), bytes), DecodeError);
});

test('random bytes never crash the protobuf decoder or hang it', BOUNDED, () => {
  const r = createRandom(0xbad);
  const started = Date.now();
  let rejected = 0;
  for (let i = 0; i < 3000; i++) {
    const bytes = r.bytes(r.int(i % 10 === 0 ? 4000 : 64));
    for (const name of SIGNAL_NAMES) if (outcome(() => decodeProto(signal(name), bytes)).error) rejected++;
  }
  assert.ok(rejected > 6000, `${rejected} of 9000 rejected`);
  assert.ok(Date.now() - started < 20_000);
});

test('random corruptions of the fixtures decode or throw DecodeError, matching protobufjs when it accepts', BOUNDED, () => {
  const r = createRandom(0xf1);
  for (const name of SIGNAL_NAMES) {
    const original = fixture(`${name}.pb`);
    for (let i = 0; i < 400; i++) {
      const bytes = Buffer.from(original);
      for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.int(256);
      const mine = outcome(() => decodeProto(signal(name), bytes));
      if (mine.error) continue;
      let reference;
      try {
        reference = oracleDecode(name, bytes);
      } catch {
        // protobufjs skips over mistyped fields where decodeProto is strict; only accepted input is comparable.
        continue;
      }
      assert.deepStrictEqual(mine.value, reference, `${name}, corruption ${i}`);
    }
  }
});

const MALFORMED_JSON = {
  'not JSON': '{"resourceSpans": [',
  'an array at the root': '[]',
  'a string where a list belongs': '{"resourceSpans": "x"}',
  'a trace id of the wrong length': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"abcd"}]}]}]}',
  'a trace id that is not hex': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz000000000000000000000000000000"}]}]}]}',
  'a timestamp beyond 2^64': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"18446744073709551616"}]}]}]}',
  'a fractional timestamp': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":1.5}]}]}]}',
  'an unknown enum name': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_SIDEWAYS"}]}]}]}',
  'a boolean given as a string': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"boolValue":"true"}}]}}]}',
  'two members of a oneof': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"boolValue":true,"stringValue":"x"}}]}}]}',
};

for (const [what, text] of Object.entries(MALFORMED_JSON)) {
  test(`malformed OTLP/JSON is a DecodeError: ${what}`, () => {
    assert.throws(() => decodeJson(signal('traces'), text), DecodeError);
  });
}

test('random mutations of the JSON fixtures decode or throw DecodeError, nothing else', BOUNDED, () => {
  const r = createRandom(0x15);
  const replacements = [null, 0, -1, 1.5, '', 'x', 'NaN', true, [], {}, [1, 'a'], { a: 1 }, '18446744073709551616'];
  for (const name of SIGNAL_NAMES) {
    const original = JSON.parse(fixture(`${name}.json`).toString('utf8'));
    for (let i = 0; i < 300; i++) {
      const copy = structuredClone(original);
      /** @type {any} */
      let node = copy;
      /** @type {any} */
      let parent = null;
      /** @type {string|number} */
      let key = '';
      while (node && typeof node === 'object' && (parent === null || r.chance(0.85))) {
        const keys = Object.keys(node);
        if (keys.length === 0) break;
        parent = node;
        key = Array.isArray(node) ? r.int(node.length) : r.pick(keys);
        node = node[key];
      }
      if (parent !== null) parent[key] = r.pick(replacements);
      outcome(() => decodeJson(signal(name), JSON.stringify(copy)));
    }
  }
});
