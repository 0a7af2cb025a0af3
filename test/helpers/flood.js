// Refusals a client can loop on are answered at a pace (server/transport/pace.js); these measure a flood of them.
import assert from 'node:assert/strict';

/**
 * Starts `count` requests at once: `all` resolves with their results and how long the last took to be answered.
 * @template T @param {number} count @param {() => Promise<T>} one
 * @returns {{ all: Promise<{ results: T[], ms: number }>, pending: () => number }}
 */
export function flood(count, one) {
  const started = performance.now();
  let left = count;
  const all = Promise.all(
    Array.from({ length: count }, () =>
      one().finally(() => {
        left--;
      }),
    ),
  ).then((results) => ({ results, ms: performance.now() - started }));
  return { all, pending: () => left };
}

/**
 * The least time a flood of `count` refusals takes at `perSecond` after a burst of as many, with a tenth off for
 * the clock's and the sockets' own leeway. @param {number} count @param {number} perSecond
 */
export const pacedMs = (count, perSecond) => ((count - perSecond) / perSecond) * 1000 * 0.9;

/**
 * Asserts a flood's outcome: every result is `expected` (a status, a code), and it took at least its pace.
 * @template T @param {{ results: T[], ms: number }} outcome @param {number} count @param {number} perSecond @param {T} expected
 */
export function assertPaced({ results, ms }, count, perSecond, expected) {
  assert.deepEqual(new Set(results), new Set([expected]));
  assert.ok(ms >= pacedMs(count, perSecond), `${count} refusals were answered in ${ms.toFixed(0)} ms`);
}

/**
 * Floods `count` refusals made by `refuse` and, while they wait, makes the request `beside` makes (and checks):
 * the flood is still waiting once that one is answered, and its outcome is paced (`assertPaced`), each refusal's
 * `answerOf` being `expected`.
 * @template T, A
 * @param {{ count: number, perSecond: number, refuse: () => Promise<T>, answerOf: (result: T) => A, expected: A, beside: () => Promise<void> }} flooding
 */
export async function pacedBeside({ count, perSecond, refuse, answerOf, expected, beside }) {
  const refusals = flood(count, refuse);
  await beside();
  assert.ok(refusals.pending() > 0, 'the flood was all answered before the request beside it');
  const { results, ms } = await refusals.all;
  assertPaced({ results: results.map(answerOf), ms }, count, perSecond, expected);
}
