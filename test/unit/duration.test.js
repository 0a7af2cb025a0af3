// Durations from epoch-nanosecond strings are exact: the numbers themselves are past what a double holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durationNs } from '../../server/query/filters.js';

const exact = (/** @type {string} */ start, /** @type {string} */ end) => Number(BigInt(end) - BigInt(start));

test('a duration between epoch nanoseconds is exact to the nanosecond', () => {
  for (const [start, end] of [
    ['1700000000000000001', '1700000000000000257'],
    ['1700000000000000000', '1700000000000001000'],
    ['1699999999999999999', '1700000000000000100'],
    ['1700000000000000500', '1700000000000000100'],
    ['999999999999999', '1000000000000000000'],
    ['12', '30'],
  ]) {
    assert.equal(durationNs(start, end), exact(start, end), `${start} → ${end}`);
  }
});

test('an unset timestamp gives no duration', () => {
  assert.equal(durationNs('0', '1700000000000000257'), 0);
  assert.equal(durationNs('1700000000000000257', '0'), 0);
});

test('a 1 µs filter boundary is judged on the exact duration', () => {
  // As doubles both ends round to the same value and the span would measure 0 ns, or 256 ns off either way.
  assert.equal(durationNs('1700000000000000001', '1700000000000001001'), 1000);
});
