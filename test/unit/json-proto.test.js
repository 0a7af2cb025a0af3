// jsonToProto (OTLP/JSON written as protobuf, then kept by decodeProto) against decodeJson, the reference for
// what OTLP/JSON means: whatever it transcodes must decode to exactly what decodeJson gives, by decodeProto and
// by protobufjs; what it declines goes to decodeJson, which decodes or rejects it as before.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import protobuf from 'protobufjs';
import { builtRequest, decodeProto, LazySpan } from '../../server/otlp/items.js';
import { decodeJson } from '../../server/otlp/decode-json.js';
import { jsonToProto } from '../../server/otlp/json-proto.js';
import { isKeptWhole } from '../../server/otlp/kept-bytes.js';
import { OFF_THREAD_AT, transcodedOffThread } from '../../server/otlp/json-off-thread.js';
import { protobufOf, wellFormed } from '../../server/otlp/json-worker.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest, oracleDecode, requestType } from '../../server/otlp/schema.js';
import { createRandom, randomRequest, toOtlpJson } from '../helpers/random-otlp.js';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';

/** @typedef {'traces'|'metrics'|'logs'} SignalName */
/** @type {SignalName[]} */
const SIGNAL_NAMES = ['traces', 'metrics', 'logs'];
const RANDOM_PER_SIGNAL = 200;
const BOUNDED = { timeout: 120_000 };

/** @param {SignalName} name */
function signal(name) {
  return /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName(name));
}

/** @param {string} file */
function fixture(file) {
  return readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));
}

/** @param {string|Buffer} text */
const bytesOf = (text) => (typeof text === 'string' ? Buffer.from(text, 'utf8') : text);

/** What decodeJson makes of the text: its request, or the DecodeError it throws. @param {SignalName} name @param {Buffer} body */
function reference(name, body) {
  try {
    return { value: decodeJson(signal(name), body) };
  } catch (err) {
    if (err instanceof DecodeError) return { error: err };
    throw err;
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** @param {Buffer} body */
function isUtf8(body) {
  try {
    strictUtf8.decode(body);
    return true;
  } catch {
    return false;
  }
}

/**
 * Transcodes `text` and, when it was, checks that the protobuf means what decodeJson reads in the text: built in
 * full, built lazily, and by protobufjs (which takes only valid UTF-8, and only so much nesting). Returns
 * whether it was transcoded.
 * @param {SignalName} name @param {string|Buffer} text @param {string} what @param {{ deep?: boolean }} [options]
 */
function agrees(name, text, what, { deep = false } = {}) {
  const body = bytesOf(text);
  const wire = jsonToProto(signal(name), body);
  if (wire === null) return false;
  const expected = reference(name, body);
  assert.ok(!expected.error, `${what}: transcoded, but decodeJson rejects it (${expected.error?.message})`);
  assert.deepStrictEqual(decodeProto(signal(name), wire), expected.value, what);
  assert.deepStrictEqual(builtRequest(signal(name), decodeProto(signal(name), wire, { lazy: true })), expected.value, `${what}, lazily`);
  if (!deep && isUtf8(body)) assert.deepStrictEqual(oracleDecode(name, wire), expected.value, `${what}, by protobufjs`);
  assert.ok(isKeptWhole(wire), "the protobuf is memory to keep, not a view of the transcoder's own buffer");
  return true;
}

// ---- a writer of OTLP/JSON in every legal spelling ----

/** @param {string} name */
const snakeCase = (name) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);
const WHITESPACE = [' ', '\n', '\t', '\r\n', '  '];

/**
 * @typedef {{ rare: boolean, spacing?: number }} Style
 *   spacing: the chance of whitespace between two tokens
 *   rare: also spellings that are legal but unusual (a field given twice or under both names, a value null,
 *   leading zeros, exponents on integers, numeric strings for doubles, escapes in ids, lone surrogates, values
 *   nested past decodeProto's limit): jsonToProto may decline those, and must then leave them to decodeJson
 */

/** @param {import('../helpers/random-otlp.js').Random} r @param {Style} style */
function space(r, style) {
  return r.chance(style.spacing ?? 0.05) ? r.pick(WHITESPACE) : '';
}

/** A JSON string literal for `text`, escaped in one of the ways JSON allows. @param {import('../helpers/random-otlp.js').Random} r @param {string} text */
function jsonString(r, text) {
  const way = r.int(4);
  if (way === 0) return JSON.stringify(text);
  if (way === 1)
    return (
      '"' +
      [...text]
        .map((c) =>
          c
            .split('')
            .map((u) => '\\u' + u.charCodeAt(0).toString(16).padStart(4, '0'))
            .join(''),
        )
        .join('') +
      '"'
    );
  if (way === 2) return JSON.stringify(text).replace(/\//g, '\\/');
  // Upper-case \u escapes for whatever JSON.stringify leaves raw, now and then.
  return (
    '"' +
    [...text]
      .map((c) =>
        r.chance(0.3)
          ? c
              .split('')
              .map((u) => '\\u' + u.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'))
              .join('')
          : JSON.stringify(c).slice(1, -1),
      )
      .join('') +
    '"'
  );
}

/**
 * @param {import('../helpers/random-otlp.js').Random} r @param {protobuf.Field} field @param {any} value @param {Style} style
 * @returns {string}
 */
function scalarText(r, field, value, style) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageText(r, resolved, value, style);
  if (resolved instanceof protobuf.Enum) {
    const name = resolved.valuesById[value];
    const way = r.int(4);
    if (way === 0 && name !== undefined) return JSON.stringify(name);
    if (way === 1) return JSON.stringify(String(value));
    if (way === 2 && value === 0 && style.rare) return '-0';
    return String(value);
  }
  if (LONG_TYPES.has(field.type)) {
    const n = BigInt(value);
    const safe = n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER);
    const way = r.int(5);
    if (way === 0 && safe) return String(n);
    // Long number tokens: decodeJson reads them exactly, as strings.
    if (way === 1) return String(n);
    if (way === 2 && style.rare) return JSON.stringify((n < 0n ? '-' : '') + (n < 0n ? -n : n).toString().padStart(20, '0'));
    if (way === 3 && style.rare && safe && n % 1000n === 0n && n !== 0n) return `${n / 1000n}e3`;
    return JSON.stringify(String(value));
  }
  switch (field.type) {
    case 'double': {
      if (Number.isNaN(value) || value === Infinity || value === -Infinity) return JSON.stringify(String(value));
      if (Object.is(value, -0)) return r.chance(0.5) ? '-0' : '-0.0e0';
      if (style.rare && r.chance(0.2)) return JSON.stringify(String(value));
      const way = r.int(3);
      if (way === 0) return value.toExponential().replace('e+', r.chance(0.5) ? 'E+' : 'e');
      return String(value);
    }
    case 'uint32':
    case 'fixed32':
    case 'int32':
    case 'sint32':
    case 'sfixed32': {
      const way = r.int(4);
      if (way === 0) return JSON.stringify(String(value));
      if (way === 1 && style.rare) return value === 0 ? '-0' : `${value}.0`;
      if (way === 2 && style.rare && value !== 0) return `${value / 10}e1`;
      return String(value);
    }
    case 'bool':
      return String(value);
    case 'string': {
      // eslint-disable-next-line no-control-regex -- raw control characters are what OTLP/JSON must refuse
      if (style.rare && r.chance(0.05)) return '"' + value.replace(/[\\"]/g, '\\$&').replace(/[\u0000-\u001f]/g, '') + '\\ud800"';
      return jsonString(r, value);
    }
    case 'bytes': {
      if (ID_FIELDS.has(field.name)) {
        const text = r.chance(0.3) ? value.toUpperCase() : value;
        return style.rare && r.chance(0.2) && text.length > 0 ? '"\\u00' + text.charCodeAt(0).toString(16) + text.slice(1) + '"' : JSON.stringify(text);
      }
      const raw = Buffer.from(value, 'base64');
      const way = r.int(3);
      if (way === 0) return JSON.stringify(raw.toString('base64url'));
      if (way === 1) return JSON.stringify(raw.toString('base64').replace(/=+$/, ''));
      return JSON.stringify(value);
    }
    default:
      throw new Error(`no writer for ${field.type}`);
  }
}

/**
 * A JSON value no field has, of any kind, nested.
 * @param {import('../helpers/random-otlp.js').Random} r @param {number} depth @param {Style} style @returns {string}
 */
function unknownValue(r, depth, style) {
  switch (depth > 3 ? r.int(5) : r.int(7)) {
    case 0:
      return r.pick(['true', 'false', 'null']);
    case 1:
      return r.pick(['0', '-1.5e-7', '12345678901234567890', '1E+400']);
    case 2:
      return r.pick(['"x"', '"\\ud800 lone"', '"\\"{[\\\\"', '"ü"']);
    case 3:
      return '[' + '['.repeat(200) + ']'.repeat(200) + ']';
    case 4:
      return '{}';
    case 5:
      return `[${space(r, style)}${unknownValue(r, depth + 1, style)},${unknownValue(r, depth + 1, style)}${space(r, style)}]`;
    default:
      return `{"a"${space(r, style)}:${unknownValue(r, depth + 1, style)},${space(r, style)}"resourceSpans":${unknownValue(r, depth + 1, style)}}`;
  }
}

/** @param {import('../helpers/random-otlp.js').Random} r @param {protobuf.Type} type @param {any} object @param {Style} style @returns {string} */
function messageText(r, type, object, style) {
  /** @type {string[]} */
  const members = [];
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    const name = r.chance(0.3) ? snakeCase(field.name) : field.name;
    if (value === undefined) {
      if (style.rare && r.chance(0.05)) members.push(`${JSON.stringify(name)}:${space(r, style)}null`);
      continue;
    }
    const text = field.repeated
      ? `[${value.map((/** @type {any} */ v) => space(r, style) + scalarText(r, field, v, style)).join(',')}${space(r, style)}]`
      : scalarText(r, field, value, style);
    if (style.rare && r.chance(0.03)) {
      // Given twice: the later one counts (JSON.parse), or under both names: the camelCase one does.
      const decoy = field.repeated ? '[]' : 'null';
      if (r.chance(0.5)) members.push(`${JSON.stringify(name)}:${decoy}`, `${JSON.stringify(name)}:${text}`);
      else members.push(`${JSON.stringify(field.name)}:${text}`, `${JSON.stringify(snakeCase(field.name))}:${decoy}`);
      continue;
    }
    members.push(`${JSON.stringify(name)}${space(r, style)}:${space(r, style)}${text}`);
  }
  if (r.chance(0.05)) members.push(`"someFutureField":${space(r, style)}${unknownValue(r, 0, style)}`);
  for (let i = members.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [members[i], members[j]] = [members[j], members[i]];
  }
  return `{${space(r, style)}${members.join(`${space(r, style)},${space(r, style)}`)}${space(r, style)}}`;
}

/**
 * The canonical request with explicit defaults dropped now and then, so that both presence and absence are
 * written. @param {import('../helpers/random-otlp.js').Random} r @param {SignalName} name
 */
function randomCanonical(r, name) {
  const request = randomRequest(r, requestType(name), { maxDepth: 10 });
  return decodeProto(signal(name), encodeRequest(name, request));
}

// ---- the oracle ----

for (const name of SIGNAL_NAMES) {
  test(`fixture ${name}.json transcodes to what decodeJson reads`, () => {
    assert.ok(agrees(name, fixture(`${name}.json`), `${name}.json`));
  });

  test(`${RANDOM_PER_SIGNAL} random ${name} requests in the usual spellings all transcode, to what decodeJson reads`, BOUNDED, () => {
    const r = createRandom(0x15a + name.length);
    const type = requestType(name);
    for (let i = 0; i < RANDOM_PER_SIGNAL; i++) {
      const canonical = randomCanonical(r, name);
      const text = messageText(r, type, canonical, { rare: false });
      assert.ok(agrees(name, text, `message ${i}`), `message ${i} was not transcoded: ${text.slice(0, 300)}`);
      assert.ok(agrees(name, toOtlpJson(r, type, canonical, { snake: r.chance(0.5) }), `message ${i}, toOtlpJson`));
      assert.ok(agrees(name, messageText(r, type, canonical, { rare: false, spacing: 1 }), `message ${i}, spaced out`));
    }
  });

  test(`${RANDOM_PER_SIGNAL} random ${name} requests in rare spellings: what transcodes is what decodeJson reads`, BOUNDED, () => {
    const r = createRandom(0x2b7 + name.length);
    const type = requestType(name);
    let declined = 0;
    for (let i = 0; i < RANDOM_PER_SIGNAL; i++) {
      const text = messageText(r, type, randomCanonical(r, name), { rare: true });
      if (!agrees(name, text, `message ${i}`)) {
        declined++;
        const expected = reference(name, bytesOf(text));
        assert.ok(!expected.error, `message ${i}: a legal spelling that decodeJson rejects`);
        // A large body the transcoder declines is read by decodeJson on the worker, and kept as its protobuf.
        const kept = decodeProto(signal(name), protobufOf(name, bytesOf(text)));
        assert.deepStrictEqual(kept, wellFormed(expected.value), `message ${i}, read on the worker`);
      }
    }
    assert.ok(declined > 10 && declined < RANDOM_PER_SIGNAL, `${declined} declined`);
  });
}

test('random mutations of the JSON fixtures: transcoded only when decodeJson reads the same', BOUNDED, () => {
  const r = createRandom(0x3c1);
  const alphabet = Buffer.from('{}[]:,"\\ 0123456789-+.eEtrunlfasx\u00ff\n');
  for (const name of SIGNAL_NAMES) {
    const original = fixture(`${name}.json`);
    let transcoded = 0;
    for (let i = 0; i < 400; i++) {
      const bytes = Buffer.from(original);
      for (let n = 1 + r.int(3); n > 0; n--) bytes[r.int(bytes.length)] = r.pick([...alphabet]);
      if (agrees(name, bytes, `${name}, mutation ${i}`)) transcoded++;
    }
    assert.ok(transcoded > 20, `${name}: ${transcoded} mutations transcoded`);
  }
});

test('every truncation of a JSON fixture is declined, and decodeJson rejects it', BOUNDED, () => {
  for (const name of SIGNAL_NAMES) {
    const text = fixture(`${name}.json`);
    const whole = text.toString('utf8').trimEnd().length;
    for (let end = 1; end < whole; end++) {
      const prefix = text.subarray(0, end);
      assert.equal(jsonToProto(signal(name), prefix), null, `${name}, prefix of ${end} bytes`);
      // Reading every prefix whole costs quadratic time; a sample shows the rejection.
      if (end % 11 === 0) assert.ok(reference(name, prefix).error, `${name}, prefix of ${end} bytes`);
    }
  }
});

test('random bytes are declined or read as decodeJson reads them, never thrown on', BOUNDED, () => {
  const r = createRandom(0x7e);
  for (let i = 0; i < 3000; i++) {
    const bytes = r.bytes(r.int(200));
    if (r.chance(0.5)) bytes[0] = 0x7b;
    for (const name of SIGNAL_NAMES) agrees(name, bytes, `random bytes ${i}`);
  }
});

// ---- malformed and wrongly typed input ----

const DECLINED = {
  'not JSON': '{"resourceSpans": [',
  'an array at the root': '[]',
  'a string at the root': '"x"',
  'text after the request': '{} {}',
  'a trailing comma': '{"resourceSpans":[],}',
  'a BOM': '\ufeff{}',
  'a raw control character in a string': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a\u0001b"}]}]}]}',
  'a raw newline in a string': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a\nb"}]}]}]}',
  'an unknown escape': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a\\qb"}]}]}]}',
  'a short \\u escape': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"\\u12"}]}]}]}',
  'a string where a list belongs': '{"resourceSpans": "x"}',
  'a list where a message belongs': '{"resourceSpans":[{"resource":[]}]}',
  'null in a list': '{"resourceSpans":[null]}',
  'a trace id of the wrong length': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"abcd"}]}]}]}',
  'a trace id that is not hex': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz000000000000000000000000000000"}]}]}]}',
  'a span id one character short': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"000000000000000"}]}]}]}',
  'a timestamp beyond 2^64': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"18446744073709551616"}]}]}]}',
  'a timestamp of 21 digits': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"000000000000000000001"}]}]}]}',
  'a negative timestamp': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"-1"}]}]}]}',
  'an int64 below -2^63': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"intValue":"-9223372036854775809"}}]}}]}',
  'an int64 above 2^63 - 1': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"intValue":9223372036854775808}}]}}]}',
  'a fractional timestamp': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":1.5}]}]}]}',
  'an empty string for a timestamp': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":""}]}]}]}',
  'an unknown enum name': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_SIDEWAYS"}]}]}]}',
  'an enum beyond int32': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":2147483648}]}]}]}',
  'a negative count': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"droppedAttributesCount":-1}]}]}]}',
  'a flags value beyond uint32': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":"4294967296"}]}]}]}',
  'a boolean given as a string': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"boolValue":"true"}}]}}]}',
  'a string given as a number': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5}]}]}]}',
  'a double given as a word': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"doubleValue":"lots"}}]}}]}',
  'truncated true': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"boolValue":tru}}]}}]}',
  'two members of a oneof': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"boolValue":true,"stringValue":"x"}}]}}]}',
  'two kinds of metric data': '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{},"sum":{}}]}]}]}',
  'bytes that are not base64': '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"bytesValue":"a b"}}]}}]}',
  'a number with a leading plus': '{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":+1}]}]}]}',
  'a number ending in a dot': '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asDouble":1.}]}}]}]}]}',
};

for (const [what, text] of Object.entries(DECLINED)) {
  test(`declined, and a DecodeError from decodeJson: ${what}`, () => {
    const body = Buffer.from(text, 'utf8');
    const name = text.includes('resourceMetrics') ? 'metrics' : 'traces';
    assert.equal(jsonToProto(signal(name), body), null);
    assert.throws(() => decodeJson(signal(name), body), DecodeError);
  });
}

// ---- what protobuf cannot carry, and other edges ----

const ATTRIBUTE = (/** @type {string} */ value) => `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${value}}]}]}]}`;

test('a lone surrogate is declined: protobuf strings are UTF-8; decodeJson keeps it', () => {
  const text = ATTRIBUTE('{"stringValue":"a\\ud800b"}');
  assert.equal(jsonToProto(signal('logs'), Buffer.from(text)), null);
  assert.equal(decodeJson(signal('logs'), text).resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue, 'a\ud800b');
  // In a field no one reads, it costs nothing.
  assert.ok(agrees('logs', ATTRIBUTE('{"stringValue":"a","future":"\\udc00"}'), 'lone surrogate in an unknown field'));
  assert.ok(agrees('logs', ATTRIBUTE('{"stringValue":"\\ud83d\\ude00 \\u00e9 \\u20ac"}'), 'a surrogate pair'));
});

test('a field given twice or under both names is declined, and decodeJson picks as before', () => {
  const twice = '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","name":"b"}]}]}]}';
  const both = '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","trace_state":"x","traceState":"y"}]}]}]}';
  for (const text of [twice, both]) assert.equal(jsonToProto(signal('traces'), Buffer.from(text)), null);
  assert.equal(decodeJson(signal('traces'), twice).resourceSpans[0].scopeSpans[0].spans[0].name, 'b');
  assert.equal(decodeJson(signal('traces'), both).resourceSpans[0].scopeSpans[0].spans[0].traceState, 'y');
});

test('values nested as deep as decodeProto takes transcode; one level more is left to decodeJson', () => {
  /** @param {number} levels AnyValues in the chain */
  const nested = (levels) => ATTRIBUTE('{"arrayValue":{"values":['.repeat(levels - 1) + '{"stringValue":"leaf"}' + ']}}'.repeat(levels - 1));
  assert.ok(agrees('logs', nested(65), '65 levels', { deep: true }));
  const deeper = Buffer.from(nested(66));
  assert.equal(jsonToProto(signal('logs'), deeper), null);
  assert.ok(decodeJson(signal('logs'), deeper));
  const kvlist = (/** @type {number} */ levels) =>
    ATTRIBUTE('{"kvlistValue":{"values":[{"key":"k","value":'.repeat(levels - 1) + '{"intValue":1}' + '}]}}'.repeat(levels - 1));
  assert.ok(agrees('logs', kvlist(65), '65 levels of kvlist', { deep: true }));
  assert.equal(jsonToProto(signal('logs'), Buffer.from(kvlist(66))), null);
});

test('-0 is 0 in an integer field and stays -0 in a double', () => {
  const point = '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"flags":-0,"asDouble":-0}]}}]}]}]}';
  assert.ok(agrees('metrics', point, '-0'));
  const [p] = decodeJson(signal('metrics'), point).resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints;
  assert.ok(Object.is(p.flags, 0));
  assert.ok(Object.is(p.asDouble, -0));
});

test('64-bit integers at their limits, as strings and as long number tokens', () => {
  for (const v of ['0', '1', '9007199254740993', '4294967296', '18446744073709551615', '1768469400000000001']) {
    assert.ok(agrees('traces', `{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"${v}","endTimeUnixNano":${v}}]}]}]}`, v));
  }
  for (const v of ['-9223372036854775808', '9223372036854775807', '-1', '-4294967296', '-9007199254740993']) {
    assert.ok(agrees('logs', ATTRIBUTE(`{"intValue":"${v}"}`), v));
    assert.ok(agrees('logs', ATTRIBUTE(`{"intValue":${v}}`), v));
    assert.ok(agrees('metrics', `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"sum":{"dataPoints":[{"asInt":${v}}]}}]}]}]}`, v));
  }
});

test('doubles read as JSON.parse reads them, past the exactly representable', () => {
  const values = [
    '0.1',
    '0.005',
    '1e-7',
    '-1.5E+300',
    '5e-324',
    '1.7976931348623157e308',
    '0.34365045284321577',
    '9007199254740993',
    '123456789012345678901234567890',
    '4.9406564584124654e-324',
    '2.2250738585072011e-308',
    '0.30000000000000004',
    '1e22',
    '1e23',
  ];
  for (const v of values) {
    const text = `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asDouble":${v}}]}}]}]}]}`;
    assert.ok(agrees('metrics', text, v));
  }
});

test('strings of any length and content: lengths of 1, 2 and 3 bytes, invalid UTF-8 read as decodeJson reads it', () => {
  for (const n of [0, 1, 127, 128, 129, 16383, 16384, 70000]) {
    assert.ok(agrees('logs', ATTRIBUTE(`{"stringValue":"${'é'.repeat(n >> 1)}${'x'.repeat(n & 1)}"}`), `${n} bytes`));
  }
  const invalid = [[0xff], [0xe2, 0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80, 0x80], [0xe2, 0x82, 0x5c, 0x6e]];
  for (const bytes of invalid) {
    const [before, after] = ATTRIBUTE('{"stringValue":"a|b"}').split('|');
    const body = Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
    assert.ok(agrees('logs', body, `bytes ${bytes.join(' ')}`));
  }
});

test('an empty body, or only whitespace, is an empty request', () => {
  for (const name of SIGNAL_NAMES) {
    for (const text of ['', ' \n\t\r', '{}', ' { } ']) {
      assert.ok(agrees(name, text, JSON.stringify(text)));
      assert.equal(jsonToProto(signal(name), Buffer.from(text))?.length, 0);
    }
  }
});

test('the transcoder holds nothing back between requests: a large request, then a small one', () => {
  const big = ATTRIBUTE(`{"stringValue":"${'y'.repeat(6 << 20)}"}`);
  assert.ok(agrees('logs', big, 'large'));
  assert.ok(agrees('logs', ATTRIBUTE('{"stringValue":"small"}'), 'small'));
  const a = jsonToProto(signal('logs'), Buffer.from(ATTRIBUTE('{"stringValue":"first"}')));
  jsonToProto(signal('logs'), Buffer.from(ATTRIBUTE('{"stringValue":"second"}')));
  assert.deepStrictEqual(decodeProto(signal('logs'), /** @type {Buffer} */ (a)), decodeJson(signal('logs'), ATTRIBUTE('{"stringValue":"first"}')));
});

test('on a worker thread the protobuf is memory of its own, to be moved whole, and no slab is made there', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    (async () => {
      const { protobufOf } = await import(${JSON.stringify(new URL('../../server/otlp/json-worker.js', import.meta.url).href)});
      const { slabCounts } = await import(${JSON.stringify(new URL('../../server/otlp/kept-bytes.js', import.meta.url).href)});
      const wire = protobufOf('logs', Buffer.from(${JSON.stringify(ATTRIBUTE('{"stringValue":"moved"}'))}));
      parentPort.postMessage({ length: wire.length, whole: wire.byteOffset === 0 && wire.buffer.byteLength === wire.length, slabs: slabCounts().slabs });
    })();
  `;
  const worker = new Worker(code, { eval: true });
  const [answer] = await once(worker, 'message');
  await worker.terminate();
  assert.ok(answer.length > 0);
  assert.deepEqual({ whole: answer.whole, slabs: answer.slabs }, { whole: true, slabs: 0 });
});

// ---- through the receiver ----

test('the receiver keeps OTLP/JSON as it keeps protobuf, takes what is declined, and names what is wrong', async () => {
  const collector = await startTestCollector({ print: 'none' });
  try {
    const post = (/** @type {string|Uint8Array} */ body, /** @type {string} */ type) => postOtlp(collector.urls.http, '/v1/traces', body, type);
    /** The stored spans, without the request each came in. */
    const spans = async () => (await collector.api('/api/spans?limit=1000')).spans.map((/** @type {any} */ { requestId, ...span }) => span);
    assert.equal((await post(fixture('traces.pb'), 'application/x-protobuf')).status, 200);
    const fromProtobuf = await spans();
    await collector.clear();
    assert.equal((await post(fixture('traces.json'), 'application/json')).status, 200);
    assert.ok(
      [...collector.store.ring('traces')].every((entry) => entry instanceof LazySpan),
      'stored unbuilt, like protobuf',
    );
    assert.deepStrictEqual(await spans(), fromProtobuf);

    const lone = '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","name":"half \\ud83d"}]}]}]}';
    assert.equal((await post(lone, 'application/json')).status, 200);
    const [span] = (await collector.api('/api/spans?traceId=0af7651916cd43dd8448eb211c80319c')).spans;
    assert.equal(span.name, 'half \ud83d');

    const wrong = await post('{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"abc"}]}]}]}', 'application/json');
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.toString(), /spans\[0\]\.spanId: expected 16 hex characters/);
  } finally {
    await collector.stop();
  }
});

test('a large OTLP/JSON body is transcoded on a worker thread and kept as a small one is; declined and wrong ones as before', async () => {
  const collector = await startTestCollector({ print: 'none' });
  try {
    const post = (/** @type {string|Uint8Array} */ body, /** @type {string} */ type) => postOtlp(collector.urls.http, '/v1/traces', body, type);
    const spans = async () => (await collector.api('/api/spans?limit=1000')).spans.map((/** @type {any} */ { requestId, ...span }) => span);
    /** traces.json with a long attribute on its first span, the whole over OFF_THREAD_AT, and `name` for that span */
    const large = (/** @type {string} */ name, /** @type {string} */ spanId = '') => {
      const request = JSON.parse(fixture('traces.json').toString());
      const span = request.resourceSpans[0].scopeSpans[0].spans[0];
      span.name = name;
      if (spanId) span.spanId = spanId;
      span.attributes.push({ key: 'payload', value: { stringValue: 'x'.repeat(OFF_THREAD_AT) } });
      // a lone surrogate must reach the text as an escape, as exporters write it
      return JSON.stringify(request).replace('LONE', '\\ud800');
    };

    const text = large('checkout');
    const before = transcodedOffThread();
    assert.equal((await post(text, 'application/json')).status, 200);
    assert.equal(transcodedOffThread(), before + 1, 'transcoded on the worker');
    const fromJson = await spans();
    await collector.clear();
    assert.equal((await post(Buffer.from(encodeRequest('traces', decodeJson(signal('traces'), Buffer.from(text)))), 'application/x-protobuf')).status, 200);
    assert.deepStrictEqual(fromJson, await spans());
    assert.ok(fromJson.some((/** @type {any} */ s) => s.name === 'checkout' && s.attributes.payload.length === OFF_THREAD_AT));

    // Declined by the transcoder, read by decodeJson on the worker too, and kept as protobuf: its lone surrogate
    // becomes U+FFFD, as protobuf strings are UTF-8. A field given twice keeps its last value, as decodeJson keeps it.
    await collector.clear();
    const declined = transcodedOffThread();
    assert.equal((await post(large('half LONE'), 'application/json')).status, 200);
    const twice = large('first').replace('"name":"first"', '"name":"first","name":"second"');
    assert.equal((await post(twice, 'application/json')).status, 200);
    assert.equal(transcodedOffThread(), declined + 2, 'read on the worker');
    const names = (await spans()).map((/** @type {any} */ s) => s.name);
    assert.ok(names.includes('half \ufffd') && names.includes('second'), names.join());

    const wrong = await post(large('bad', 'abc'), 'application/json');
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.toString(), /spans\[0\]\.spanId: expected 16 hex characters/);
    assert.equal(transcodedOffThread(), declined + 3, "refused on the worker, in the reference decoder's words");

    const small = transcodedOffThread();
    assert.equal((await post(fixture('traces.json'), 'application/json')).status, 200);
    assert.equal(transcodedOffThread(), small, 'a small body is transcoded on the event loop');
  } finally {
    await collector.stop();
  }
});
