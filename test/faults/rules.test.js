import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultRules, FaultRuleError } from '../../server/faults/rules.js';
import { seededRandom as seeded } from '../helpers/random.js';

/** @param {string} service */
function tracesFrom(service) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }], droppedAttributesCount: 0, entityRefs: [] },
        scopeSpans: [],
        schemaUrl: '',
      },
    ],
  };
}

/** @param {Partial<import('../../server/faults/rules.js').FaultContext>} [over] @returns {import('../../server/faults/rules.js').FaultContext} */
function ctx(over = {}) {
  return { signal: 'traces', transport: 'http', headers: {}, request: tracesFrom('checkout'), ...over };
}

/** @param {FaultRules} faults @param {number} n @param {import('../../server/faults/rules.js').FaultContext} [c] */
function decideMany(faults, n, c = ctx()) {
  return Array.from({ length: n }, () => faults.decide(c)?.id ?? null);
}

test('no rules: every request passes', () => {
  const faults = new FaultRules();
  assert.equal(faults.decide(ctx()), null);
  assert.deepEqual(faults.list(), []);
});

test('defaults are filled in and shown with the counters', () => {
  const faults = new FaultRules();
  const rule = faults.add({ action: 'throttle' });
  assert.deepEqual(rule, {
    id: 'f1',
    action: 'throttle',
    side: 'client',
    signals: ['traces', 'metrics', 'logs', 'profiles'],
    transports: ['http', 'grpc', 'otap'],
    match: { resource: {}, headers: {} },
    times: null,
    after: 0,
    probability: 1,
    httpStatus: 429,
    grpcCode: 14,
    retryAfterMs: 1000,
    message: 'too many requests, retry later (otlp-mock fault f1)',
    matched: 0,
    applied: 0,
    remaining: null,
    spent: false,
  });
  assert.equal(faults.add({ action: 'partial' }).rejectItems, 1);
  assert.equal(faults.add({ action: 'delay' }).delayMs, 1000);
  assert.equal(faults.add({ action: 'unavailable' }).retryAfterMs, null);
  const reject = faults.add({ action: 'reject' });
  assert.equal(reject.httpStatus, 400);
  assert.equal(reject.grpcCode, 3);
});

test('status fills in the other wire from the one given', () => {
  const faults = new FaultRules();
  const http = faults.add({ action: 'status', httpStatus: 502 });
  assert.equal(http.grpcCode, 14);
  const grpc = faults.add({ action: 'status', grpcCode: 'resource_exhausted' });
  assert.equal(grpc.grpcCode, 8);
  assert.equal(grpc.httpStatus, 429);
  const both = faults.add({ action: 'status', httpStatus: 418, grpcCode: 2, retryAfterMs: 250 });
  assert.deepEqual([both.httpStatus, both.grpcCode, both.retryAfterMs], [418, 2, 250]);
});

test('ids are unique per instance and never reused', () => {
  const a = new FaultRules();
  const b = new FaultRules();
  assert.equal(a.add({ action: 'reset' }).id, 'f1');
  assert.equal(b.add({ action: 'reset' }).id, 'f1');
  assert.equal(a.add({ action: 'reset' }).id, 'f2');
  a.clear();
  assert.equal(a.size, 0);
  assert.equal(a.add({ action: 'reset' }).id, 'f3');
  assert.equal(a.remove('f3'), true);
  assert.equal(a.remove('f3'), false);
});

test('rules are checked in insertion order and the first match decides', () => {
  const faults = new FaultRules();
  faults.add({ action: 'reject', signals: ['logs'] });
  const first = faults.add({ action: 'unavailable' });
  faults.add({ action: 'throttle' });
  assert.equal(faults.decide(ctx())?.id, first.id);
  assert.equal(faults.decide(ctx({ signal: 'logs', request: { resourceLogs: [] } }))?.id, 'f1');
  const states = faults.list();
  assert.deepEqual(
    states.map((r) => [r.id, r.matched, r.applied]),
    [
      ['f1', 1, 1],
      ['f2', 1, 1],
      ['f3', 0, 0],
    ],
  );
});

test('signals and transports filter', () => {
  const faults = new FaultRules();
  faults.add({ action: 'reset', signals: 'metrics', transports: ['grpc'] });
  assert.equal(faults.decide(ctx({ signal: 'metrics', transport: 'http', request: { resourceMetrics: [] } })), null);
  assert.equal(faults.decide(ctx({ signal: 'traces', transport: 'grpc' })), null);
  assert.equal(faults.decide(ctx({ signal: 'metrics', transport: 'grpc', request: { resourceMetrics: [] } }))?.action, 'reset');
});

test('times: the first N faults, then the rule is spent and the next rule decides', () => {
  const faults = new FaultRules();
  faults.add({ action: 'throttle', times: 2 });
  faults.add({ action: 'unavailable', times: 1 });
  assert.deepEqual(decideMany(faults, 5), ['f1', 'f1', 'f2', null, null]);
  const [throttle, unavailable] = faults.list();
  assert.deepEqual(
    { matched: throttle.matched, applied: throttle.applied, remaining: throttle.remaining, spent: throttle.spent },
    { matched: 2, applied: 2, remaining: 0, spent: true },
  );
  assert.equal(unavailable.spent, true);
});

test('after: the first N matching requests pass untouched, then the rule applies', () => {
  const faults = new FaultRules();
  faults.add({ action: 'unavailable', after: 2, times: 2 });
  assert.deepEqual(decideMany(faults, 6), [null, null, 'f1', 'f1', null, null]);
  const [state] = faults.list();
  assert.equal(state.matched, 4);
  assert.equal(state.spent, true);
});

test('after counts only requests that match the rule', () => {
  const faults = new FaultRules();
  faults.add({ action: 'reject', after: 1, match: { resource: { 'service.name': 'checkout' } } });
  const other = ctx({ request: tracesFrom('cart') });
  assert.equal(faults.decide(other), null);
  assert.equal(faults.decide(ctx()), null);
  assert.equal(faults.decide(other), null);
  assert.equal(faults.decide(ctx())?.id, 'f1');
});

test('probability uses the injected generator', () => {
  const values = [0.9, 0.2, 0.5, 0.29, 0.3];
  const faults = new FaultRules({ random: () => /** @type {number} */ (values.shift()) });
  faults.add({ action: 'unavailable', probability: 0.3 });
  assert.deepEqual(decideMany(faults, 5), [null, 'f1', null, 'f1', null]);
  assert.equal(faults.list()[0].matched, 5);
});

test('probability with a seeded generator faults about that share, the same way every run', () => {
  const run = () => {
    const faults = new FaultRules({ random: seeded(42) });
    faults.add({ action: 'unavailable', probability: 0.25 });
    return decideMany(faults, 2000);
  };
  const first = run();
  assert.deepEqual(run(), first);
  const reference = seeded(42);
  const expected = Array.from({ length: 2000 }, () => (reference() < 0.25 ? 'f1' : null));
  assert.deepEqual(first, expected);
  const share = first.filter(Boolean).length / first.length;
  assert.ok(share > 0.2 && share < 0.3, `share ${share}`);
});

test('a rule that cannot fire by chance lets the next rule decide', () => {
  const faults = new FaultRules({ random: () => 0.99 });
  faults.add({ action: 'unavailable', probability: 0.5 });
  faults.add({ action: 'throttle' });
  assert.equal(faults.decide(ctx())?.action, 'throttle');
});

test('match on the resource attribute service.name, on any resource of the request', () => {
  const faults = new FaultRules();
  faults.add({ action: 'reject', match: { resource: { 'service.name': 'checkout' } } });
  assert.equal(faults.decide(ctx({ request: tracesFrom('cart') })), null);
  assert.equal(faults.decide(ctx())?.id, 'f1');
  const mixed = { resourceSpans: [...tracesFrom('cart').resourceSpans, ...tracesFrom('checkout').resourceSpans] };
  assert.equal(faults.decide(ctx({ request: mixed }))?.id, 'f1');
  assert.equal(faults.decide(ctx({ request: { resourceSpans: [] } })), null);
});

test('match on resource attributes compares scalars as text and needs every pair', () => {
  const faults = new FaultRules();
  faults.add({ action: 'reject', signals: ['logs'], match: { resource: { 'host.port': '8080', canary: 'true' } } });
  /** @param {any[]} attributes */
  const logs = (attributes) => ({ resourceLogs: [{ resource: { attributes }, scopeLogs: [] }] });
  const port = { key: 'host.port', value: { intValue: '8080' } };
  const canary = { key: 'canary', value: { boolValue: true } };
  assert.equal(faults.decide(ctx({ signal: 'logs', request: logs([port]) })), null);
  assert.equal(faults.decide(ctx({ signal: 'logs', request: logs([port, canary]) }))?.id, 'f1');
});

test('match on a header; names are case-insensitive', () => {
  const faults = new FaultRules();
  faults.add({ action: 'throttle', match: { headers: { 'X-Tenant': 'a' } } });
  assert.deepEqual(faults.list()[0].match.headers, { 'x-tenant': 'a' });
  assert.equal(faults.decide(ctx()), null);
  assert.equal(faults.decide(ctx({ headers: { 'x-tenant': 'b' } })), null);
  assert.equal(faults.decide(ctx({ headers: { 'x-tenant': 'a' } }))?.id, 'f1');
  assert.equal(faults.decide(ctx({ headers: { 'x-tenant': ['b', 'a'] } }))?.id, 'f1');
});

test('a burst of 200 concurrent requests against times: 10 faults exactly 10', async () => {
  const faults = new FaultRules();
  faults.add({ action: 'throttle', times: 10 });
  const decisions = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      await new Promise((resolve) => setImmediate(resolve));
      return faults.decide(ctx({ headers: { 'x-request': String(i) } }));
    }),
  );
  assert.equal(decisions.filter(Boolean).length, 10);
  const [state] = faults.list();
  assert.deepEqual([state.matched, state.applied, state.remaining, state.spent], [10, 10, 0, true]);
});

test('decide returns the same frozen rule object each time', () => {
  const faults = new FaultRules();
  faults.add({ action: 'partial', rejectItems: 3 });
  const a = faults.decide(ctx());
  assert.ok(a && Object.isFrozen(a));
  assert.equal(faults.decide(ctx()), a);
});

/** @type {[string, unknown, string, RegExp][]} */
const BAD_RULES = [
  ['unknown action', { action: 'explode' }, 'action', /unknown.*unavailable, throttle/],
  ['missing action', { times: 1 }, 'action', /required/],
  ['not an object', ['unavailable'], 'rule', /JSON object/],
  ['unknown option', { action: 'throttle', retryAfter: 5 }, 'retryAfter', /not a fault rule option/],
  ['option of another action', { action: 'throttle', delayMs: 5 }, 'delayMs', /does not apply to action throttle/],
  ['negative times', { action: 'unavailable', times: -1 }, 'times', /at least 1/],
  ['times 0', { action: 'unavailable', times: 0 }, 'times', /at least 1.*got 0/],
  ['fractional times', { action: 'unavailable', times: 1.5 }, 'times', /whole number/],
  ['negative after', { action: 'unavailable', after: -2 }, 'after', /negative/],
  ['negative retryAfterMs', { action: 'throttle', retryAfterMs: -1000 }, 'retryAfterMs', /negative/],
  ['negative delayMs', { action: 'delay', delayMs: -1 }, 'delayMs', /negative/],
  ['delayMs past the hang limit', { action: 'delay', delayMs: 300001 }, 'delayMs', /at most 300000/],
  ['negative rejectItems', { action: 'partial', rejectItems: -3 }, 'rejectItems', /negative/],
  ['string number', { action: 'unavailable', times: '2' }, 'times', /must be a number/],
  ['httpStatus 200 for an error action', { action: 'reject', httpStatus: 200 }, 'httpStatus', /400 to 599/],
  ['httpStatus 600', { action: 'status', httpStatus: 600 }, 'httpStatus', /400 to 599/],
  ['grpcCode 0', { action: 'status', grpcCode: 0 }, 'grpcCode', /1 to 16/],
  ['grpcCode 17', { action: 'status', grpcCode: 17 }, 'grpcCode', /1 to 16/],
  ['unknown grpcCode name', { action: 'status', grpcCode: 'BROKEN' }, 'grpcCode', /gRPC status code name such as UNAVAILABLE, got "BROKEN"/],
  ['status without codes', { action: 'status' }, 'httpStatus', /httpStatus .* grpcCode/],
  ['probability 0', { action: 'unavailable', probability: 0 }, 'probability', /greater than 0/],
  ['probability above 1', { action: 'unavailable', probability: 1.5 }, 'probability', /at most 1/],
  ['unknown signal', { action: 'unavailable', signals: ['spans'] }, 'signals', /"spans".*traces, metrics, logs/],
  ['empty signals', { action: 'unavailable', signals: [] }, 'signals', /non-empty/],
  ['unknown transport', { action: 'unavailable', transports: 'udp' }, 'transports', /http, grpc/],
  ['match not an object', { action: 'reject', match: 'service.name=x' }, 'match', /object/],
  ['match with an unknown key', { action: 'reject', match: { attributes: {} } }, 'match.attributes', /resource.*headers/],
  ['match value not a string', { action: 'reject', match: { resource: { 'service.name': 1 } } }, 'match.resource.service.name', /string/],
  ['match headers not a map', { action: 'reject', match: { headers: ['x-a'] } }, 'match.headers', /object mapping/],
  ['message not a string', { action: 'reject', message: 42 }, 'message', /string/],
];

for (const [name, input, field, message] of BAD_RULES) {
  test(`bad rule: ${name} names the field ${field}`, () => {
    const faults = new FaultRules();
    assert.throws(
      () => faults.add(input),
      (/** @type {any} */ err) => {
        assert.ok(err instanceof FaultRuleError);
        assert.equal(err.field, field);
        assert.match(err.message, message);
        return true;
      },
    );
    assert.equal(faults.size, 0);
  });
}

test('a null number option is refused, not taken as left out', () => {
  const faults = new FaultRules();
  /** @type {[string, RegExp][]} */
  const cases = [
    ['times', /^times must be .*, got null/],
    ['retryAfterMs', /^retryAfterMs must be a number, got null/],
    ['probability', /^probability must be .*, got null/],
    ['delayMs', /^delayMs does not apply to action throttle/],
  ];
  for (const [key, message] of cases)
    assert.throws(
      () => faults.add({ action: 'throttle', [key]: null }),
      (/** @type {any} */ err) => err.field === key && message.test(err.message),
    );
  assert.equal(faults.size, 0);
  const rule = faults.add({ action: 'throttle' });
  assert.equal(rule.times, null);
  assert.equal(rule.retryAfterMs, 1000);
  assert.equal(rule.probability, 1);
});

test('constructor refuses a bad hang limit or generator', () => {
  assert.throws(() => new FaultRules({ hangLimitMs: 0 }), /hangLimitMs/);
  assert.throws(() => new FaultRules({ random: /** @type {any} */ (0.5) }), /random/);
  assert.equal(new FaultRules({ hangLimitMs: 2000 }).hangLimitMs, 2000);
});
