// `npm run bench`: decode speed, memory per stored span and end-to-end ingest cost, against the targets.
// BENCH_QUICK=1 runs a short smoke version. Every figure is the median of several rounds.
//
//   (a) decode only: decodeProto vs protobufjs decode + toObject on the same requests, and the check that
//       ingestion runs instead (spans left unbuilt until read, LazySpan); each alone in a child, bench/decode.js
//   (b) retained memory per stored item of each signal at full caps (heap and request bytes, against the
//       item's size on the wire), and the RSS of a collector with every default cap full: bench/heap.js in
//       children with --expose-gc
//   (c) ingest: the CLI server in one child, bench/load.js driving it from another; the server's own CPU
//       time (utime + stime from /proc) per span accepted, so the load generator's cost is not counted
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SPANS_PER_REQUEST, ATTRIBUTES_PER_SPAN } from './workload.js';
import { cpuSeconds } from './cpu.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGETS = { decodeRatio: 4, httpProtoSpansPerCpuSecond: 300_000, retainedOverWire: 1.3, rssMiB: 400 };
/** The default caps: fewer items would let the weight of a collector itself blur what an item weighs. */
const CAP = 100_000;

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** @param {string} text */
function progress(text) {
  process.stderr.write(`  ${text}\n`);
}

/** @param {number} n @param {number} [digits] */
function format(n, digits = 0) {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

// ---- child processes ----

/**
 * @typedef {import('node:child_process').ChildProcessByStdio<import('node:stream').Writable, import('node:stream').Readable, null>} Child
 *   a child process with its stdin and stdout piped, its stderr inherited
 */

/** @param {string[]} args @returns {Child} */
function node(args) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.on('error', () => {});
  return child;
}

/** Resolves with the next stdout line of `child` that `accept` returns a value for. @template T */
function nextLine(/** @type {Child} */ child, /** @type {(line: string) => T | undefined} */ accept) {
  return /** @type {Promise<T>} */ (
    new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      const onExit = (/** @type {number|null} */ code) => reject(new Error(`${child.spawnargs.slice(1).join(' ')} exited with ${code} before answering`));
      lines.on('line', (line) => {
        const value = accept(line);
        if (value === undefined) return;
        lines.close();
        child.off('exit', onExit);
        resolve(value);
      });
      child.once('exit', onExit);
    })
  );
}

/** @param {string} line */
function jsonLine(line) {
  return line.startsWith('{') ? JSON.parse(line) : undefined;
}

// ---- (a) decode ----

/** Each decoder alone in a fresh process (bench/decode.js), in rounds that alternate their order. */
async function decodeBench() {
  const names = ['hand', 'reference', 'check'];
  /** @type {Record<string, number[]>} */
  const rates = { hand: [], reference: [], check: [] };
  const rounds = QUICK ? 1 : 5;
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 ? [...names].reverse() : names) {
      const child = node(['bench/decode.js', name, String(QUICK ? 300 : 1000)]);
      rates[name].push((await nextLine(child, jsonLine)).spansPerCpuSecond);
    }
  }
  const [hand, reference, check] = [median(rates.hand), median(rates.reference), median(rates.check)];
  progress(`decode: ${format(hand)} vs ${format(reference)} spans per CPU-second; ingest check ${format(check)}`);
  return { hand, reference, check, ratio: hand / reference };
}

// ---- (b) memory ----

/** @typedef {{ signal: string, wireBytesPerItem: number, heapBytesPerItem: number, bufferBytesPerItem: number }} ItemMemory */

async function heapBench() {
  /** @type {ItemMemory[]} */
  const items = [];
  for (const signal of ['traces', 'logs', 'metrics']) {
    const result = await nextLine(node(['--expose-gc', 'bench/heap.js', 'items', signal, String(CAP), QUICK ? '1' : '3']), jsonLine);
    progress(`memory: ${format(result.heapBytesPerItem + result.bufferBytesPerItem)} bytes per stored ${signal} item of ${format(result.wireBytesPerItem)} on the wire`);
    items.push(result);
  }
  const rss = await nextLine(node(['--expose-gc', 'bench/heap.js', 'rss']), jsonLine);
  progress(`RSS with every default cap full: ${format(rss.rssBytes / MiB)} MiB`);
  return { items, rss };
}

const MiB = 1024 * 1024;
/** @type {Record<string, string>} */
const NOUNS = { traces: 'span', logs: 'log record', metrics: 'data point' };

// ---- (c) ingest ----

async function startServer() {
  const server = node(['server/cli.js', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--print', 'none']);
  /** @type {Record<string, string>} */
  const urls = {};
  await nextLine(server, (line) => {
    const match = /^(OTLP\/gRPC|OTLP\/HTTP|UI \+ API)\s+(\S+)/.exec(line);
    if (match) urls[match[1]] = match[2];
    return Object.keys(urls).length === 3 ? true : undefined;
  });
  return { server, grpc: urls['OTLP/gRPC'], http: urls['OTLP/HTTP'] };
}

/**
 * One measured round: the load generator prepares, then the server's CPU is read around the load.
 * @param {number} pid the server @param {string} mode @param {string} url @param {number} ms
 */
async function loadRound(pid, mode, url, ms) {
  const load = node(['bench/load.js', mode, url, String(ms), '4']);
  await nextLine(load, (line) => (line === 'ready' ? true : undefined));
  const cpuBefore = cpuSeconds(pid);
  const result = nextLine(load, jsonLine);
  load.stdin.write('go\n');
  const { spans, requests, accepted, ms: elapsed } = await result;
  const cpu = cpuSeconds(pid) - cpuBefore;
  if (accepted !== requests) throw new Error(`${mode}: the server rejected ${requests - accepted} of ${requests} requests`);
  return { spansPerCpuSecond: spans / cpu, spansPerSecond: spans / (elapsed / 1000), cpuShare: cpu / (elapsed / 1000) };
}

async function ingestBench() {
  const { server, grpc, http } = await startServer();
  const rounds = QUICK ? 1 : 5;
  const ms = QUICK ? 1500 : 4000;
  /** @type {Record<string, { spansPerCpuSecond: number, spansPerSecond: number, cpuShare: number }>} */
  const out = {};
  try {
    for (const [mode, url] of [
      ['http-proto', http],
      ['http-json', http],
      ['grpc', grpc],
    ]) {
      await loadRound(/** @type {number} */ (server.pid), mode, url, QUICK ? 500 : 1000);
      const results = [];
      for (let i = 0; i < rounds; i++) results.push(await loadRound(/** @type {number} */ (server.pid), mode, url, ms));
      out[mode] = {
        spansPerCpuSecond: median(results.map((r) => r.spansPerCpuSecond)),
        spansPerSecond: median(results.map((r) => r.spansPerSecond)),
        cpuShare: median(results.map((r) => r.cpuShare)),
      };
      progress(`${mode}: ${format(out[mode].spansPerCpuSecond)} spans per server CPU-second`);
    }
  } finally {
    server.kill('SIGTERM');
  }
  return out;
}

// ---- report ----

/** @param {boolean} ok */
const verdict = (ok) => (ok ? 'ok' : 'MISSED');

async function main() {
  const started = performance.now();
  process.stderr.write(
    `otlp-mock bench${QUICK ? ' (quick)' : ''}: ${SPANS_PER_REQUEST} spans per request, ${ATTRIBUTES_PER_SPAN} string attributes per span, ` +
      `node ${process.version}\n`,
  );
  const decode = await decodeBench();
  const heap = await heapBench();
  const ingest = await ingestBench();

  /** @type {[string, string, string, string][]} */
  const rows = [
    ['decodeProto, spans per CPU-s', format(decode.hand), '', ''],
    ['protobufjs decode + toObject, spans per CPU-s', format(decode.reference), '', ''],
    ['decodeProto / protobufjs', `${format(decode.ratio, 1)}x`, `>= ${TARGETS.decodeRatio}x`, verdict(decode.ratio >= TARGETS.decodeRatio)],
    ['ingest check (spans built when read), spans per CPU-s', format(decode.check), '', ''],
    ...heap.items.flatMap((m) => {
      const retained = m.heapBytesPerItem + m.bufferBytesPerItem;
      const ratio = retained / m.wireBytesPerItem;
      /** @type {[string, string, string, string][]} */
      const rows = [
        [
          `retained per stored ${NOUNS[m.signal]} / its wire size (${format(m.wireBytesPerItem)} bytes)`,
          `${format(ratio, 2)}x`,
          `<= ${TARGETS.retainedOverWire}x`,
          verdict(ratio <= TARGETS.retainedOverWire),
        ],
        ['  heap, bytes', format(m.heapBytesPerItem), '', ''],
        ['  request bytes and slots, bytes', format(m.bufferBytesPerItem), '', ''],
      ];
      return rows;
    }),
    [
      `RSS, caps full (${format(heap.rss.spans)} spans, ${format(heap.rss.logRecords)} log records, ${format(heap.rss.points)} points, ${format(heap.rss.journal)} requests), MiB`,
      format(heap.rss.rssBytes / MiB),
      `< ${TARGETS.rssMiB}`,
      verdict(heap.rss.rssBytes / MiB < TARGETS.rssMiB),
    ],
    [
      'OTLP/HTTP protobuf, spans per server CPU-s',
      format(ingest['http-proto'].spansPerCpuSecond),
      `>= ${format(TARGETS.httpProtoSpansPerCpuSecond)}`,
      verdict(ingest['http-proto'].spansPerCpuSecond >= TARGETS.httpProtoSpansPerCpuSecond),
    ],
    ['OTLP/HTTP JSON, spans per server CPU-s', format(ingest['http-json'].spansPerCpuSecond), '', ''],
    ['OTLP/gRPC, spans per server CPU-s', format(ingest.grpc.spansPerCpuSecond), '', ''],
    ['OTLP/HTTP protobuf, spans/s (wall, 4 in flight)', format(ingest['http-proto'].spansPerSecond), '', ''],
    ['OTLP/HTTP JSON, spans/s (wall, 4 in flight)', format(ingest['http-json'].spansPerSecond), '', ''],
    ['OTLP/gRPC, spans/s (wall, 4 in flight)', format(ingest.grpc.spansPerSecond), '', ''],
  ];
  const header = /** @type {[string, string, string, string]} */ (['measure (median)', 'value', 'target', '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (/** @type {string[]} */ r) =>
    r
      .map((cell, i) => (i === 1 || i === 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  process.stdout.write(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n`);
  process.stdout.write(`\n${format((performance.now() - started) / 1000, 1)} s\n`);
}

await main();
