// The pieces of forward mode that need no socket: target validation, header propagation, reading an upstream's
// answer, and what the client is told in turn.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardTargetError, normalizeTarget, parseHeaderPairs } from '../../server/forward/target.js';
import { upstreamHeaders } from '../../server/forward/headers.js';
import { clientAnswerOf, partialOf, retryAfterOf, statusOf } from '../../server/forward/answer.js';
import { FaultRuleError, FaultRules } from '../../server/faults/rules.js';
import { encodeExportResponse, encodeStatus, exportResponseJson, retryInfoDetail, statusJson } from '../../server/otlp/schema.js';
import { signalByName } from '../../server/otlp/signals.js';

const traces = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));

/** @param {unknown} input @param {string} field @param {RegExp} message */
function refused(input, field, message) {
  assert.throws(
    () => normalizeTarget(input),
    (err) => err instanceof ForwardTargetError && err.field === field && message.test(err.message),
    `${JSON.stringify(input)} should be refused on ${field}`,
  );
}

describe('forward targets', () => {
  test('the scheme picks the wire; defaults are filled in', () => {
    assert.deepEqual(normalizeTarget('grpc://collector:4317'), {
      url: 'grpc://collector:4317',
      transport: 'grpc',
      tls: false,
      host: 'collector',
      port: 4317,
      basePath: '',
      encoding: 'received',
      compression: 'none',
      headers: {},
    });
    assert.equal(normalizeTarget('grpc://collector').port, 4317);
    assert.deepEqual([normalizeTarget('grpcs://collector').tls, normalizeTarget('grpcs://collector').port], [true, 443]);
    const http = normalizeTarget({ url: 'http://[::1]:4318/otlp/', encoding: 'json', compression: 'gzip', headers: { 'X-Tenant': 'a' } });
    assert.deepEqual(
      [http.url, http.transport, http.host, http.port, http.basePath, http.encoding, http.compression, http.headers],
      ['http://[::1]:4318/otlp', 'http', '::1', 4318, '/otlp', 'json', 'gzip', { 'x-tenant': 'a' }],
    );
    assert.equal(normalizeTarget('https://example.test').port, 443);
  });

  test('malformed, wrongly typed and oversized targets are refused with the field named', () => {
    refused(null, 'target', /URL or an object/);
    refused(['grpc://a'], 'target', /URL or an object/);
    refused(42, 'target', /URL or an object/);
    refused({}, 'url', /url is required/);
    refused({ url: 4317 }, 'url', /url is required/);
    refused('', 'url', /url is required/);
    refused('not a url', 'url', /is not a URL/);
    refused(`http://a/${'x'.repeat(3000)}`, 'url', /more than 2048/);
    refused('ftp://collector:21', 'url', /scheme ftp:/);
    refused('unix:///tmp/socket', 'url', /scheme unix:/);
    refused('http://user:secret@collector:4318', 'url', /credentials/);
    refused('http://collector:4318/?tenant=a', 'url', /query or fragment/);
    refused('grpc://collector:4317/v1', 'url', /host and port only/);
    refused('http://collector:4318/v1/traces', 'url', /signal path/);
    refused({ url: 'grpc://a:1', encoding: 'json' }, 'encoding', /protobuf only/);
    refused({ url: 'http://a:1', encoding: 'yaml' }, 'encoding', /not one of received, protobuf, json/);
    refused({ url: 'http://a:1', compression: 'zstd' }, 'compression', /not one of none, gzip/);
    refused({ url: 'http://a:1', protocol: 'grpc' }, 'protocol', /not a forward target option/);
    refused({ url: 'http://a:1', headers: 'x=1' }, 'headers', /object mapping/);
    refused({ url: 'http://a:1', headers: ['x'] }, 'headers', /object mapping/);
    refused({ url: 'http://a:1', headers: { 'bad name': 'x' } }, 'headers.bad name', /not a valid HTTP header name/);
    refused({ url: 'http://a:1', headers: { x: 1 } }, 'headers.x', /must be a string/);
    refused({ url: 'http://a:1', headers: { x: 'a\r\nInjected: 1' } }, 'headers.x', /line breaks/);
    refused({ url: 'http://a:1', headers: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, 'v'])) }, 'headers', /more than 64/);
    refused({ url: 'http://a:1', headers: { big: 'v'.repeat(9000) } }, 'headers', /more than 8192/);
  });

  test('--forward-header pairs', () => {
    assert.deepEqual(parseHeaderPairs(['authorization=Bearer a=b', 'x-drop=']), { authorization: 'Bearer a=b', 'x-drop': '' });
    assert.throws(() => parseHeaderPairs(['novalue']), /NAME=VALUE/);
    assert.throws(() => parseHeaderPairs(['=value']), /NAME=VALUE/);
  });
});

describe('upstream-side fault rules', () => {
  test('side is client by default, upstream on request, and nothing else', () => {
    const faults = new FaultRules();
    assert.equal(faults.add({ action: 'unavailable' }).side, 'client');
    assert.equal(faults.add({ action: 'unavailable', side: 'upstream' }).side, 'upstream');
    for (const side of ['server', 1, ['upstream']])
      assert.throws(
        () => faults.add({ action: 'unavailable', side }),
        (err) => err instanceof FaultRuleError && err.field === 'side',
      );
  });

  test('each side decides only its own calls', () => {
    const faults = new FaultRules();
    const client = faults.add({ action: 'unavailable', transports: ['http'] });
    const upstream = faults.add({ action: 'throttle', side: 'upstream', transports: ['grpc'] });
    const ctx = { signal: /** @type {const} */ ('traces'), headers: {}, request: { resourceSpans: [] } };
    assert.equal(faults.decide({ ...ctx, transport: 'http' })?.id, client.id);
    assert.equal(faults.decide({ ...ctx, transport: 'grpc' }), null);
    assert.equal(faults.decide({ ...ctx, transport: 'grpc', side: 'upstream' })?.id, upstream.id);
    assert.equal(faults.decide({ ...ctx, transport: 'http', side: 'upstream' }), null);
  });
});

describe('what an upstream-side rule counts', () => {
  const ctx = {
    signal: /** @type {const} */ ('traces'),
    transport: /** @type {const} */ ('http'),
    headers: {},
    request: { resourceSpans: [] },
    side: /** @type {const} */ ('upstream'),
  };

  test("per request (the default): a request's calls take the rule once, the first call whose filters pass", () => {
    const faults = new FaultRules();
    const rule = faults.add({ action: 'unavailable', side: 'upstream', times: 2 });
    assert.equal(rule.per, 'request');
    for (let request = 0; request < 3; request++) {
      const decided = new Set();
      const calls = [faults.decide({ ...ctx, decided })?.id ?? null, faults.decide({ ...ctx, decided })?.id ?? null];
      assert.deepEqual(calls, request < 2 ? [rule.id, null] : [null, null], `request ${request + 1}: primary, tee`);
    }
    const [state] = faults.list();
    assert.deepEqual([state.matched, state.applied, state.spent], [2, 2, true]);
  });

  test('per request: a primary the filters leave out lets the tee take it; after counts requests', () => {
    const faults = new FaultRules();
    const rule = faults.add({ action: 'unavailable', side: 'upstream', transports: ['grpc'], after: 1, times: 1 });
    const seen = [];
    for (let request = 0; request < 2; request++) {
      const decided = new Set();
      seen.push([
        faults.decide({ ...ctx, decided })?.id ?? null,
        faults.decide({ ...ctx, transport: 'grpc', decided })?.id ?? null,
        faults.decide({ ...ctx, transport: 'grpc', decided })?.id ?? null,
      ]);
    }
    assert.deepEqual(
      seen,
      [
        [null, null, null],
        [null, rule.id, null],
      ],
      'http primary, then two grpc tees',
    );
  });

  test('per call: each call to each target counts, as a rule says it wants', () => {
    const faults = new FaultRules();
    const rule = faults.add({ action: 'unavailable', side: 'upstream', times: 2, per: 'call' });
    const decided = new Set();
    assert.deepEqual([faults.decide({ ...ctx, decided })?.id, faults.decide({ ...ctx, decided })?.id, faults.decide({ ...ctx, decided })], [rule.id, rule.id, null]);
  });

  test('per is request or call, on the upstream side only', () => {
    const faults = new FaultRules();
    for (const input of [{ side: 'upstream', per: 'target' }, { side: 'upstream', per: 1 }, { per: 'call' }, { side: 'client', per: 'request' }])
      assert.throws(
        () => faults.add({ action: 'unavailable', ...input }),
        (err) => err instanceof FaultRuleError && err.field === 'per',
        JSON.stringify(input),
      );
    assert.equal(faults.add({ action: 'unavailable' }).per, undefined, 'a client-side rule has no per');
  });
});

describe('headers travelling upstream', () => {
  const received = {
    host: 'otlp-mock:4318',
    connection: 'keep-alive',
    'content-type': 'application/json',
    'content-length': '12',
    'content-encoding': 'gzip',
    te: 'trailers',
    'grpc-timeout': '5S',
    'grpc-accept-encoding': 'gzip',
    ':authority': 'otlp-mock',
    'user-agent': 'exporter/1.0',
    authorization: 'Bearer app',
    'x-tenant': 'a',
    'x-list': ['1', '2'],
    'trace-bin': Buffer.from([1, 2]),
  };

  test('end-to-end headers go on; connection, encoding and gRPC framing headers do not', () => {
    assert.deepEqual(upstreamHeaders(received, 'http', {}), { 'user-agent': 'exporter/1.0', authorization: 'Bearer app', 'x-tenant': 'a', 'x-list': '1, 2' });
    assert.deepEqual(upstreamHeaders(received, 'grpc', {}), { authorization: 'Bearer app', 'x-tenant': 'a', 'x-list': '1, 2', 'trace-bin': Buffer.from([1, 2]) });
  });

  test("the target's headers are set over the client's; an empty one removes it", () => {
    assert.deepEqual(upstreamHeaders({ authorization: 'Bearer app', 'x-tenant': 'a' }, 'http', { authorization: '', 'x-tenant': 'b', 'x-new': 'c' }), {
      'x-tenant': 'b',
      'x-new': 'c',
    });
  });
});

describe("reading an upstream's answer", () => {
  test('partial success from protobuf and JSON (either field spelling); full success otherwise', () => {
    const partial = { rejected: 3, errorMessage: 'too old' };
    assert.deepEqual(partialOf(traces, Buffer.from(encodeExportResponse('traces', partial)), false), partial);
    assert.deepEqual(partialOf(traces, Buffer.from(exportResponseJson('traces', partial)), true), partial);
    assert.deepEqual(partialOf(traces, Buffer.from('{"partial_success":{"rejected_spans":2,"error_message":"x"}}'), true), { rejected: 2, errorMessage: 'x' });
    assert.deepEqual(partialOf(traces, Buffer.from('{"partialSuccess":{"errorMessage":"a warning"}}'), true), { rejected: 0, errorMessage: 'a warning' });
    for (const [body, json] of /** @type {[string|Buffer, boolean][]} */ ([
      ['', false],
      ['{"partialSuccess":{}}', true],
      ['{"partialSuccess":{"rejectedSpans":"-5"}}', true],
      ['not json', true],
      ['{"partialSuccess":', true],
      ['null', true],
      ['{"partialSuccess":"yes"}', true],
      [Buffer.from([0x0a, 0xff, 0xff]), false],
      [Buffer.from(encodeExportResponse('traces', partial)).subarray(0, 4), false],
    ]))
      assert.equal(partialOf(traces, Buffer.from(body), json), null, `${body}`);
  });

  test('an error body: google.rpc.Status in either encoding, with its RetryInfo', () => {
    const details = [retryInfoDetail(1500)];
    assert.deepEqual(statusOf(Buffer.from(encodeStatus(14, 'down', details)), false), { code: 14, message: 'down', retryAfterMs: 1500 });
    assert.deepEqual(statusOf(Buffer.from(statusJson(8, 'slow down', details)), true), { code: 8, message: 'slow down', retryAfterMs: 1500 });
    assert.deepEqual(statusOf(Buffer.from('{"code":"x","message":7}'), true), { code: 0, message: '', retryAfterMs: null });
    assert.equal(statusOf(Buffer.from('<html>bad gateway</html>'), true), null);
    assert.equal(statusOf(Buffer.from([0x08, 0x8e]), false), null);
    assert.equal(statusOf(Buffer.alloc(0), false), null);
    const long = statusOf(Buffer.from(statusJson(13, `line\u0000${'m'.repeat(5000)}`)), true);
    assert.ok(long && long.message.length <= 1025 && !long.message.includes('\u0000'));
  });

  test('Retry-After in seconds or as a date', () => {
    assert.equal(retryAfterOf('3'), 3000);
    assert.equal(retryAfterOf(undefined), null);
    assert.equal(retryAfterOf('soon'), null);
    const inTwoSeconds = retryAfterOf(new Date(Date.now() + 2000).toUTCString());
    assert.ok(inTwoSeconds !== null && inTwoSeconds > 500 && inTwoSeconds <= 2000);
    assert.equal(retryAfterOf(new Date(Date.now() - 60_000).toUTCString()), 0);
  });

  test('what the client is told: the same answer, and retryable stays retryable across wires', () => {
    /** @param {number} status @param {number|null} code */
    const fromHttp = (status, code = null) => clientAnswerOf({ kind: 'answer', ok: false, status, code, message: 'm', retryAfterMs: null, partial: null }, 'http');
    /** @param {number} code */
    const fromGrpc = (code) => clientAnswerOf({ kind: 'answer', ok: false, status: code, code, message: 'm', retryAfterMs: 1000, partial: null }, 'grpc');
    const pick = (/** @type {any} */ a) => [a.httpStatus, a.grpcCode];
    assert.deepEqual(pick(fromHttp(429, 8)), [429, 14]);
    assert.deepEqual(pick(fromHttp(503)), [503, 14]);
    assert.deepEqual(pick(fromHttp(502)), [502, 14]);
    assert.deepEqual(pick(fromHttp(504)), [504, 4]);
    assert.deepEqual(pick(fromHttp(400, 3)), [400, 3]);
    assert.deepEqual(pick(fromHttp(401)), [401, 16]);
    assert.deepEqual(pick(fromHttp(500, 99)), [500, 13]);
    assert.deepEqual(pick(fromGrpc(14)), [503, 14]);
    assert.deepEqual(pick(fromGrpc(8)), [429, 8]);
    assert.deepEqual(pick(fromGrpc(4)), [504, 4]);
    assert.deepEqual(pick(fromGrpc(1)), [503, 1]);
    assert.deepEqual(pick(fromGrpc(3)), [400, 3]);
    assert.deepEqual(pick(fromGrpc(16)), [401, 16]);
    assert.equal(/** @type {any} */ (fromGrpc(14)).retryAfterMs, 1000);
    assert.deepEqual(pick(clientAnswerOf({ kind: 'failed', message: 'refused' }, 'grpc')), [502, 14]);
    assert.deepEqual(clientAnswerOf({ kind: 'answer', ok: true, status: 0, code: null, message: 'OK', retryAfterMs: null, partial: null }, 'grpc'), {
      ok: true,
      partial: null,
    });
  });
});
