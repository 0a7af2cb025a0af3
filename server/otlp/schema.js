// The protobuf schema in proto/, loaded once with protobufjs. Received protobuf is never decoded with
// it (the decoders under decode/ read the wire straight into the canonical model); it encodes what we send back,
// lends its reflection to decode-json.js, and is the independent reference those decoders are tested against.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';
import { ID_FIELDS, SIGNAL_LIST, SIGNAL_NAMES, signalByName } from './signals.js';
import { wellFormed } from './text.js';

/**
 * @typedef {import('./signals.js').SignalName} SignalName
 * @typedef {SignalName | { name: SignalName }} SignalRef
 * @typedef {{ rejected: number, errorMessage: string }} PartialSuccess
 * @typedef {{ typeUrl: string, bytes: Uint8Array, json: Record<string, unknown> }} Detail
 *   an error detail ready for both encodings: `bytes` is the packed message, `json` its OTLP/JSON fields
 * @typedef {{ seconds: number, nanos: number }} Duration
 * @typedef {{ retryDelay: Duration }} RetryInfo
 * @typedef {{ fieldViolations: { field: string, description: string, reason: string }[] }} BadRequest
 * @typedef {{ typeUrl: string, value: RetryInfo | BadRequest | Uint8Array }} DecodedDetail
 * @typedef {{ code: number, message: string, details: DecodedDetail[] }} DecodedStatus
 */

const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

const FILES = [...SIGNAL_LIST.map((s) => s.protoFile), 'google/rpc/status.proto', 'google/rpc/error_details.proto'];

/** Imports name files relative to proto/, not to the importing file. */
function loadRoot() {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_DIR, target));
  return root.loadSync(FILES, { keepCase: false });
}

const root = loadRoot();

const Status = root.lookupType('google.rpc.Status');
const RetryInfoType = root.lookupType('google.rpc.RetryInfo');
const BadRequestType = root.lookupType('google.rpc.BadRequest');

const TYPE_URL_PREFIX = 'type.googleapis.com/';
const RETRY_INFO_URL = TYPE_URL_PREFIX + RetryInfoType.fullName.slice(1);
const BAD_REQUEST_URL = TYPE_URL_PREFIX + BadRequestType.fullName.slice(1);

/** @param {SignalRef} signal */
function signalRow(signal) {
  const name = typeof signal === 'string' ? signal : signal.name;
  const row = signalByName(name);
  if (!row) throw new TypeError(`unknown signal ${JSON.stringify(name)}`);
  return row;
}

/** @param {SignalRef} signal @returns {protobuf.Type} */
export function requestType(signal) {
  return root.lookupType(signalRow(signal).requestType);
}

/** @param {SignalRef} signal @returns {protobuf.Type} */
export function responseType(signal) {
  return root.lookupType(signalRow(signal).responseType);
}

// ---- export responses ----

/** @type {Map<string, Uint8Array>} */
const FULL_SUCCESS = new Map();
for (const name of SIGNAL_NAMES) {
  const type = responseType(name);
  FULL_SUCCESS.set(name, type.encode(type.create({})).finish());
}

/**
 * @param {SignalRef} signal
 * @param {PartialSuccess | null} partial
 * @returns {Uint8Array}
 */
export function encodeExportResponse(signal, partial) {
  const row = signalRow(signal);
  if (partial === null) return /** @type {Uint8Array} */ (FULL_SUCCESS.get(row.name));
  const type = responseType(row.name);
  const message = {
    partialSuccess: { [row.rejectedField]: partial.rejected, errorMessage: wellFormed(partial.errorMessage) },
  };
  return type.encode(type.fromObject(message)).finish();
}

/**
 * OTLP/JSON body of an export response; int64 counts are strings as the proto3 JSON mapping writes them.
 * @param {SignalRef} signal
 * @param {PartialSuccess | null} partial
 * @returns {string}
 */
export function exportResponseJson(signal, partial) {
  // The Collector always writes the (empty) partialSuccess field; tests ported from it compare bodies.
  if (partial === null) return '{"partialSuccess":{}}';
  const row = signalRow(signal);
  return JSON.stringify({
    partialSuccess: { [row.rejectedField]: String(partial.rejected), errorMessage: wellFormed(partial.errorMessage) },
  });
}

// ---- google.rpc.Status and its details ----

/** @param {number} ms @returns {Duration} */
function durationOf(ms) {
  const nanosTotal = Math.max(0, Math.round(ms * 1e6));
  const seconds = Math.floor(nanosTotal / 1e9);
  return { seconds, nanos: nanosTotal - seconds * 1e9 };
}

/** proto3 JSON writes a Duration as seconds with 0, 3, 6 or 9 fraction digits and an `s`. @param {Duration} d */
function durationJson({ seconds, nanos }) {
  if (nanos === 0) return `${seconds}s`;
  let frac = String(nanos).padStart(9, '0');
  if (frac.endsWith('000000')) frac = frac.slice(0, 3);
  else if (frac.endsWith('000')) frac = frac.slice(0, 6);
  return `${seconds}.${frac}s`;
}

/** @param {number} ms @returns {Uint8Array} */
export function encodeRetryInfo(ms) {
  return RetryInfoType.encode(RetryInfoType.fromObject({ retryDelay: durationOf(ms) })).finish();
}

/** @param {number} ms @returns {Detail} */
export function retryInfoDetail(ms) {
  return {
    typeUrl: RETRY_INFO_URL,
    bytes: encodeRetryInfo(ms),
    json: { retryDelay: durationJson(durationOf(ms)) },
  };
}

/** @param {string} description @param {string} [field] @returns {Detail} */
export function badRequestDetail(description, field = '') {
  const text = wellFormed(description);
  const violation = field ? { field: wellFormed(field), description: text } : { description: text };
  return {
    typeUrl: BAD_REQUEST_URL,
    bytes: BadRequestType.encode(BadRequestType.fromObject({ fieldViolations: [violation] })).finish(),
    json: { fieldViolations: [violation] },
  };
}

/**
 * @param {number} code a gRPC status code
 * @param {string} message
 * @param {Detail[]} [details]
 * @returns {Uint8Array}
 */
export function encodeStatus(code, message, details = []) {
  const status = {
    code,
    message: wellFormed(message),
    // protobufjs bundles google.protobuf.Any with its original snake_case field names.
    details: details.map((d) => ({ type_url: d.typeUrl, value: d.bytes })),
  };
  return Status.encode(Status.fromObject(status)).finish();
}

/**
 * @param {number} code
 * @param {string} message
 * @param {Detail[]} [details]
 * @returns {string}
 */
export function statusJson(code, message, details = []) {
  /** @type {Record<string, unknown>} */
  const body = { code, message: wellFormed(message) };
  if (details.length > 0) body.details = details.map((d) => ({ '@type': d.typeUrl, ...d.json }));
  return JSON.stringify(body);
}

/** @param {Uint8Array} bytes @returns {RetryInfo} */
export function decodeRetryInfo(bytes) {
  const info = /** @type {any} */ (RetryInfoType.toObject(RetryInfoType.decode(bytes), { longs: Number }));
  const delay = info.retryDelay;
  return { retryDelay: { seconds: delay?.seconds ?? 0, nanos: delay?.nanos ?? 0 } };
}

/** @param {Uint8Array} bytes @returns {BadRequest} */
function decodeBadRequest(bytes) {
  const request = /** @type {any} */ (BadRequestType.toObject(BadRequestType.decode(bytes), { defaults: true }));
  return {
    fieldViolations: request.fieldViolations.map((/** @type {any} */ v) => ({
      field: v.field,
      description: v.description,
      reason: v.reason,
    })),
  };
}

/** @param {Uint8Array} bytes @returns {DecodedStatus} */
export function decodeStatus(bytes) {
  const status = /** @type {any} */ (Status.toObject(Status.decode(bytes), { defaults: true }));
  return {
    code: status.code,
    message: status.message,
    details: status.details.map((/** @type {any} */ any) => {
      /** @type {string} */
      const typeUrl = any.type_url;
      /** @type {Uint8Array} */
      const value = any.value;
      if (typeUrl === RETRY_INFO_URL) return { typeUrl, value: decodeRetryInfo(value) };
      if (typeUrl === BAD_REQUEST_URL) return { typeUrl, value: decodeBadRequest(value) };
      return { typeUrl, value };
    }),
  };
}

// ---- canonical model <-> protobufjs ----

/** protobufjs types util.Long loosely; it holds the `long` package, whose statics these are. */
const Long = /** @type {{ fromValue(value: string|number|bigint|object, unsigned?: boolean): protobuf.Long }} */ (/** @type {unknown} */ (protobuf.util.Long));

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED_LONG_TYPES = new Set(['uint64', 'fixed64']);
/** Attributes naming strings by index (common.proto), which the model resolves or ignores (signals.js `resolveJsonStrings`). */
const REFERENCE_FIELDS = new Set(['KeyValue.keyStrindex', 'AnyValue.stringValueStrindex']);

/** @param {protobuf.Field} field @param {any} value a decoded field's value, of the field's type */
function isDefaultValue(field, value) {
  if (value === null || value === undefined) return true;
  if (field.repeated) return value.length === 0;
  if (field.partOf) return false;
  if (field.resolvedType instanceof protobuf.Type) return false;
  if (typeof value === 'string') return value === '' || (LONG_TYPES.has(field.type) && value === '0');
  if (typeof value === 'number') return value === 0 && !Object.is(value, -0);
  if (typeof value === 'boolean') return value === false;
  return false;
}

/** @param {protobuf.Field} field @param {any} value */
function toProtoValue(field, value) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return toProtoMessage(resolved, value);
  if (resolved instanceof protobuf.Enum) return typeof value === 'string' ? resolved.values[value] : value;
  if (field.type === 'bytes') {
    if (typeof value !== 'string') return value;
    return Buffer.from(value, ID_FIELDS.has(field.name) ? 'hex' : 'base64');
  }
  if (LONG_TYPES.has(field.type)) return Long.fromValue(value, UNSIGNED_LONG_TYPES.has(field.type));
  if (field.type === 'double' || field.type === 'float') return Number(value);
  return value;
}

/** @param {protobuf.Type} type @param {any} object */
function toProtoMessage(type, object) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    if (isDefaultValue(field, value)) continue;
    out[field.name] = field.repeated ? value.map((/** @type {any} */ v) => toProtoValue(field, v)) : toProtoValue(field, value);
  }
  return out;
}

/**
 * Turns a canonical request (docs/internals.md) into an object protobufjs encodes as-is: hex ids and
 * base64 bytes become buffers, decimal 64-bit strings become Longs, and proto3 defaults are left out
 * (as exporters leave them off the wire).
 * @param {SignalRef} signal
 * @param {any} canonicalRequest
 * @returns {Record<string, any>}
 */
export function toProtoObject(signal, canonicalRequest) {
  return toProtoMessage(requestType(signal), canonicalRequest);
}

/**
 * @param {SignalRef} signal
 * @param {any} canonicalRequest
 * @returns {Uint8Array}
 */
export function encodeRequest(signal, canonicalRequest) {
  const type = requestType(signal);
  return type.encode(toProtoMessage(type, canonicalRequest)).finish();
}

const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: true, arrays: true, oneofs: false };

/** @type {Map<protobuf.Type, any>} */
const defaultsByType = new Map();

/** The canonical form of an unset sub-message: every field at its default, recursively. @param {protobuf.Type} type */
function defaultMessage(type) {
  let value = defaultsByType.get(type);
  if (value === undefined) {
    value = normalise(type, type.toObject(type.create({}), TO_OBJECT));
    defaultsByType.set(type, value);
  }
  return structuredClone(value);
}

/** @param {protobuf.Field} field @param {any} value */
function normaliseValue(field, value) {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return value === null ? defaultMessage(resolved) : normalise(resolved, value);
  if (field.type === 'bytes' && ID_FIELDS.has(field.name)) return Buffer.from(value, 'base64').toString('hex');
  return value;
}

/** @param {protobuf.Type} type @param {any} object */
function normalise(type, object) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    if (REFERENCE_FIELDS.has(`${type.name}.${field.name}`)) continue;
    if (field.partOf && (value === undefined || value === null)) continue;
    out[field.name] = field.repeated ? value.map((/** @type {any} */ v) => normaliseValue(field, v)) : normaliseValue(field, value);
  }
  return out;
}

/**
 * The reference decoding: protobufjs `decode` + `toObject`, normalised to the canonical model.
 * Slow, and independent of the decoders under decode/ by construction.
 * @param {SignalRef} signal
 * @param {Uint8Array} bytes
 * @returns {any}
 */
export function oracleDecode(signal, bytes) {
  const type = requestType(signal);
  return normalise(type, type.toObject(type.decode(bytes), TO_OBJECT));
}
