import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `check` until it returns a truthy value (which is returned) or the deadline passes.
 * A throwing check counts as "not yet"; its last error is reported on timeout.
 * @template T
 * @param {() => T | Promise<T>} check
 * @param {{ timeoutMs?: number, intervalMs?: number, what?: string }} [options]
 * @returns {Promise<Exclude<T, null | undefined | false | 0 | ''>>} the first truthy value
 */
export async function waitFor(check, { timeoutMs = 5000, intervalMs = 15, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  /** @type {unknown} */
  let lastError;
  /** @type {unknown} */
  let lastValue;
  for (;;) {
    try {
      const value = await check();
      if (value) return /** @type {Exclude<T, null | undefined | false | 0 | ''>} */ (value);
      lastValue = value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = lastError ? `: last error ${String(/** @type {any} */ (lastError)?.stack ?? lastError)}` : ` (last value ${JSON.stringify(lastValue)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await delay(intervalMs);
  }
}
