import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultRules } from '../../server/faults/rules.js';
import { answerOf, faultAnswer, partialOf, storesData } from '../../server/faults/wire.js';
import { decodeRetryInfo, decodeStatus } from '../../server/otlp/schema.js';

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/** A gRPC trailer's bytes, as a client decodes them. @param {{ trailers: Readonly<Record<string, string>> }} answer @param {string} name */
function trailer(answer, name) {
  const value = answer.trailers[name];
  return value === undefined ? undefined : Buffer.from(value, 'base64');
}

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
  const proto = faultAnswer(rule, 'http', false);
  assert.equal(proto.status, 429);
  assert.deepEqual(proto.headers, { 'content-type': 'application/x-protobuf', 'retry-after': '2' });
  assert.ok(proto.body instanceof Uint8Array);
  const status = decodeStatus(proto.body);
  assert.equal(status.code, 14);
  assert.equal(status.message, rule.message);
  assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: { retryDelay: { seconds: 1, nanos: 500000000 } } }]);

  const json = faultAnswer(rule, 'http', true);
  assert.equal(json.status, 429);
  assert.deepEqual(json.headers, { 'content-type': 'application/json', 'retry-after': '2' });
  assert.deepEqual(JSON.parse(String(json.body)), {
    code: 14,
    message: rule.message,
    details: [{ '@type': RETRY_INFO, retryDelay: '1.500s' }],
  });
});

test('Retry-After: exact seconds stay as they are, 1 ms rounds up to 1 s', () => {
  assert.equal(faultAnswer(ruleOf({ action: 'throttle', retryAfterMs: 3000 }), 'http', false).headers['retry-after'], '3');
  assert.equal(faultAnswer(ruleOf({ action: 'throttle', retryAfterMs: 1 }), 'http', false).headers['retry-after'], '1');
  assert.equal(faultAnswer(ruleOf({ action: 'throttle', retryAfterMs: 0 }), 'http', false).headers['retry-after'], '0');
});

test('unavailable: 503, no Retry-After or RetryInfo unless retryAfterMs is set', () => {
  const plain = faultAnswer(ruleOf({ action: 'unavailable' }), 'http', false);
  assert.equal(plain.status, 503);
  assert.equal(plain.headers['retry-after'], undefined);
  assert.deepEqual(decodeStatus(/** @type {Uint8Array} */ (plain.body)).details, []);
  const timed = faultAnswer(ruleOf({ action: 'unavailable', retryAfterMs: 2000 }), 'http', true);
  assert.equal(timed.headers['retry-after'], '2');
  assert.equal(JSON.parse(String(timed.body)).details[0].retryDelay, '2s');
});

test('reject: 400 with a BadRequest detail, no Retry-After', () => {
  const rule = ruleOf({ action: 'reject', message: 'span name must not be empty' });
  const proto = faultAnswer(rule, 'http', false);
  assert.equal(proto.status, 400);
  assert.equal(proto.headers['retry-after'], undefined);
  const status = decodeStatus(/** @type {Uint8Array} */ (proto.body));
  assert.equal(status.code, 3);
  assert.equal(status.message, 'span name must not be empty');
  assert.equal(status.details.length, 1);
  assert.equal(status.details[0].typeUrl, BAD_REQUEST);
  assert.equal(/** @type {any} */ (status.details[0].value).fieldViolations[0].description, 'span name must not be empty');
  const json = JSON.parse(String(faultAnswer(rule, 'http', true).body));
  assert.equal(json.details[0]['@type'], BAD_REQUEST);
});

test('status: the given HTTP status and gRPC code', () => {
  const rule = ruleOf({ action: 'status', httpStatus: 418, grpcCode: 'DATA_LOSS', message: 'teapot' });
  const http = faultAnswer(rule, 'http', true);
  assert.equal(http.status, 418);
  assert.deepEqual(JSON.parse(String(http.body)), { code: 15, message: 'teapot' });
  const grpc = faultAnswer(rule, 'grpc');
  assert.equal(grpc.status, 15);
  assert.equal(grpc.message, 'teapot');
  assert.equal(decodeStatus(/** @type {Buffer} */ (trailer(grpc, 'grpc-status-details-bin'))).code, 15);
  assert.equal(trailer(grpc, 'google.rpc.retryinfo-bin'), undefined);
});

test('throttle over gRPC: UNAVAILABLE, status details with the same code and one RetryInfo, and retryinfo-bin', () => {
  const rule = ruleOf({ action: 'throttle', retryAfterMs: 2500 });
  const fault = faultAnswer(rule, 'grpc');
  assert.equal(fault.status, 14);
  assert.equal(fault.message, rule.message);
  const statusBytes = trailer(fault, 'grpc-status-details-bin');
  assert.ok(Buffer.isBuffer(statusBytes));
  const status = decodeStatus(statusBytes);
  assert.equal(status.code, fault.status);
  assert.equal(status.message, rule.message);
  assert.deepEqual(status.details, [{ typeUrl: RETRY_INFO, value: { retryDelay: { seconds: 2, nanos: 500000000 } } }]);
  const retryBytes = trailer(fault, 'google.rpc.retryinfo-bin');
  assert.deepEqual(decodeRetryInfo(/** @type {Buffer} */ (retryBytes)), { retryDelay: { seconds: 2, nanos: 500000000 } });
});

test('throttle with RESOURCE_EXHAUSTED keeps the code in the status details', () => {
  const fault = faultAnswer(ruleOf({ action: 'throttle', grpcCode: 8 }), 'grpc');
  assert.equal(fault.status, 8);
  const status = decodeStatus(/** @type {Buffer} */ (trailer(fault, 'grpc-status-details-bin')));
  assert.equal(status.code, 8);
  assert.equal(status.details[0].typeUrl, RETRY_INFO);
});

test('reject over gRPC: INVALID_ARGUMENT with BadRequest, no RetryInfo', () => {
  const fault = faultAnswer(ruleOf({ action: 'reject' }), 'grpc');
  assert.equal(fault.status, 3);
  const status = decodeStatus(/** @type {Buffer} */ (trailer(fault, 'grpc-status-details-bin')));
  assert.deepEqual(
    status.details.map((d) => d.typeUrl),
    [BAD_REQUEST],
  );
  assert.equal(trailer(fault, 'google.rpc.retryinfo-bin'), undefined);
});

test('answers are built once per rule and shared, so nothing can change them', () => {
  const rule = ruleOf({ action: 'throttle' });
  assert.equal(faultAnswer(rule, 'http', false), faultAnswer(rule, 'http', false));
  assert.notEqual(faultAnswer(rule, 'http', false), faultAnswer(rule, 'http', true));
  const a = faultAnswer(rule, 'grpc');
  assert.equal(a, faultAnswer(rule, 'grpc'));
  assert.throws(() => {
    /** @type {Record<string, string>} */ (a.trailers)['x-extra'] = '1';
  }, TypeError);
  assert.equal(faultAnswer(rule, 'grpc').trailers['x-extra'], undefined);
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
  assert.throws(() => faultAnswer(ruleOf({ action: 'partial' }), 'http', true), /not answered with an error/);
  assert.throws(() => faultAnswer(ruleOf({ action: 'hang' }), 'grpc'), /not answered with an error/);
  assert.throws(() => partialOf(ruleOf({ action: 'reject' })), /not a partial success/);
});

test('throttle over OTAP: RESOURCE_EXHAUSTED with the wait in the message, unless the rule names another code', () => {
  const throttle = ruleOf({ action: 'throttle', retryAfterMs: 1500 });
  assert.deepEqual(faultAnswer(throttle, 'otap'), { status: 8, message: `${throttle.message} (retry after 1.5 s)` });
  assert.equal(faultAnswer(throttle, 'grpc').status, 14, 'gRPC keeps UNAVAILABLE, whose RetryInfo exporters honour');
  assert.equal(faultAnswer(ruleOf({ action: 'throttle', grpcCode: 'ABORTED' }), 'otap').status, 10);
  assert.equal(faultAnswer(ruleOf({ action: 'unavailable' }), 'otap').status, 14);
});
