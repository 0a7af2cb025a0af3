// Retained memory per stored span: run by bench/run.js as `node --expose-gc bench/heap.js <requests>`.
// Starts a collector in this process, posts the requests over OTLP/HTTP protobuf, collects garbage and
// prints one JSON line with the growth of the heap (and of buffers, in case request bytes are kept).
import http from 'node:http';
import { setImmediate as tick } from 'node:timers/promises';
import { startCollector } from '../server/collector.js';
import { protoBody, SPANS_PER_REQUEST } from './workload.js';

const gc = /** @type {() => void} */ (globalThis.gc);
if (typeof gc !== 'function') throw new Error('run with node --expose-gc');

const requests = Number(process.argv[2] ?? 100);
const WARM_UP = 4;

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
  for (let i = 0; i < 4; i++) {
    await tick();
    gc();
  }
  return process.memoryUsage();
}

const bodies = Array.from({ length: requests + WARM_UP }, (_, i) => protoBody(i + 1));
const collector = await startCollector({ maxSpans: (requests + WARM_UP) * SPANS_PER_REQUEST, print: 'none' });
const url = `${collector.urls.http}/v1/traces`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

// The first requests fill the decoder's caches and compile the hot paths: not per-span costs.
for (let i = 0; i < WARM_UP; i++) await post(agent, url, bodies[i]);
const before = await settle();
const storedBefore = collector.store.stats().traces.stored;
for (let i = WARM_UP; i < bodies.length; i++) await post(agent, url, bodies[i]);
agent.destroy();
const after = await settle();
const stored = collector.store.stats().traces.stored - storedBefore;

process.stdout.write(
  JSON.stringify({
    spans: stored,
    heapBytesPerSpan: (after.heapUsed - before.heapUsed) / stored,
    bufferBytesPerSpan: (after.arrayBuffers - before.arrayBuffers) / stored,
  }) + '\n',
);
await collector.stop();
