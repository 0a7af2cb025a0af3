// A forward target as a user gives it (--forward, POST /api/forward), checked and with its defaults filled in.
import { describe } from '../faults/rules.js';
import { SIGNAL_LIST } from '../otlp/signals.js';

/**
 * @typedef {'grpc'|'http'} UpstreamTransport
 * @typedef {'received'|'protobuf'|'json'} UpstreamEncoding
 *   `received`: the encoding the client sent (OTLP/gRPC always carries protobuf)
 * @typedef {'none'|'gzip'} UpstreamCompression
 * @typedef {{ url: string, transport: UpstreamTransport, tls: boolean, host: string, port: number, basePath: string,
 *   encoding: UpstreamEncoding, compression: UpstreamCompression, headers: Readonly<Record<string, string>> }} TargetSpec
 *   `headers` are set on every upstream call; an empty value removes a header the client sent.
 */

export const ENCODINGS = /** @type {readonly UpstreamEncoding[]} */ (Object.freeze(['received', 'protobuf', 'json']));
export const COMPRESSIONS = /** @type {readonly UpstreamCompression[]} */ (Object.freeze(['none', 'gzip']));

/** @type {Record<string, { transport: UpstreamTransport, tls: boolean, port: number }>} */
const SCHEMES = {
  'grpc:': { transport: 'grpc', tls: false, port: 4317 },
  'grpcs:': { transport: 'grpc', tls: true, port: 443 },
  'http:': { transport: 'http', tls: false, port: 80 },
  'https:': { transport: 'http', tls: true, port: 443 },
};

const OPTIONS = ['url', 'encoding', 'compression', 'headers'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// Printable ASCII: what gRPC metadata carries, and no line break or control can end a header early.
const FORBIDDEN_VALUE = /[^\x20-\x7e]/;
const MAX_URL = 2048;
const MAX_HEADERS = 64;
const MAX_HEADER_CHARS = 8192;

/** A target that cannot be used; `field` names the offending option. */
export class ForwardTargetError extends Error {
  /** @param {string} field @param {string} message */
  constructor(field, message) {
    super(message);
    this.name = 'ForwardTargetError';
    this.field = field;
  }
}

/**
 * @template {string} T
 * @param {Record<string, unknown>} input @param {string} key @param {readonly T[]} allowed @param {T} fallback
 * @returns {T}
 */
function choice(input, key, allowed, fallback) {
  const v = input[key] ?? fallback;
  if (!allowed.includes(/** @type {T} */ (v))) throw new ForwardTargetError(key, `${key} ${describe(v)} is not one of ${allowed.join(', ')}`);
  return /** @type {T} */ (v);
}

/** @param {unknown} v @returns {Readonly<Record<string, string>>} */
function headersOf(v) {
  if (v == null) return Object.freeze({});
  if (typeof v !== 'object' || Array.isArray(v)) throw new ForwardTargetError('headers', 'headers must be an object mapping header names to string values');
  const entries = Object.entries(v);
  if (entries.length > MAX_HEADERS) throw new ForwardTargetError('headers', `headers has ${entries.length} entries, more than ${MAX_HEADERS}`);
  /** @type {Record<string, string>} */
  const out = {};
  let chars = 0;
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new ForwardTargetError(`headers.${rawName}`, `header name ${describe(rawName)} is not a valid HTTP header name`);
    if (typeof value !== 'string') throw new ForwardTargetError(`headers.${rawName}`, `headers.${rawName} must be a string, got ${describe(value)}`);
    if (FORBIDDEN_VALUE.test(value))
      throw new ForwardTargetError(`headers.${rawName}`, `headers.${rawName} must be printable ASCII, without line breaks, tabs or other control characters`);
    chars += name.length + value.length;
    out[name] = value;
  }
  if (chars > MAX_HEADER_CHARS) throw new ForwardTargetError('headers', `headers add up to ${chars} characters, more than ${MAX_HEADER_CHARS}`);
  return Object.freeze(out);
}

/**
 * `name=value` pairs as --forward-header takes them, into a header map (checked by normalizeTarget).
 * @param {string[]} pairs @returns {Record<string, string>}
 */
export function parseHeaderPairs(pairs) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ForwardTargetError('headers', `--forward-header ${describe(pair)} is not NAME=VALUE (an empty VALUE removes the client's header)`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/**
 * Checks a target and fills in its defaults. A string is a URL with every other option at its default.
 * The URL's scheme picks the wire: grpc:// (grpcs:// with TLS) or http:// (https://); an OTLP/HTTP URL is the
 * base the signal paths (/v1/traces, ...) are appended to, as OTEL_EXPORTER_OTLP_ENDPOINT is.
 * @param {unknown} input @returns {TargetSpec}
 */
export function normalizeTarget(input) {
  const given = typeof input === 'string' ? { url: input } : input;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new ForwardTargetError('target', 'a forward target must be a URL or an object such as {"url":"grpc://127.0.0.1:4317"}');
  }
  const target = /** @type {Record<string, unknown>} */ (given);
  for (const key of Object.keys(target)) {
    if (!OPTIONS.includes(key)) throw new ForwardTargetError(key, `${key} is not a forward target option: use ${OPTIONS.join(', ')}`);
  }
  const text = target.url;
  if (typeof text !== 'string' || text === '') throw new ForwardTargetError('url', 'url is required, e.g. grpc://127.0.0.1:4317 or http://127.0.0.1:4318');
  if (text.length > MAX_URL) throw new ForwardTargetError('url', `url is ${text.length} characters long, more than ${MAX_URL}`);
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new ForwardTargetError('url', `url ${describe(text)} is not a URL such as grpc://127.0.0.1:4317 or http://127.0.0.1:4318`);
  }
  const scheme = SCHEMES[url.protocol];
  if (!scheme) throw new ForwardTargetError('url', `url ${describe(text)} has scheme ${url.protocol}; use grpc://, grpcs://, http:// or https://`);
  if (!url.hostname) throw new ForwardTargetError('url', `url ${describe(text)} names no host`);
  if (url.username || url.password) throw new ForwardTargetError('url', 'url must not carry credentials: give them as a header (--forward-header authorization=...)');
  if (url.search || url.hash) throw new ForwardTargetError('url', `url ${describe(text)} must not have a query or fragment`);
  const basePath = url.pathname.replace(/\/+$/, '');
  if (scheme.transport === 'grpc' && basePath !== '') throw new ForwardTargetError('url', `a gRPC url names host and port only, got path ${url.pathname}`);
  if (SIGNAL_LIST.some((s) => basePath.endsWith(s.httpPath))) {
    throw new ForwardTargetError('url', `url ${describe(text)} ends in a signal path: give the base (e.g. ${url.origin}), each signal's path is appended`);
  }
  const encoding = choice(target, 'encoding', ENCODINGS, 'received');
  if (scheme.transport === 'grpc' && encoding === 'json') throw new ForwardTargetError('encoding', 'OTLP/gRPC carries protobuf only: encoding json needs an http:// url');
  return Object.freeze({
    url: `${url.protocol}//${url.host}${basePath}`,
    transport: scheme.transport,
    tls: scheme.tls,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : scheme.port,
    basePath,
    encoding,
    compression: choice(target, 'compression', COMPRESSIONS, 'none'),
    headers: headersOf(target.headers),
  });
}
