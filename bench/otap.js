// OTAP ingest per server CPU-second: otlp-mock against the Collector contrib otelarrow receiver into nop consumers
// (bench/otap-collector), the same client (test/otap, on otel-arrow's producer) and load for both: one stream, BATCH
// items a batch (default 100), a status read per batch, BATCHES batches (default 300), after WARMUP batches on a stream
// of their own (default 300: V8 needs about that many to have compiled the decoding, and a Go server needs none).
// Runs alternate between the two servers, ROUNDS times (default 3), and the table gives the medians.
//
//   npm run bench:otap                 SIGNALS=traces ROUNDS=5 npm run bench:otap
//
// The first run builds both Go programs (Go modules from the proxy) into node_modules/.cache/otlp-mock/otap-bench.
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './cpu.js';
import { goBuilt } from './go-built.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const SIGNALS = (process.env.SIGNALS ?? 'traces logs metrics').split(/[ ,]+/);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BATCH = Number(process.env.BATCH ?? 100);
const BATCHES = Number(process.env.BATCHES ?? 300);
const WARMUP = Number(process.env.WARMUP ?? 300);

const client = goBuilt('test/otap', 'otap-client');
const collector = goBuilt('bench/otap-collector', 'otap-collector');

/** A free loopback port. @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something listens on the port. @param {number} port */
async function listening(port) {
  for (let i = 0; i < 300; i++) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** @param {string} server @param {string} signal @returns {Promise<number>} items per server CPU-second */
async function measure(server, signal) {
  const port = await freePort();
  const child =
    server === 'collector'
      ? spawn(collector, ['-endpoint', `127.0.0.1:${port}`], { stdio: 'ignore' })
      : spawn(process.execPath, ['server/cli.js', '--host', '127.0.0.1', '--grpc-port', String(port), '--http-port', '0', '--ui-port', '0', '--print', 'none'], {
          cwd: root,
          stdio: 'ignore',
        });
  try {
    await listening(port);
    execFileSync(client, ['-endpoint', `127.0.0.1:${port}`, '-signal', signal, '-batches', String(WARMUP), '-size', String(BATCH), '-quiet']);
    const before = cpuSeconds(/** @type {number} */ (child.pid));
    const out = execFileSync(client, ['-endpoint', `127.0.0.1:${port}`, '-signal', signal, '-batches', String(BATCHES), '-size', String(BATCH), '-quiet'], {
      encoding: 'utf8',
    });
    const cpu = cpuSeconds(/** @type {number} */ (child.pid)) - before;
    const summary = JSON.parse(out.trim().split('\n').pop() ?? '{}');
    if (summary.error || summary.statuses !== BATCHES) throw new Error(`${server} ${signal}: ${out}`);
    return summary.items / cpu;
  } finally {
    child.kill();
  }
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(`OTAP ingest, items per server CPU-second (one stream, ${BATCH} items a batch, ${BATCHES} batches after ${WARMUP}, median of ${ROUNDS})`);
console.log(`${'signal'.padEnd(8)} ${'collector'.padStart(10)} ${'otlp-mock'.padStart(10)} ${'ratio'.padStart(6)}`);
for (const signal of SIGNALS) {
  /** @type {{ collector: number[], mock: number[] }} */
  const runs = { collector: [], mock: [] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.collector.push(await measure('collector', signal));
    runs.mock.push(await measure('mock', signal));
  }
  const c = median(runs.collector);
  const m = median(runs.mock);
  console.log(`${signal.padEnd(8)} ${String(Math.round(c)).padStart(10)} ${String(Math.round(m)).padStart(10)} ${(m / c).toFixed(2).padStart(6)}`);
}
