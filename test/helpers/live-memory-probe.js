// Loaded into a child process with `node --expose-gc --import`: every 250 ms it collects garbage and prints the bytes
// still reachable. Resident memory's peak also counts garbage not yet collected, whose amount depends on the
// machine's load and the collector's timing; what a process holds on to is the live figure.
const gc = /** @type {() => void} */ (globalThis.gc);
if (typeof gc !== 'function') throw new Error('live-memory-probe needs node --expose-gc');
setInterval(() => {
  gc();
  const { heapUsed, external } = process.memoryUsage();
  process.stderr.write(`live-bytes ${heapUsed + external}\n`);
}, 250).unref();
