// One decoder, alone in this process: `node bench/decode.js <hand|reference|check> <ms>` prints one JSON
// line with its median spans per CPU-second. bench/run.js starts one per decoder and round, so that no
// decoder's garbage, caches or compiled code bear on another's figure.
import { decodeProto } from '../server/otlp/items.js';
import { requestType } from '../server/otlp/schema.js';
import { decodeRate, protoBody, SPANS_PER_REQUEST, TRACES } from './workload.js';

const [which, msArg] = process.argv.slice(2);
const ms = Number(msArg);
const type = requestType('traces');
const options = { longs: String, bytes: String };
const lazy = { lazy: true };
/** @type {Record<string, (body: Buffer) => unknown>} */
const DECODERS = {
  hand: (body) => decodeProto(TRACES, body),
  reference: (body) => type.toObject(type.decode(body), options),
  check: (body) => decodeProto(TRACES, body, lazy),
};
const decode = DECODERS[which];
if (!decode) throw new Error(`unknown decoder ${which}`);

// Distinct requests in turn, as the load sends them: the decoder's tables of recurring strings and
// attributes must earn their hits, not get them from decoding one request over and over.
const bodies = Array.from({ length: 8 }, (_, i) => protoBody(i + 1));
if (TRACES.countItems(decodeProto(TRACES, bodies[0])) !== SPANS_PER_REQUEST) throw new Error('decodeProto lost spans');

decodeRate(decode, bodies, ms);
const rates = Array.from({ length: 5 }, () => decodeRate(decode, bodies, ms / 5)).sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ decoder: which, spansPerCpuSecond: rates[2] }) + '\n');
