// Does console output slow ingestion down? Two CLI servers in the same run: one with `--print summary`
// whose stdout is a pipe that nobody reads (after its banner), one with `--print none`. bench/load.js
// drives them in turn, alternating, with 512-span OTLP/HTTP protobuf requests; the figure is the ratio of
// their median throughputs (target >= 0.9), in wall-clock time and, steadier on a busy machine, per
// CPU-second of the server. The printer's own counters (/api/stats) show that it had been dropping
// lines rather than waiting.
//
//   node bench/print.js            (BENCH_QUICK=1 for a short smoke run)
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SPANS_PER_REQUEST } from './workload.js';
import { cpuSeconds } from './cpu.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET_RATIO = 0.9;
const IN_FLIGHT = 4;

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** @param {number} n @param {number} [digits] */
const format = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** @param {string[]} args */
function node(args) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.on('error', () => {});
  return child;
}

/**
 * Reads stdout lines until `accept` returns a value, then stops reading: from then on nobody reads the pipe.
 * @template T
 * @param {import('node:child_process').ChildProcessByStdio<import('node:stream').Writable, import('node:stream').Readable, null>} child @param {(line: string) => T | undefined} accept
 * @returns {Promise<T>}
 */
function readUntil(child, accept) {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const onExit = (/** @type {number|null} */ code) => reject(new Error(`${child.spawnargs.slice(1).join(' ')} exited with ${code}`));
    lines.on('line', (line) => {
      const value = accept(line);
      if (value === undefined) return;
      lines.close();
      child.stdout.pause();
      child.off('exit', onExit);
      resolve(value);
    });
    child.once('exit', onExit);
  });
}

/** @param {'summary'|'none'} print */
async function startServer(print) {
  const server = node(['server/cli.js', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--print', print]);
  let http = '';
  const ui = await readUntil(server, (line) => {
    http = /^OTLP\/HTTP\s+(\S+)/.exec(line)?.[1] ?? http;
    return /^UI \+ API\s+(\S+)/.exec(line)?.[1];
  });
  return { server, http, ui, print };
}

/**
 * One round of load against one server: spans accepted per wall-clock second and per server CPU-second.
 * @param {{ server: import('node:child_process').ChildProcess, http: string }} target @param {number} ms
 */
async function round({ server, http }, ms) {
  const load = node(['bench/load.js', 'http-proto', http, String(ms), String(IN_FLIGHT)]);
  const lines = createInterface({ input: load.stdout });
  let result = null;
  let cpuBefore = 0;
  for await (const line of lines) {
    if (line === 'ready') {
      cpuBefore = cpuSeconds(/** @type {number} */ (server.pid));
      load.stdin.write('go\n');
    } else if (line.startsWith('{')) {
      result = JSON.parse(line);
    }
  }
  if (!result) throw new Error('the load generator gave no result');
  if (result.accepted !== result.requests) throw new Error(`the server rejected ${result.requests - result.accepted} requests`);
  const cpu = cpuSeconds(/** @type {number} */ (server.pid)) - cpuBefore;
  return { wall: result.spans / (result.ms / 1000), cpu: result.spans / cpu };
}

async function main() {
  // Many short rounds rather than a few long ones: on a shared machine the median then lands on
  // rounds that the other work left alone.
  const rounds = QUICK ? 2 : 9;
  const ms = QUICK ? 1500 : 2500;
  process.stderr.write(
    `print bench${QUICK ? ' (quick)' : ''}: ${rounds} rounds of ${ms} ms per server, ${SPANS_PER_REQUEST} spans per request, ${IN_FLIGHT} in flight\n`,
  );
  const summary = await startServer('summary');
  const none = await startServer('none');
  /** @type {Record<string, { wall: number, cpu: number }[]>} */
  const rates = { summary: [], none: [] };
  try {
    // Warm-up: JIT, and enough summary output to fill the unread pipe before anything is measured.
    await round(summary, 1000);
    await round(none, 1000);
    for (let i = 0; i < rounds; i++) {
      // Alternating which goes first spreads the machine's other work over both.
      const order = i % 2 ? [none, summary] : [summary, none];
      for (const s of order) {
        const rate = await round(s, ms);
        rates[s.print].push(rate);
        process.stderr.write(`  round ${i + 1} --print ${s.print.padEnd(7)} ${format(rate.wall)} spans/s, ${format(rate.cpu)} spans per server CPU-s\n`);
      }
    }
    const stats = await (await fetch(`${summary.ui}/api/stats`)).json();
    const withPrint = median(rates.summary.map((r) => r.wall));
    const without = median(rates.none.map((r) => r.wall));
    const ratio = withPrint / without;
    const cpuWithPrint = median(rates.summary.map((r) => r.cpu));
    const cpuWithout = median(rates.none.map((r) => r.cpu));
    const cpuRatio = cpuWithPrint / cpuWithout;
    process.stdout.write(
      `\n--print summary, stdout unread   ${format(withPrint).padStart(12)} spans/s   ${format(cpuWithPrint).padStart(12)} spans per server CPU-s (medians)\n` +
        `--print none                     ${format(without).padStart(12)} spans/s   ${format(cpuWithout).padStart(12)} spans per server CPU-s\n` +
        `ratio                            ${format(ratio, 3).padStart(12)}           ${format(cpuRatio, 3).padStart(12)}` +
        `   target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'ok' : 'MISSED'}\n` +
        `stuck printer: ${format(stats.print.queued)} requests queued, ${format(stats.print.dropped)} dropped (not printed)\n`,
    );
    process.stdout.write(
      JSON.stringify({
        summarySpansPerSecond: withPrint,
        noneSpansPerSecond: without,
        ratio,
        summarySpansPerCpuSecond: cpuWithPrint,
        noneSpansPerCpuSecond: cpuWithout,
        cpuRatio,
        printQueued: stats.print.queued,
        printDropped: stats.print.dropped,
      }) + '\n',
    );
  } finally {
    summary.server.kill('SIGTERM');
    none.server.kill('SIGTERM');
  }
}

await main();
