// What each wire does with each verdict: the table the HTTP and gRPC receivers carry out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { FaultRules } from '../../server/faults/rules.js';
import { planOf } from '../../server/faults/wire.js';
import { signalByName } from '../../server/otlp/signals.js';
import { decodeStatus } from '../../server/otlp/schema.js';

const traces = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('traces'));
const HANG_LIMIT_MS = 30_000;

/** @param {Record<string, unknown>} input */
function ruleOf(input) {
  const faults = new FaultRules();
  faults.add(input);
  const rule = faults.decide({ signal: 'traces', transport: 'http', headers: {}, request: { resourceSpans: [] } });
  assert.ok(rule);
  return rule;
}

test('a plain success is answered at once, from one plan built per wire, encoding and signal', () => {
  const accepted = /** @type {const} */ ({ kind: 'accepted', partial: null, delayMs: 0 });
  const http = planOf(accepted, 'http', traces, true, HANG_LIMIT_MS);
  assert.equal(http, planOf({ ...accepted }, 'http', traces, true, HANG_LIMIT_MS));
  assert.notEqual(http, planOf(accepted, 'http', traces, false, HANG_LIMIT_MS));
  assert.equal(http.holdMs, 0);
  assert.ok(!('drop' in http.then));
  assert.deepEqual([http.then.status, http.then.message, http.then.outcome, http.then.partial], [200, 'OK', 'accepted', null]);
  assert.deepEqual(http.then.headers, { 'content-type': 'application/json' });
  assert.equal(http.then.body.toString(), '{"partialSuccess":{}}');

  const grpc = planOf(accepted, 'grpc', traces, false, HANG_LIMIT_MS);
  assert.equal(grpc, planOf(accepted, 'grpc', traces, false, HANG_LIMIT_MS));
  assert.ok(!('drop' in grpc.then));
  assert.deepEqual([grpc.then.status, grpc.then.message, grpc.then.outcome], [status.OK, 'OK', 'accepted']);
  assert.ok(grpc.then.response instanceof Uint8Array);
  assert.deepEqual(grpc.then.trailers, {});
});

test('a delay holds the answer; a client that leaves meanwhile is journaled abandoned', () => {
  for (const wire of /** @type {const} */ (['http', 'grpc'])) {
    const plan = planOf({ kind: 'accepted', partial: null, delayMs: 1500 }, wire, traces, false, HANG_LIMIT_MS);
    assert.equal(plan.holdMs, 1500);
    assert.equal(plan.ifGone, 'abandoned');
    assert.ok(!('drop' in plan.then));
    assert.equal(plan.then.outcome, 'accepted');
  }
});

test('partial success: OK with the message, journaled partial', () => {
  const partial = { rejected: 2, errorMessage: 'two too long' };
  for (const wire of /** @type {const} */ (['http', 'grpc'])) {
    const { then } = planOf({ kind: 'accepted', partial, delayMs: 0 }, wire, traces, false, HANG_LIMIT_MS);
    assert.ok(!('drop' in then));
    assert.deepEqual([then.status, then.message, then.outcome, then.partial], [wire === 'http' ? 200 : status.OK, 'two too long', 'partial', partial]);
  }
});

test('refusals: 400 / INVALID_ARGUMENT and 413 / RESOURCE_EXHAUSTED with a Status body and no trailers', () => {
  const invalid = planOf({ kind: 'invalid', message: 'bad bytes' }, 'http', traces, false, HANG_LIMIT_MS).then;
  assert.ok(!('drop' in invalid));
  assert.deepEqual([invalid.status, invalid.message, invalid.outcome], [400, 'bad bytes', 'rejected']);
  assert.deepEqual(decodeStatus(invalid.body), { code: status.INVALID_ARGUMENT, message: 'bad bytes', details: [] });
  const tooLarge = planOf({ kind: 'tooLarge', message: 'too big' }, 'grpc', traces, false, HANG_LIMIT_MS).then;
  assert.ok(!('drop' in tooLarge));
  assert.deepEqual([tooLarge.status, tooLarge.message, tooLarge.outcome, tooLarge.response], [status.RESOURCE_EXHAUSTED, 'too big', 'rejected', null]);
  assert.deepEqual(tooLarge.trailers, {});
});

test("a fault is answered with its rule's error, journaled faulted unless the verdict says otherwise", () => {
  const rule = ruleOf({ action: 'throttle', retryAfterMs: 2000 });
  const http = planOf({ kind: 'fault', rule }, 'http', traces, true, HANG_LIMIT_MS).then;
  assert.ok(!('drop' in http));
  assert.deepEqual([http.status, http.message, http.outcome, http.headers['retry-after']], [429, rule.message, 'faulted', '2']);
  const grpc = planOf({ kind: 'fault', rule, outcome: 'rejected' }, 'grpc', traces, false, HANG_LIMIT_MS).then;
  assert.ok(!('drop' in grpc));
  assert.deepEqual([grpc.status, grpc.outcome], [status.UNAVAILABLE, 'rejected']);
  assert.deepEqual(Object.keys(grpc.trailers), ['grpc-status-details-bin', 'google.rpc.retryinfo-bin']);
});

test('reset drops the connection at once on every wire', () => {
  const rule = ruleOf({ action: 'reset' });
  for (const wire of /** @type {const} */ (['http', 'grpc'])) {
    const plan = planOf({ kind: 'reset', rule }, wire, traces, false, HANG_LIMIT_MS);
    assert.equal(plan.holdMs, 0);
    assert.deepEqual(plan.then, { drop: 'reset', outcome: 'reset' });
  }
});

test('hang holds until the limit: then HTTP closes the connection and gRPC answers DEADLINE_EXCEEDED', () => {
  const rule = ruleOf({ action: 'hang' });
  const http = planOf({ kind: 'hang', rule }, 'http', traces, false, HANG_LIMIT_MS);
  assert.deepEqual([http.holdMs, http.ifGone], [HANG_LIMIT_MS, 'hang']);
  assert.deepEqual(http.then, { drop: 'close', outcome: 'hang' });
  const grpc = planOf({ kind: 'hang', rule }, 'grpc', traces, false, HANG_LIMIT_MS);
  assert.deepEqual([grpc.holdMs, grpc.ifGone], [HANG_LIMIT_MS, 'hang']);
  assert.ok(!('drop' in grpc.then));
  assert.deepEqual([grpc.then.status, grpc.then.message, grpc.then.outcome], [status.DEADLINE_EXCEEDED, 'hang limit reached', 'hang']);
});
