import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultRules } from '../../server/faults/rules.js';
import { answerOf, grpcFault, httpFault, partialOf, storesData } from '../../server/faults/wire.js';
import { decodeRetryInfo, decodeStatus } from '../../server/otlp/schema.js';

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/** @param {Record<string, unknown>} input */
function ruleOf(input) {
  const faults = new FaultRules();
  faults.add(input);
  const rule = faults.decide({ signal: 'traces', transport: 'http', headers: {}, request: { resourceSpans: [] } });
  assert.ok(rule);
  return rule;
}

test('throttle over HTTP: 429, Retry-After rounded up to whole seconds, Status with RetryInfo in both encodings', () => {
  const rule = ruleOf({ action: 'throttle', retryAfterMs: 1500 });
  const proto = httpFault(rule, false);
  assert.equal(proto.status, 429);
  assert.deepEqual(proto.headers, { 'content-type': 'application/x-protobuf', 'retry-after': '2' });
  assert.ok(proto.body instanceof Uint8Array);
  const status = decodeStatus(proto.body);
  assert.equal(status.code, 14);
  assert.equal(status.message, rule.message);
  assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: { retryDelay: { seconds: 1, nanos: 500000000 } } }]);

  const json = httpFault(rule, true);
  assert.equal(json.status, 429);
  assert.deepEqual(json.headers, { 'content-type': 'application/json', 'retry-after': '2' });
  assert.deepEqual(JSON.parse(/** @type {string} */ (json.body)), {
    code: 14,
    message: rule.message,
    details: [{ '@type': RETRY_INFO, retryDelay: '1.500s' }],
  });
});

test('Retry-After: exact seconds stay as they are, 1 ms rounds up to 1 s', () => {
  assert.equal(httpFault(ruleOf({ action: 'throttle', retryAfterMs: 3000 }), false).headers['retry-after'], '3');
  assert.equal(httpFault(ruleOf({ action: 'throttle', retryAfterMs: 1 }), false).headers['retry-after'], '1');
  assert.equal(httpFault(ruleOf({ action: 'throttle', retryAfterMs: 0 }), false).headers['retry-after'], '0');
});

test('unavailable: 503, no Retry-After or RetryInfo unless retryAfterMs is set', () => {
  const plain = httpFault(ruleOf({ action: 'unavailable' }), false);
  assert.equal(plain.status, 503);
  assert.equal(plain.headers['retry-after'], undefined);
  assert.deepEqual(decodeStatus(/** @type {Uint8Array} */ (plain.body)).details, []);
  const timed = httpFault(ruleOf({ action: 'unavailable', retryAfterMs: 2000 }), true);
  assert.equal(timed.headers['retry-after'], '2');
  assert.equal(JSON.parse(/** @type {string} */ (timed.body)).details[0].retryDelay, '2s');
});

test('reject: 400 with a BadRequest detail, no Retry-After', () => {
  const rule = ruleOf({ action: 'reject', message: 'span name must not be empty' });
  const proto = httpFault(rule, false);
  assert.equal(proto.status, 400);
  assert.equal(proto.headers['retry-after'], undefined);
  const status = decodeStatus(/** @type {Uint8Array} */ (proto.body));
  assert.equal(status.code, 3);
  assert.equal(status.message, 'span name must not be empty');
  assert.equal(status.details.length, 1);
  assert.equal(status.details[0].typeUrl, BAD_REQUEST);
  assert.equal(/** @type {any} */ (status.details[0].value).fieldViolations[0].description, 'span name must not be empty');
  const json = JSON.parse(/** @type {string} */ (httpFault(rule, true).body));
  assert.equal(json.details[0]['@type'], BAD_REQUEST);
});

test('status: the given HTTP status and gRPC code', () => {
  const rule = ruleOf({ action: 'status', httpStatus: 418, grpcCode: 'DATA_LOSS', message: 'teapot' });
  const http = httpFault(rule, true);
  assert.equal(http.status, 418);
  assert.deepEqual(JSON.parse(/** @type {string} */ (http.body)), { code: 15, message: 'teapot' });
  const grpc = grpcFault(rule);
  assert.equal(grpc.code, 15);
  assert.equal(grpc.details, 'teapot');
  assert.equal(decodeStatus(/** @type {Buffer} */ (grpc.metadata.get('grpc-status-details-bin')[0])).code, 15);
  assert.deepEqual(grpc.metadata.get('google.rpc.retryinfo-bin'), []);
});

test('throttle over gRPC: UNAVAILABLE, status details with the same code and one RetryInfo, and retryinfo-bin', () => {
  const rule = ruleOf({ action: 'throttle', retryAfterMs: 2500 });
  const fault = grpcFault(rule);
  assert.equal(fault.code, 14);
  assert.equal(fault.details, rule.message);
  const [statusBytes] = fault.metadata.get('grpc-status-details-bin');
  assert.ok(Buffer.isBuffer(statusBytes));
  const status = decodeStatus(statusBytes);
  assert.equal(status.code, fault.code);
  assert.equal(status.message, rule.message);
  assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: { retryDelay: { seconds: 2, nanos: 500000000 } } }]);
  const [retryBytes] = fault.metadata.get('google.rpc.retryinfo-bin');
  assert.deepEqual(decodeRetryInfo(/** @type {Buffer} */ (retryBytes)), { retryDelay: { seconds: 2, nanos: 500000000 } });
});

test('throttle with RESOURCE_EXHAUSTED keeps the code in the status details', () => {
  const fault = grpcFault(ruleOf({ action: 'throttle', grpcCode: 8 }));
  assert.equal(fault.code, 8);
  const status = decodeStatus(/** @type {Buffer} */ (fault.metadata.get('grpc-status-details-bin')[0]));
  assert.equal(status.code, 8);
  assert.equal(status.details[0].typeUrl, RETRY_INFO);
});

test('reject over gRPC: INVALID_ARGUMENT with BadRequest, no RetryInfo', () => {
  const fault = grpcFault(ruleOf({ action: 'reject' }));
  assert.equal(fault.code, 3);
  const status = decodeStatus(/** @type {Buffer} */ (fault.metadata.get('grpc-status-details-bin')[0]));
  assert.deepEqual(status.details.map((d) => d.typeUrl), [BAD_REQUEST]);
  assert.deepEqual(fault.metadata.get('google.rpc.retryinfo-bin'), []);
});

test('answers are built once per rule; gRPC metadata is a fresh copy per call', () => {
  const rule = ruleOf({ action: 'throttle' });
  assert.equal(httpFault(rule, false), httpFault(rule, false));
  assert.notEqual(httpFault(rule, false), httpFault(rule, true));
  const a = grpcFault(rule);
  const b = grpcFault(rule);
  assert.notEqual(a.metadata, b.metadata);
  a.metadata.set('x-extra', '1');
  assert.deepEqual(b.metadata.get('x-extra'), []);
  assert.deepEqual(grpcFault(rule).metadata.get('x-extra'), []);
});

test('partial: the payload for the export response', () => {
  assert.deepEqual(partialOf(ruleOf({ action: 'partial', rejectItems: 3, message: 'too long' })), { rejected: 3, errorMessage: 'too long' });
  const fallback = partialOf(ruleOf({ action: 'partial' }));
  assert.equal(fallback.rejected, 1);
  assert.match(fallback.errorMessage, /rejected 1 item\(s\) \(otlp-mock fault f1\)/);
});

test('answer kinds and storage per action, and misuse is refused', () => {
  const kinds = ['unavailable', 'throttle', 'reject', 'partial', 'delay', 'reset', 'hang'].map((action) => {
    const rule = ruleOf({ action });
    return [action, answerOf(rule), storesData(rule)];
  });
  assert.deepEqual(kinds, [
    ['unavailable', 'error', false],
    ['throttle', 'error', false],
    ['reject', 'error', false],
    ['partial', 'partial', true],
    ['delay', 'delay', true],
    ['reset', 'reset', false],
    ['hang', 'hang', false],
  ]);
  assert.throws(() => httpFault(ruleOf({ action: 'partial' }), true), /not answered with an error/);
  assert.throws(() => grpcFault(ruleOf({ action: 'hang' })), /not answered with an error/);
  assert.throws(() => partialOf(ruleOf({ action: 'reject' })), /not a partial success/);
});
