// Refusals a client can loop on are answered at a pace (server/transport/pace.js); these measure a flood of them.

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
