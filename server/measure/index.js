// `otlp-mock measure`: what telemetry costs the app that sends it. The app runs with its OTLP environment pointed at
// an otlp-mock in this process, under HTTP load at a fixed rate, with and without telemetry (--baseline), runs
// alternating so that a drift of the shared machine falls on both; the report gives medians and their spread.
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { startCollector } from '../collector.js';
import { parseFault } from '../faults/compact.js';
import { retryReport } from '../faults/report.js';
import { FaultRuleError } from '../faults/rules.js';
import { SIGNAL_NAMES } from '../otlp/signals.js';
import { measureRun } from './run.js';
import { procAvailable } from './proc.js';
import { htmlReport, jsonReport, tableText } from './report.js';

export const MEASURE_HELP = `Usage: otlp-mock measure [options] -- <command that starts the instrumented app>

Runs the command with OTEL_EXPORTER_OTLP_ENDPOINT (and _PROTOCOL) pointed at an otlp-mock in this process, drives
--url at a fixed rate, samples the app's process tree (CPU, RSS) and reports what it cost and what it sent.

Options:
  --url URL            the app's URL to load; without it the command only runs for --duration
  --rate N             requests per second, all connections together (default 100)
  --connections N      concurrent connections (default 10)
  --duration TIME      how long each run loads the app: 60s, 500ms, 2m (default 10s)
  --runs N             runs of each command, baseline and instrumented alternating (default 1)
  --baseline COMMAND   the same app without telemetry, run first in each pair
  --protocol P         grpc, http/protobuf or http/json (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)
  --fault RULE         a fault rule for the instrumented runs, as POST /api/faults takes it (JSON) or as
                       otlp-mock --fault writes it; the report says how the exporter retried (repeatable)
  --sample-ms MS       how often CPU and RSS are sampled (default 250)
  --ready-timeout TIME how long the app has to answer --url after starting (default 20s)
  --json FILE          write the runs and the overhead as JSON (docs/measure.md lists the fields)
  --html FILE          write CPU, RSS and latency plots of every run (one page, works offline)
  -h, --help           show this help`;

export class MeasureUsageError extends Error {}

/** "60s", "500ms", "2m", "1.5" (seconds) → ms. @param {string} text @param {string} flag */
function parseDuration(text, flag) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0) throw new MeasureUsageError(`${flag} must be a duration such as 60s, 500ms or 2m, got ${JSON.stringify(text)}`);
  return Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 'm' ? 60_000 : 1000);
}

/** @param {string|undefined} text @param {string} flag @param {number} fallback @param {number} [min] */
function positive(text, flag, fallback, min = 1) {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || !Number.isInteger(n)) throw new MeasureUsageError(`${flag} must be an integer of at least ${min}, got ${JSON.stringify(text)}`);
  return n;
}

const PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'];

/** A `--fault` value: JSON as POST /api/faults takes it, or the compact form of `otlp-mock --fault`. @param {string} text */
function faultInput(text) {
  if (!text.trim().startsWith('{')) return parseFault(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MeasureUsageError(`--fault ${JSON.stringify(text)} is not JSON: ${/** @type {Error} */ (err).message}`);
  }
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export function parseMeasureArgs(argv, env) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        rate: { type: 'string' },
        connections: { type: 'string' },
        duration: { type: 'string' },
        runs: { type: 'string' },
        baseline: { type: 'string' },
        protocol: { type: 'string' },
        fault: { type: 'string', multiple: true },
        'sample-ms': { type: 'string' },
        'ready-timeout': { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new MeasureUsageError(/** @type {Error} */ (err).message);
  }
  const v = parsed.values;
  if (v.help) return null;
  const command = parsed.positionals.join(' ');
  if (!command)
    throw new MeasureUsageError(
      'give the command that starts the instrumented app after --, e.g. otlp-mock measure --url http://127.0.0.1:3000/ -- node --import ./telemetry.mjs app.js',
    );
  if (v.url !== undefined && !/^https?:\/\//.test(v.url)) throw new MeasureUsageError(`--url must be an http:// or https:// URL, got ${JSON.stringify(v.url)}`);
  const protocol = v.protocol ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol)) throw new MeasureUsageError(`--protocol must be one of ${PROTOCOLS.join(', ')}, got ${JSON.stringify(protocol)}`);
  return {
    command,
    url: v.url ?? null,
    rate: positive(v.rate, '--rate', 100),
    connections: positive(v.connections, '--connections', 10),
    durationMs: parseDuration(v.duration ?? '10s', '--duration'),
    runs: positive(v.runs, '--runs', 1),
    baseline: v.baseline ?? null,
    protocol,
    faults: (v.fault ?? []).map(faultInput),
    sampleMs: positive(v['sample-ms'], '--sample-ms', 250, 10),
    readyTimeoutMs: parseDuration(v['ready-timeout'] ?? '20s', '--ready-timeout'),
    json: v.json ?? null,
    html: v.html ?? null,
  };
}

/** @typedef {NonNullable<ReturnType<typeof parseMeasureArgs>>} MeasureOptions */

/**
 * The app's environment: the OTLP exporters pointed at the collector, over the protocol asked for.
 * @param {NodeJS.ProcessEnv} env @param {{ grpc: string, http: string }} urls @param {string} protocol
 */
function telemetryEnv(env, urls, protocol) {
  /** @type {NodeJS.ProcessEnv} */
  const out = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: protocol === 'grpc' ? urls.grpc : urls.http, OTEL_EXPORTER_OTLP_PROTOCOL: protocol };
  // A per-signal endpoint or protocol would send that signal elsewhere, or over another wire.
  for (const signal of SIGNAL_NAMES.map((name) => name.toUpperCase())) {
    delete out[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];
    delete out[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`];
  }
  return out;
}

/**
 * Runs every run and writes the reports; returns the document `--json` holds.
 * @param {MeasureOptions} o @param {{ env?: NodeJS.ProcessEnv, out?: NodeJS.WritableStream }} [io]
 */
export async function measure(o, { env = process.env, out = process.stdout } = {}) {
  if (!procAvailable) throw new Error('otlp-mock measure samples CPU and memory from /proc, which this system does not have (Linux only)');
  const collector = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0, print: 'none' });
  try {
    // Rules are checked before any run, so a mistake in one costs no measuring.
    for (const input of o.faults) collector.faults.add(input);
    collector.faults.clear();
    /** @type {import('./run.js').RunRecord[]} */
    const records = [];
    /** @type {{ run: number, rule: string, verdict: string, counts: Record<string, number>, message: string }[]} */
    const retries = [];
    const instrumentedEnv = telemetryEnv(env, collector.urls, o.protocol);
    for (let i = 0; i < o.runs; i++) {
      for (const label of /** @type {const} */ (['baseline', 'instrumented'])) {
        const command = label === 'baseline' ? o.baseline : o.command;
        if (!command) continue;
        out.write(`run ${i + 1}/${o.runs} ${label}: ${command}\n`);
        collector.faults.clear();
        const rules = label === 'instrumented' ? o.faults.map((input) => collector.faults.add(input)) : [];
        const plan = {
          label,
          command,
          url: o.url,
          rate: o.rate,
          connections: o.connections,
          durationMs: o.durationMs,
          sampleMs: o.sampleMs,
          readyTimeoutMs: o.readyTimeoutMs,
          env: label === 'baseline' ? env : instrumentedEnv,
        };
        records.push(await measureRun(plan, { collector }));
        for (const rule of rules) {
          const report = retryReport(collector.journal, /** @type {any} */ (collector.faults.get(rule.id)), { windowMs: 0 });
          retries.push({ run: i + 1, rule: rule.id, verdict: report.verdict, counts: report.counts, message: report.message });
          out.write(`  fault ${rule.id} (${rule.action}): ${report.verdict}; ${report.message.split('\n')[0]}\n`);
        }
      }
    }
    const runs = records.map((r) => r.result);
    out.write('\n' + tableText(runs, o.durationMs));
    const doc = retries.length ? { ...jsonReport(runs), faults: retries } : jsonReport(runs);
    if (o.json) writeFileSync(o.json, JSON.stringify(doc, null, 2) + '\n');
    if (o.html) writeFileSync(o.html, htmlReport(records, `otlp-mock measure: ${o.command}`));
    return doc;
  } finally {
    await collector.stop();
  }
}

/** The subcommand's entry point: its exit status. @param {string[]} argv */
export async function measureMain(argv) {
  let options;
  try {
    options = parseMeasureArgs(argv, process.env);
  } catch (err) {
    if (!(err instanceof MeasureUsageError) && !(err instanceof FaultRuleError)) throw err;
    process.stderr.write(`otlp-mock measure: ${/** @type {Error} */ (err).message}\nRun otlp-mock measure --help for the options.\n`);
    return 2;
  }
  if (!options) {
    process.stdout.write(MEASURE_HELP + '\n');
    return 0;
  }
  try {
    await measure(options);
    return 0;
  } catch (err) {
    if (err instanceof FaultRuleError) {
      process.stderr.write(`otlp-mock measure: --fault: ${/** @type {Error} */ (err).message}\n`);
      return 2;
    }
    process.stderr.write(`otlp-mock measure: ${/** @type {Error} */ (err).message}\n`);
    return 1;
  }
}
