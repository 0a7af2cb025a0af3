// Every string otlp-mock puts on a wire is one that wire can carry: fault messages with lone surrogates, line breaks
// and controls, an upstream's text passed on to the client, and headers sent on to a forward target.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTestCollector } from '../helpers/collector.js';
import { createExporter } from '../helpers/exporters.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { rawRequest } from '../helpers/http.js';
import { encodeOtlpRequest, readFields } from '../helpers/otlp-pb.js';
import { GRPC_SERVICE, sampleRequest } from '../helpers/payloads.js';
import { decodeRetryInfo, decodeStatus } from '../../server/otlp/schema.js';
import { grpcMessage, headerValueFits, wellFormed } from '../../server/otlp/text.js';
import { upstreamHeaders } from '../../server/forward/headers.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** google.protobuf.Duration's largest value, 10,000 years, in seconds. */
const MAX_DURATION_S = 315_576_000_000;

/** Messages no wire carries as they are, with what the client is told. */
const MESSAGES = [
  { name: 'a lone high surrogate', given: 'bad \ud800 news', told: 'bad \ufffd news' },
  { name: 'a lone low surrogate and a pair', given: '\udc00 then \ud83d\ude00', told: '\ufffd then \ud83d\ude00' },
  { name: 'CR, LF and a header after them', given: 'line\r\nx-injected: 1', told: 'line\r\nx-injected: 1' },
  { name: 'C0 and C1 controls', given: 'nul\u0000 esc\u001b[2J del\u007f csi\u009b31m', told: 'nul\u0000 esc\u001b[2J del\u007f csi\u009b31m' },
  { name: 'per cent signs and URI escapes', given: '100% done, %2F stays, %zz too', told: '100% done, %2F stays, %zz too' },
  { name: 'reserved URI characters and non-ASCII', given: 'a/b?c=d&e#f;g@h ünï 日本', told: 'a/b?c=d&e#f;g@h ünï 日本' },
];

/** grpc-message decoded as the gRPC specification says (percent-decoding of UTF-8 bytes), not as grpc-js does. @param {string} wire */
function specDecode(wire) {
  const bytes = [];
  for (let i = 0; i < wire.length; i++) {
    if (wire[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(wire.slice(i + 1, i + 3))) {
      bytes.push(parseInt(wire.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(wire.charCodeAt(i));
  }
  return strictUtf8.decode(new Uint8Array(bytes));
}

describe('text as each wire carries it', () => {
  test('wellFormed replaces lone surrogates only', () => {
    assert.equal(wellFormed('a\ud800b\udc00c\ud83d\ude00'), 'a\ufffdb\ufffdc\ud83d\ude00');
    assert.equal(wellFormed('\udbff\ud800\udc00'), '\ufffd\ud800\udc00');
    assert.equal(wellFormed('plain'), 'plain');
  });

  for (const { name, given, told } of MESSAGES) {
    test(`grpc-message of ${name}: printable ASCII, decoded alike by the specification and by grpc-js`, () => {
      const wire = grpcMessage(given);
      assert.match(wire, /^[\x20-\x7e]*$/);
      assert.doesNotMatch(wire, /%(?![0-9A-F]{2})/);
      assert.equal(specDecode(wire), told);
      assert.equal(decodeURI(wire), told);
    });
  }

  test('header values: HTTP takes tab and obs-text, gRPC printable ASCII only; neither a line break or control', () => {
    for (const wire of /** @type {const} */ (['http', 'grpc'])) {
      assert.equal(headerValueFits('Bearer abc-123', wire), true);
      for (const bad of ['a\r\nb', 'a\nb', 'a\0b', 'a\u0001b', 'a\u007fb', 'a\u0100b', 'a\ud800b']) assert.equal(headerValueFits(bad, wire), false, JSON.stringify(bad));
    }
    assert.equal(headerValueFits('caf\u00e9\tx', 'http'), true);
    assert.equal(headerValueFits('caf\u00e9', 'grpc'), false);
    assert.equal(headerValueFits('a\tb', 'grpc'), false);
  });

  test('client headers the upstream wire cannot carry are left out; the others go on', () => {
    const received = { 'x-ok': 'fine', 'x-latin': 'caf\u00e9', 'x-ctl': 'a\u0001b', 'x-list': ['a', 'b'] };
    assert.deepEqual(upstreamHeaders(received, 'grpc', {}), { 'x-ok': 'fine', 'x-list': 'a, b' });
    assert.deepEqual(upstreamHeaders(received, 'http', {}), { 'x-ok': 'fine', 'x-latin': 'caf\u00e9', 'x-list': 'a, b' });
  });
});

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {ReturnType<typeof rawGrpcClient>} */
let grpcClient;
/** @type {http.Server} answers as `answer` says */
let upstream;
/** @type {(req: http.IncomingMessage, res: http.ServerResponse) => unknown} */
let answer = (_req, res) => res.end();

before(async () => {
  collector = await startTestCollector({ forwardTimeoutMs: 5000 });
  grpcClient = rawGrpcClient(collector.urls.grpc);
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', () => resolve(undefined)));
});
after(async () => {
  grpcClient.close();
  await collector.stop();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(() => resolve(undefined)));
});
beforeEach(async () => {
  await collector.api('/api/faults', { method: 'DELETE' });
  await collector.api('/api/forward', { method: 'DELETE' });
});

/** @param {Record<string, unknown>} rule @returns {Promise<any>} */
function addFault(rule) {
  return collector.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) });
}

/** @param {string} service */
function exportGrpc(service) {
  return grpcClient.exportRaw(GRPC_SERVICE.traces, encodeOtlpRequest('traces', sampleRequest('traces', { service })), { timeoutMs: 5000 });
}

/** @param {string} service @param {boolean} json */
function exportHttp(service, json) {
  const request = sampleRequest('traces', { service });
  return rawRequest(collector.urls.http + '/v1/traces', {
    headers: { 'content-type': json ? 'application/json' : 'application/x-protobuf' },
    body: json ? JSON.stringify(request) : Buffer.from(encodeOtlpRequest('traces', request)),
  });
}

/** The message of a google.rpc.Status in protobuf, read as strict UTF-8. @param {Uint8Array} body */
function protobufMessage(body) {
  const field = readFields(body).find((f) => f.field === 2);
  return field ? strictUtf8.decode(/** @type {Uint8Array} */ (field.value)) : '';
}

/** The message of a google.rpc.Status in JSON: the body is strict UTF-8 and names no lone surrogate. @param {Buffer} body */
function jsonMessage(body) {
  const text = strictUtf8.decode(body);
  assert.doesNotMatch(text, /\\u[dD][89a-fA-F]/, 'no surrogate escapes, paired or not');
  return JSON.parse(text).message;
}

describe('fault messages on every wire', () => {
  test('a rule with a lone surrogate in its message is kept with U+FFFD in its place', async () => {
    const res = await fetch(collector.urls.ui + '/api/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"action":"unavailable","message":"bad \\ud800 news"}',
    });
    assert.equal(res.status, 201);
    const rule = await res.json();
    assert.equal(rule.message, 'bad \ufffd news');
    assert.equal((await collector.api(`/api/faults/${rule.id}`)).message, 'bad \ufffd news');
  });

  for (const { name, given, told } of MESSAGES) {
    test(`${name}: gRPC gets the fault's code and message, its Status detail the same`, async () => {
      await addFault({ action: 'status', grpcCode: 'FAILED_PRECONDITION', httpStatus: 400, message: given });
      const { error } = await exportGrpc('sanitize-grpc');
      assert.ok(error, 'the call fails');
      assert.equal(error.code, grpcStatus.FAILED_PRECONDITION, error.details);
      assert.equal(error.details, told);
      const status = decodeStatus(/** @type {Buffer} */ (error.metadata.get('grpc-status-details-bin')[0]));
      assert.deepEqual([status.code, status.message], [grpcStatus.FAILED_PRECONDITION, told]);
    });

    test(`${name}: HTTP gets the fault's status and a valid google.rpc.Status in JSON and protobuf`, async () => {
      await addFault({ action: 'reject', message: given });
      const json = await exportHttp('sanitize-http', true);
      assert.equal(json.status, 400);
      assert.equal(json.headers['content-type'], 'application/json');
      assert.equal(jsonMessage(json.body), told);
      const proto = await exportHttp('sanitize-http', false);
      assert.equal(proto.status, 400);
      assert.equal(proto.headers['content-type'], 'application/x-protobuf');
      assert.equal(protobufMessage(proto.body), told);
      const detail = decodeStatus(proto.body).details[0];
      assert.equal(/** @type {any} */ (detail.value).fieldViolations[0].description, told);
    });
  }

  test('partial success over gRPC and HTTP: the error message arrives well-formed', async () => {
    await addFault({ action: 'partial', rejectItems: 1, message: 'half \ud800\r\n%' });
    const grpcAnswer = await exportGrpc('sanitize-partial');
    assert.equal(grpcAnswer.error, null);
    const json = await exportHttp('sanitize-partial', true);
    assert.equal(json.status, 200);
    assert.equal(JSON.parse(strictUtf8.decode(json.body)).partialSuccess.errorMessage, 'half \ufffd\r\n%');
  });

  test('an official gRPC exporter gets the fault code and the message', async () => {
    diag.setLogger({ error() {}, warn() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.NONE);
    await addFault({ action: 'unavailable', message: 'down \ud800 for now', times: 1 });
    const exporter = createExporter('traces', { wire: 'grpc', compression: 'none' }, { grpc: collector.urls.grpc, http: collector.urls.http });
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'sanitize-sdk' }), spanProcessors: [new SimpleSpanProcessor(memory)] });
    provider.getTracer('sanitize').startSpan('op').end();
    await provider.forceFlush();
    /** @type {{ code: number, error?: any }} */
    const result = await new Promise((resolve) => exporter.export(memory.getFinishedSpans(), resolve));
    await exporter.shutdown();
    await provider.shutdown();
    assert.equal(result.code, ExportResultCode.FAILED);
    assert.equal(result.error?.code, grpcStatus.UNAVAILABLE, String(result.error));
    assert.equal(result.error?.details, 'down \ufffd for now');
  });
});

describe('an upstream answer passed on to the client', () => {
  const upstreamUrl = () => `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (upstream.address()).port}`;

  /** @param {string} encoding */
  async function forwardTo(encoding) {
    const res = await fetch(collector.urls.ui + '/api/forward', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: upstreamUrl(), encoding }),
    });
    assert.equal(res.status, 201, await res.text());
  }

  test('a JSON Status with a lone surrogate and an endless Retry-After: both wires answer, hints within range', async () => {
    await forwardTo('json');
    answer = (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '9'.repeat(400) });
      res.end('{"code":14,"message":"upstream \\ud800 busy"}');
    };
    const { error } = await exportGrpc('sanitize-upstream');
    assert.ok(error);
    assert.equal(error.code, grpcStatus.UNAVAILABLE, error.details);
    assert.equal(error.details, 'upstream \ufffd busy');
    const retry = decodeRetryInfo(/** @type {Buffer} */ (error.metadata.get('google.rpc.retryinfo-bin')[0]));
    assert.equal(Number(retry.retryDelay.seconds), MAX_DURATION_S);

    const json = await exportHttp('sanitize-upstream', true);
    assert.equal(json.status, 503);
    assert.equal(json.headers['retry-after'], String(MAX_DURATION_S));
    assert.equal(jsonMessage(json.body), 'upstream \ufffd busy');
  });

  test('a client header a gRPC upstream cannot carry is left out, and the request still goes through', async () => {
    const grpcUpstream = await startTestCollector();
    try {
      const target = `grpc://${new URL(grpcUpstream.urls.grpc).host}`;
      const added = await fetch(collector.urls.ui + '/api/forward', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: target }),
      });
      assert.equal(added.status, 201, await added.text());
      const res = await rawRequest(collector.urls.http + '/v1/traces', {
        headers: { 'content-type': 'application/json', 'x-latin': 'caf\u00e9', 'x-plain': 'ok' },
        body: JSON.stringify(sampleRequest('traces', { service: 'sanitize-headers' })),
      });
      assert.equal(res.status, 200, res.body.toString());
      const [entry] = await grpcUpstream.waitForCount('requests', 'signal=traces', 1);
      assert.equal(entry.headers['x-plain'], 'ok');
      assert.equal(entry.headers['x-latin'], undefined);
    } finally {
      await grpcUpstream.stop();
    }
  });

  test('a target header that is not printable ASCII is refused when the target is added', async () => {
    for (const value of ['a\r\nb', 'tab\there', 'esc\u001b', 'csi\u009b', 'caf\u00e9', 'lone\ud800']) {
      const res = await fetch(collector.urls.ui + '/api/forward', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: upstreamUrl(), headers: { 'x-tenant': value } }),
      });
      assert.equal(res.status, 400, JSON.stringify(value));
      const body = await res.json();
      assert.equal(body.field, 'headers.x-tenant');
      assert.match(body.error, /printable ASCII/);
    }
  });
});
