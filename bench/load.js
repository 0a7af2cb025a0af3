// The load generator, a separate process so that its work is not counted as the server's:
//   node bench/load.js <http-proto|http-json|grpc> <url> <durationMs> <concurrency>
// Prepares its requests, prints "ready", waits for a line on stdin, sends for durationMs with
// `concurrency` requests in flight, then prints one JSON line with what the server accepted.
import http from 'node:http';
import { createInterface } from 'node:readline';
import grpc from '@grpc/grpc-js';
import { jsonBody, protoBody, SPANS_PER_REQUEST, TRACES } from './workload.js';

const [mode, url, durationArg, concurrencyArg] = process.argv.slice(2);
const durationMs = Number(durationArg);
const concurrency = Number(concurrencyArg);
const BODIES = 8;

/** @typedef {(body: Buffer) => Promise<boolean>} Send  resolves with whether the server accepted */

/** @returns {Send} */
function httpSender(/** @type {string} */ contentType) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(TRACES.httpPath, url);
  return (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** @returns {Send} */
function grpcSender() {
  const client = new grpc.Client(url.replace(/^http:\/\//, ''), grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
  });
  const path = `/${TRACES.grpcService}/${TRACES.grpcMethod}`;
  /** @param {Buffer} b */
  const identity = (b) => b;
  return (body) =>
    new Promise((resolve) => {
      client.makeUnaryRequest(path, identity, identity, body, (err) => resolve(!err));
    });
}

const bodies = Array.from({ length: BODIES }, (_, i) => (mode === 'http-json' ? jsonBody(i + 1) : protoBody(i + 1)));
const send = mode === 'grpc' ? grpcSender() : httpSender(mode === 'http-json' ? 'application/json' : 'application/x-protobuf');

// One request per connection first, so that connection set-up is not part of the measurement.
await Promise.all(Array.from({ length: concurrency }, (_, i) => send(bodies[i % BODIES])));
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await lines.next();

let sent = 0;
let accepted = 0;
const started = performance.now();
const deadline = started + durationMs;
async function worker() {
  while (performance.now() < deadline) {
    const ok = await send(bodies[sent++ % BODIES]);
    if (ok) accepted++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const ms = performance.now() - started;
process.stdout.write(JSON.stringify({ requests: sent, accepted, spans: accepted * SPANS_PER_REQUEST, ms }) + '\n');
process.exit(0);
