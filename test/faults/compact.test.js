import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FAULT_HELP, loadFaultsFile, parseFault } from '../../server/faults/compact.js';
import { FaultRuleError, FaultRules } from '../../server/faults/rules.js';

/** @param {() => unknown} fn @param {string} field @param {RegExp} message */
async function rejects(fn, field, message) {
  await assert.rejects(
    async () => fn(),
    (/** @type {any} */ err) => {
      assert.ok(err instanceof FaultRuleError, String(err));
      assert.equal(err.field, field);
      assert.match(err.message, message);
      return true;
    },
  );
}

test('action alone', () => {
  assert.deepEqual(parseFault('reset'), { action: 'reset' });
  assert.deepEqual(parseFault('hang:'), { action: 'hang' });
});

test('numbers, lists and the documented example', () => {
  assert.deepEqual(parseFault('unavailable:signals=traces,times=2,retryAfterMs=1000'), {
    action: 'unavailable',
    signals: ['traces'],
    times: 2,
    retryAfterMs: 1000,
  });
  assert.deepEqual(parseFault('status:httpStatus=502,grpcCode=UNAVAILABLE,probability=0.25,transports=http+grpc'), {
    action: 'status',
    httpStatus: 502,
    grpcCode: 'UNAVAILABLE',
    probability: 0.25,
    transports: ['http', 'grpc'],
  });
});

test('match keys: resource attributes (dotted names) and headers', () => {
  const input = parseFault('throttle:signals=traces+logs,match.service.name=checkout,match.header.X-Tenant=a,match.resource.header.kind=b');
  assert.deepEqual(input, {
    action: 'throttle',
    signals: ['traces', 'logs'],
    match: { resource: { 'service.name': 'checkout', 'header.kind': 'b' }, headers: { 'x-tenant': 'a' } },
  });
  const rule = new FaultRules().add(input);
  assert.deepEqual(rule.match, input.match);
  assert.deepEqual(parseFault('reject:match.headers.x-a=1').match, { resource: {}, headers: { 'x-a': '1' } });
});

test('values keep "=" and escaped commas', () => {
  assert.deepEqual(parseFault('reject:message=bad data\\, see docs: a=b'), { action: 'reject', message: 'bad data, see docs: a=b' });
});

test('errors say which part was wrong', async () => {
  await rejects(() => parseFault(''), 'action', /starts with an action/);
  await rejects(() => parseFault('explode:times=1'), 'action', /^--fault "explode:times=1": action "explode" is unknown/);
  await rejects(() => parseFault('unavailable:times'), 'rule', /"times" is not OPTION=VALUE/);
  await rejects(() => parseFault('unavailable:times=x'), 'times', /in "times=x": times must be a number, got "x"/);
  await rejects(() => parseFault('unavailable:times=0'), 'times', /in "times=0": times must be .*at least 1/);
  await rejects(() => parseFault('unavailable:times=1,times=2'), 'times', /given twice/);
  await rejects(() => parseFault('reject:httpStatus=200'), 'httpStatus', /in "httpStatus=200".*400 to 599/);
  await rejects(() => parseFault('throttle:probability=0'), 'probability', /in "probability=0"/);
  await rejects(() => parseFault('throttle:signals=traces+spans'), 'signals', /in "signals=traces\+spans".*"spans"/);
  await rejects(() => parseFault('throttle:colour=red'), 'colour', /in "colour=red": colour is not a fault rule option/);
  await rejects(() => parseFault('throttle:match.=x'), 'match.', /names no attribute/);
  await rejects(() => parseFault('delay:delayMs=5000', { hangLimitMs: 1000 }), 'delayMs', /at most 1000/);
});

test('FAULT_HELP documents every action and option with an example', () => {
  for (const word of [
    'unavailable',
    'throttle',
    'reject',
    'status',
    'partial',
    'delay',
    'reset',
    'hang',
    'side=upstream',
    'signals',
    'transports',
    'match.header.',
    'times',
    'after',
    'probability',
    'retryAfterMs',
    'delayMs',
    'httpStatus',
    'grpcCode',
    'rejectItems',
    'message',
    '--faults-file',
  ]) {
    assert.ok(FAULT_HELP.includes(word), word);
  }
  const examples = FAULT_HELP.split('\n').filter((l) => /^\s+--fault [a-z]/.test(l));
  assert.equal(examples.length, 4);
  for (const line of examples) parseFault(line.trim().slice('--fault '.length));
});

test('faults file: a JSON array of rules, each validated', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'otlp-mock-faults-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = (/** @type {string} */ name, /** @type {string} */ text) => {
    const p = path.join(dir, name);
    return writeFile(p, text).then(() => p);
  };
  const rules = [
    { action: 'throttle', signals: ['traces'], times: 2, retryAfterMs: 1000 },
    { action: 'partial', rejectItems: 2 },
  ];
  assert.deepEqual(await loadFaultsFile(await file('good.json', JSON.stringify(rules))), rules);
  assert.deepEqual(await loadFaultsFile(await file('empty.json', '[]')), []);

  await rejects(() => loadFaultsFile(path.join(dir, 'missing.json')), 'file', /missing\.json.*ENOENT/);
  await rejects(async () => loadFaultsFile(await file('broken.json', '[{')), 'file', /broken\.json is not valid JSON/);
  await rejects(async () => loadFaultsFile(await file('object.json', '{"action":"reset"}')), 'file', /must hold a JSON array/);
  await rejects(
    async () => loadFaultsFile(await file('bad.json', JSON.stringify([{ action: 'reset' }, { action: 'reject', httpStatus: 200 }]))),
    'httpStatus',
    /bad\.json, rule 2: httpStatus must be an error status/,
  );
});
