// Room for the heap to grow between full collections, for a server whose heap is a store that turns over.
//
// After each full collection V8 lets the old generation grow by a factor it works out from how fast JavaScript
// allocates objects against how fast it marks them. Here objects are allocated slowly (a stored item is a few small
// objects over its request's bytes), so V8 picks its least factor, 1.1. But the request bytes the store keeps, and
// the socket reads they come from, live outside the heap, and V8 counts what they add since the last full collection
// against that same room: at 20,000 items a second they filled it about once a second, and each time a full
// collection marked every stored item. Those collections took about two fifths of the server's CPU.
//
// With room for the heap to grow fourfold (V8's own most, which it takes for a young process; doubling cost a
// fresh server at full speed a fifth of its items per CPU-second), the server spent 80 ms of CPU a second on that
// load instead of 130-165 (`bench/ui-load.js`'s sender, 12,000 spans, 6,000 log records and 2,000 data points a
// second, into full stores), and its RSS peaked 40 MB higher. Past HEAP_UP_TO, V8's own factor applies again: a
// large heap grown fourfold would cost more memory than its collections cost time.
import v8 from 'node:v8';

const MiB = 1024 * 1024;
/** How much the heap may grow past what a full collection kept, in percent: to four times it. */
export const GROWTH_PERCENT = 300;
/** The heap size up to which GROWTH_PERCENT applies. */
export const HEAP_UP_TO = 256 * MiB;
const CHECK_EVERY_MS = 2000;
const FLAG = '--heap-growing-percent';

/**
 * Lets the heap grow fourfold between full collections while it is under HEAP_UP_TO, checking every few seconds; V8's own
 * factor applies above it, and whenever node was started with the flag itself. For the server's own process (the
 * command line): it sets a flag of the whole process, which an application that embeds a collector keeps for itself.
 * @returns {() => void} stops checking, and leaves the factor to V8 again
 */
export function keepHeapRoom() {
  if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent'))) return () => {};
  let percent = -1;
  const set = (/** @type {number} */ wanted) => {
    if (wanted === percent) return;
    v8.setFlagsFromString(`${FLAG}=${wanted}`);
    percent = wanted;
  };
  const check = () => set(v8.getHeapStatistics().used_heap_size < HEAP_UP_TO ? GROWTH_PERCENT : 0);
  check();
  const timer = setInterval(check, CHECK_EVERY_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    set(0);
  };
}
