import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultRules, filtersPass, normalizeRule } from '../../server/faults/rules.js';
import { RuleIndex } from '../../server/faults/rule-index.js';
import { seededRandom } from '../helpers/random.js';
import { SIGNALS as ROWS, SIGNAL_NAMES } from '../../server/otlp/signals.js';

const SIGNALS = SIGNAL_NAMES;
const TRANSPORTS = ['http', 'grpc'];
const NAMES = ['x-team', 'x-env', 'x-never'];
const VALUES = ['a', 'b', 'c'];
const SERVICES = ['checkout', 'cart'];

/** @param {() => number} random @param {readonly string[]} list */
const pick = (random, list) => list[Math.floor(random() * list.length)];
/** @param {() => number} random @param {readonly string[]} list */
const some = (random, list) => {
  const chosen = list.filter(() => random() < 0.5);
  return chosen.length ? chosen : [pick(random, list)];
};

/** @param {() => number} random */
function randomRule(random) {
  /** @type {Record<string, unknown>} */
  const input = { action: 'unavailable' };
  if (random() < 0.3) input.side = 'upstream';
  if (random() < 0.5) input.signals = some(random, SIGNALS);
  if (random() < 0.5) input.transports = some(random, TRANSPORTS);
  const headers = Object.fromEntries(NAMES.filter(() => random() < 0.4).map((name) => [name, pick(random, VALUES)]));
  const resource = random() < 0.3 ? { 'service.name': pick(random, SERVICES) } : undefined;
  input.match = { headers, resource };
  return input;
}

/** @param {() => number} random */
function randomContext(random) {
  /** @type {Record<string, string|string[]>} */
  const headers = {};
  for (const name of NAMES) {
    const r = random();
    if (r < 0.4) headers[name] = pick(random, VALUES);
    else if (r < 0.55) headers[name] = [pick(random, VALUES), pick(random, VALUES)];
  }
  const signal = pick(random, SIGNALS);
  const root = ROWS[/** @type {import('../../server/otlp/signals.js').SignalName} */ (signal)].rootField;
  const service = pick(random, SERVICES);
  return {
    signal,
    transport: pick(random, TRANSPORTS),
    side: random() < 0.3 ? 'upstream' : random() < 0.5 ? 'client' : undefined,
    headers,
    request: { [root]: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] } }] },
  };
}

/** @param {unknown} input @param {number} i */
function entryOf(input, i) {
  const rule = normalizeRule(input, `f${i}`, 1000);
  return { rule, headers: Object.entries(rule.match.headers), resource: Object.entries(rule.match.resource), matched: 0, applied: 0 };
}

test('the index selects exactly the rules the linear scan selected, in the same order', () => {
  const random = seededRandom(22);
  for (let round = 0; round < 200; round++) {
    const entries = Array.from({ length: Math.floor(random() * 40) }, (_, i) => entryOf(randomRule(random), i));
    const index = new RuleIndex(entries);
    for (let k = 0; k < 50; k++) {
      const ctx = /** @type {any} */ (randomContext(random));
      const linear = entries.filter((e) => e.rule.side === (ctx.side ?? 'client') && filtersPass(e, ctx));
      const candidates = index.candidates(ctx);
      assert.deepEqual(
        candidates.filter((e) => filtersPass(e, ctx)),
        linear,
      );
      const places = candidates.map((e) => entries.indexOf(e));
      assert.deepEqual(
        places,
        [...places].sort((a, b) => a - b),
        'candidates come in checking order',
      );
      assert.equal(new Set(candidates).size, candidates.length, 'no rule is a candidate twice');
    }
  }
});

test('rules keyed on a header the request does not carry are not looked at', () => {
  const entries = Array.from({ length: 500 }, (_, i) => entryOf({ action: 'unavailable', match: { headers: { 'x-never': String(i) } } }, i));
  entries.push(entryOf({ action: 'throttle', signals: ['logs'] }, 500));
  const index = new RuleIndex(entries);
  assert.deepEqual(index.candidates({ signal: 'traces', transport: 'http', headers: { 'content-type': 'application/x-protobuf' } }), []);
  assert.deepEqual(index.candidates({ signal: 'logs', transport: 'grpc', headers: {} }), [entries[500]]);
  assert.deepEqual(index.candidates({ signal: 'logs', transport: 'grpc', headers: { 'x-never': ['7', '3'] } }), [entries[3], entries[7], entries[500]]);
});

test('decide still takes the first matching rule after rules are added and removed', () => {
  const faults = new FaultRules();
  faults.add({ action: 'unavailable', match: { headers: { 'x-env': 'prod' } } });
  const second = faults.add({ action: 'throttle' });
  const third = faults.add({ action: 'unavailable', match: { headers: { 'x-env': 'dev', 'x-team': 'a' } } });
  const request = { resourceSpans: [] };
  assert.equal(faults.decide({ signal: 'traces', transport: 'http', headers: { 'x-env': 'prod' }, request })?.id, 'f1');
  faults.remove('f1');
  assert.equal(faults.decide({ signal: 'traces', transport: 'http', headers: { 'x-env': 'prod' }, request })?.id, second.id);
  faults.remove(second.id);
  assert.equal(faults.decide({ signal: 'traces', transport: 'grpc', headers: { 'x-env': 'dev' }, request }), null);
  assert.equal(faults.decide({ signal: 'traces', transport: 'grpc', headers: { 'x-env': 'dev', 'x-team': 'a' }, request })?.id, third.id);
});
