// Retained memory, run by bench/run.js in a child with --expose-gc:
//
//   node --expose-gc bench/heap.js items <traces|logs|metrics> <cap> [pairs]
//     collectors in this process with the signal's cap at <cap>/10 and <cap>, each filled past it over OTLP/HTTP
//     protobuf with the shapes of bench/fill.js; prints one JSON line with what a stored item keeps (heap and
//     buffers) next to its size on the wire (its request's bytes over its items). The journal keeps one
//     entry, so that only the store is weighed.
//   node --expose-gc bench/heap.js rss
//     a collector with every default cap, filled by a child process (bench/fill.js, then more requests until
//     the journal holds its 10,000 entries); prints the process's RSS and heap.
import http from 'node:http';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setImmediate as tick } from 'node:timers/promises';
import { startCollector } from '../server/collector.js';
import { encodeRequest } from '../server/otlp/schema.js';
import { DEFAULTS } from '../server/config.js';
import { protoBody } from './workload.js';
import { FILL_REQUESTS, fillDefaultCaps, logRequest, metricRequest } from './fill.js';

/** @typedef {'traces'|'logs'|'metrics'} SignalName */

/** @type {Record<SignalName, { path: string, cap: 'maxSpans'|'maxLogs'|'maxPoints', body: (n: number) => Buffer }>} */
const SIGNALS = {
  traces: { path: '/v1/traces', cap: 'maxSpans', body: (n) => protoBody(n + 1) },
  logs: { path: '/v1/logs', cap: 'maxLogs', body: (n) => Buffer.from(encodeRequest('logs', logRequest(n))) },
  metrics: { path: '/v1/metrics', cap: 'maxPoints', body: (n) => Buffer.from(encodeRequest('metrics', metricRequest(n))) },
};
/** Filled this far past the cap, so that the store has evicted as it does when full. */
const OVERFILL = 1.1;

/** @param {http.Agent} agent @param {string} url @param {Buffer} body */
function post(agent, url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(undefined) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function settle() {
  const gc = /** @type {() => void} */ (globalThis.gc);
  if (typeof gc !== 'function') throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    await tick();
    gc();
  }
  return process.memoryUsage();
}

/**
 * Fills a collector whose cap for the signal is `cap` past it, weighs it, and stops it: it is unreachable when
 * this returns.
 * @param {SignalName} name @param {number} cap @param {number} first the seed of the first request
 */
async function filled(name, cap, first) {
  const signal = SIGNALS[name];
  const collector = await startCollector({ [signal.cap]: cap, maxRequests: 1 });
  const url = `${collector.urls.http}${signal.path}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let received = 0;
  let wireBytes = 0;
  let n = first;
  while (received < cap * OVERFILL) {
    const body = signal.body(n++);
    await post(agent, url, body);
    wireBytes += body.length;
    received = collector.store.stats()[name].received;
  }
  agent.destroy();
  const memory = await settle();
  const { stored } = collector.store.stats()[name];
  await collector.stop();
  return { stored, wireBytesPerItem: wireBytes / received, bytes: memory.heapUsed + memory.arrayBuffers, heap: memory.heapUsed };
}

/**
 * What a stored item keeps: the difference between a collector full at a tenth of the cap and one full at
 * the cap, over the items between them, so that what does not grow with the items (the collector itself,
 * code compiled on the way) is left out. Each collector started brings a few hundred kilobytes that are not
 * its items: the median of a few pairs.
 * @param {SignalName} name @param {number} cap @param {number} pairs
 */
async function items(name, cap, pairs) {
  /** @type {{ heap: number, retained: number, wire: number }[]} */
  const slopes = [];
  for (let i = 0; i < pairs; i++) {
    const small = await filled(name, cap / 10, i * 2000);
    const full = await filled(name, cap, i * 2000 + 1000);
    const items = full.stored - small.stored;
    slopes.push({ heap: (full.heap - small.heap) / items, retained: (full.bytes - small.bytes) / items, wire: full.wireBytesPerItem });
  }
  slopes.sort((a, b) => a.retained - b.retained);
  const { heap, retained, wire } = slopes[slopes.length >> 1];
  process.stdout.write(JSON.stringify({ signal: name, stored: cap, wireBytesPerItem: wire, heapBytesPerItem: heap, bufferBytesPerItem: retained - heap }) + '\n');
}

/** Run as a child: fills the caps, then tops up the journal. @param {string} httpUrl */
async function fill(httpUrl) {
  await fillDefaultCaps(httpUrl);
  const path = `${httpUrl}${SIGNALS.metrics.path}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < DEFAULTS.maxRequests - FILL_REQUESTS) await post(agent, path, SIGNALS.metrics.body(1000 + next++));
    }),
  );
  agent.destroy();
}

async function rss() {
  const collector = await startCollector({});
  await new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['fill', collector.urls.http], { stdio: 'inherit' });
    child.once('exit', (code) => (code === 0 ? resolve(undefined) : reject(new Error(`the filling process exited with ${code}`))));
  });
  const memory = await settle();
  const stats = collector.store.stats();
  process.stdout.write(
    JSON.stringify({
      spans: stats.traces.stored,
      logRecords: stats.logs.stored,
      points: stats.metrics.stored,
      journal: collector.journal.entries.size,
      rssBytes: memory.rss,
      heapBytes: memory.heapUsed,
      bufferBytes: memory.arrayBuffers,
    }) + '\n',
  );
  await collector.stop();
}

const [mode, arg, capArg] = process.argv.slice(2);
if (mode === 'items') await items(/** @type {SignalName} */ (arg), Number(capArg), Number(process.argv[5] ?? 3));
else if (mode === 'rss') await rss();
else if (mode === 'fill') await fill(arg);
else throw new Error('usage: node --expose-gc bench/heap.js items <signal> <cap> [pairs] | rss');
