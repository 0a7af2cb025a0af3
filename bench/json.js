// OTLP/JSON ingest, decoding only: `node bench/json.js [ms]` compares decodeJson (JSON.parse and a walk over
// the tree, every span built) with what the receivers run (jsonToProto, then decodeProto keeping spans
// lazily), in spans per CPU-second. Each decoder runs alone in a child process, in turns, five rounds each, so
// that neither one's garbage or compiled code bears on the other's figure; prints the medians and their ratio.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeJson } from '../server/otlp/decode-json.js';
import { decodeProto } from '../server/otlp/items.js';
import { jsonToProto } from '../server/otlp/json-proto.js';
import { decodeRate, jsonBody, SPANS_PER_REQUEST, TRACES } from './workload.js';

const LAZY = { lazy: true };
/** @type {Record<string, (body: Buffer) => unknown>} */
const DECODERS = {
  decodeJson: (body) => decodeJson(TRACES, body),
  transcoded: (body) => {
    const wire = jsonToProto(TRACES, body);
    return wire ? decodeProto(TRACES, wire, LAZY) : decodeJson(TRACES, body);
  },
};

/** Spans per CPU-second of one decoder over `ms` of distinct requests in turn. @param {string} which @param {number} ms */
function measure(which, ms) {
  const decode = DECODERS[which];
  const bodies = Array.from({ length: 8 }, (_, i) => jsonBody(i + 1));
  if (jsonToProto(TRACES, bodies[0]) === null) throw new Error('the benchmark request is not transcoded');
  decodeRate(decode, bodies, ms / 2);
  return decodeRate(decode, bodies, ms);
}

/** @param {number[]} values */
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

const [role, which, msArg] = process.argv.slice(2);
if (role === 'child') {
  process.stdout.write(String(measure(which, Number(msArg))));
} else {
  const ms = Number(role ?? 1000);
  const self = fileURLToPath(import.meta.url);
  /** @type {Record<string, number[]>} */
  const rates = { decodeJson: [], transcoded: [] };
  for (let round = 0; round < 5; round++) {
    for (const name of Object.keys(rates)) {
      const child = spawnSync(process.execPath, [self, 'child', name, String(ms)], { encoding: 'utf8' });
      if (child.status !== 0) throw new Error(child.stderr);
      rates[name].push(Number(child.stdout));
    }
  }
  const before = median(rates.decodeJson);
  const after = median(rates.transcoded);
  console.log(`OTLP/JSON, ${SPANS_PER_REQUEST} spans a request, spans per CPU-second (median of 5):`);
  console.log(`  decodeJson                        ${Math.round(before).toLocaleString('en-US')}`);
  console.log(`  jsonToProto + decodeProto (lazy)  ${Math.round(after).toLocaleString('en-US')}  (${(after / before).toFixed(2)}x)`);
}
