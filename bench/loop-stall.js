// Loaded with --import into the server that npm run soak starts: the event loop's longest stall since the last
// question, asked and answered over the IPC channel, so that the server's own code carries no measuring hook.
//
// Beside it, how long the main thread ran during the longest gap between two ticks of a timer, from the kernel's
// count of the thread's CPU time (/proc schedstat): on two cores shared with the attacker and the load generator, a
// stall that ran 16 of its 53 ms was mostly the machine's (waiting for a core, steal), not the server's work.
import { closeSync, openSync, readSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

const TICK_MS = 10;
const line = Buffer.alloc(128);
/** @type {number|null} */
let schedstat = null;
try {
  schedstat = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
} catch {
  // Not Linux: the stall is answered alone.
}

/** The main thread's CPU time so far, in ms; NaN where it cannot be read. */
function ranMs() {
  if (schedstat === null) return NaN;
  const n = readSync(schedstat, line, 0, line.length, 0);
  return Number(line.toString('latin1', 0, n).split(' ')[0]) / 1e6;
}

let longestGap = 0;
let ranInLongestGap = NaN;
let lastTick = performance.now();
let lastRan = ranMs();
setInterval(() => {
  const now = performance.now();
  const ran = ranMs();
  if (now - lastTick > longestGap) {
    longestGap = now - lastTick;
    ranInLongestGap = ran - lastRan;
  }
  lastTick = now;
  lastRan = ran;
}, TICK_MS).unref();

process.on('message', (message) => {
  if (message !== 'stall') return;
  process.send?.({ stallMs: delay.max / 1e6, ranMs: ranInLongestGap });
  delay.reset();
  longestGap = 0;
  ranInLongestGap = NaN;
});
process.on('exit', () => schedstat !== null && closeSync(schedstat));
