#!/usr/bin/env node
// The command line: flags and OTLP_MOCK_* variables in, a running collector out.
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { OPTIONS, CLI_DEFAULTS, ConfigError, convert } from './config.js';
import { startCollector, ListenError } from './collector.js';
import { FAULT_HELP, parseFault, loadFaultsFile } from './faults/compact.js';
import { ImportError } from './transfer/import.js';
import { ForwardTargetError } from './forward/target.js';
import { SIGNAL_LIST } from './otlp/signals.js';
import { clientSummary } from './print/clients.js';
import { keepHeapRoom } from './heap.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** Exit codes beyond 0 and 1, documented in the README ("Exit status") and in --help. */
const EXIT = { usage: 2, listen: 3 };

function usage() {
  // The description column starts two spaces past the longest flag, so that no flag runs into its text.
  const width = Math.max(...OPTIONS.map((o) => o.flag.length + 2), '-h, --help'.length) + 2;
  const rows = OPTIONS.map((o) => `  ${`--${o.flag}`.padEnd(width)}${o.help}\n  ${''.padEnd(width)}env ${o.env}`);
  return `otlp-mock ${pkg.version}: a mock OpenTelemetry collector with a live inspection UI

Usage: otlp-mock [options]
       otlp-mock measure [options] -- <command>   what telemetry costs an app (otlp-mock measure --help)

Options:
${rows.join('\n')}
  ${'-h, --help'.padEnd(width)}show this help
  ${'-v, --version'.padEnd(width)}show the version

Point an OpenTelemetry SDK at it (OTLP/HTTP; for gRPC use port 4317 and OTEL_EXPORTER_OTLP_PROTOCOL=grpc):
  OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf

Exit status: 0 once stopped by SIGINT or SIGTERM; ${EXIT.usage} for a bad option, fault rule, forward target or import file;
${EXIT.listen} when a port or address cannot be opened (in use, not permitted, not this machine's); 130 for a second
signal while stopping; 1 for anything else.

${FAULT_HELP}`;
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export function parseCommandLine(argv, env) {
  /** @type {Record<string, any>} */
  const spec = { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } };
  for (const o of OPTIONS) spec[o.flag] = o.kind === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: o.kind === 'list' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false });
  } catch (err) {
    throw new ConfigError(/** @type {Error} */ (err).message);
  }
  /** @type {Record<string, any>} */
  const values = parsed.values;
  /** @type {Record<string, any>} */
  const options = { ...CLI_DEFAULTS };
  for (const o of OPTIONS) {
    const fromFlag = values[o.flag];
    if (o.kind === 'list') {
      const list = fromFlag ?? env[o.env]?.split(';').filter(Boolean) ?? [];
      if (list.length) options[o.key] = list;
      continue;
    }
    if (typeof fromFlag === 'boolean') options[o.key] = fromFlag;
    else if (fromFlag !== undefined) options[o.key] = convert(o, fromFlag, `--${o.flag}`);
    else if (env[o.env] !== undefined && env[o.env] !== '') options[o.key] = convert(o, /** @type {string} */ (env[o.env]), o.env);
  }
  return { help: Boolean(values.help), version: Boolean(values.version), options };
}

/**
 * Where the port-or-address advice comes from: the option table, so that a renamed flag renames it here too.
 * @param {string} key
 */
function optionNames(key) {
  const o = /** @type {import('./config.js').OptionSpec} */ (OPTIONS.find((spec) => spec.key === key));
  return `--${o.flag} or ${o.env}`;
}

/** One sentence: what failed and which flag or variable changes it. @param {ListenError} err */
function listenFailure(err) {
  if (err.hostProblem) return `${err.message}; bind another with ${optionNames('host')} (127.0.0.1 or 0.0.0.0 work everywhere).`;
  const change = `${err.code === 'EADDRINUSE' ? 'stop it, or choose' : 'choose'} another port with ${optionNames(err.option)}`;
  return `${err.message}; ${change} (0 picks any free port).`;
}

/**
 * grpc-js logs "No address added out of total N resolved" itself before the bind fails; the ListenError says
 * more, so that line is noise here. This process owns grpc-js's logger, so the CLI (not the library) filters it.
 */
function muteGrpcBindNoise() {
  /** @param {string} level */
  const line =
    (level) =>
    (/** @type {any} */ message, /** @type {any[]} */ ...rest) => {
      if (level === 'E' && String(message).startsWith('No address added out of total')) return;
      console.error(`${level} ${message}`, ...rest);
    };
  grpc.setLogger({ error: line('E'), info: line('I'), debug: line('D') });
}

/**
 * Opens the UI in the default browser; where none can be launched, says so in a line and carries on.
 * @param {string} url @param {NodeJS.WritableStream} out
 */
function openBrowser(url, out) {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  let reported = false;
  /** @param {string} why */
  const cannot = (why) => {
    if (reported) return;
    reported = true;
    out.write(`otlp-mock: no browser opened (${why}); open ${url} yourself\n`);
  };
  const child = spawn(command, args, { stdio: 'ignore', detached: true, windowsHide: true });
  child.once('error', (err) => cannot(/** @type {any} */ (err).code === 'ENOENT' ? `${command} not found` : err.message));
  child.once('exit', (code) => code && cannot(`${command} exited with ${code}`));
  child.unref();
}

/** "3 spans, 0 data points, 5 log records" @param {Record<string, number>} items */
function describeItems(items) {
  return SIGNAL_LIST.map((s) => `${items[s.name]} ${s.item.many}`).join(', ');
}

async function main() {
  // The measure subcommand loads its load generator only when asked for.
  if (process.argv[2] === 'measure') {
    process.exitCode = await (await import('./measure/index.js')).measureMain(process.argv.slice(3));
    return;
  }
  let command;
  try {
    command = parseCommandLine(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`otlp-mock: ${err.message}\nRun otlp-mock --help for the options.\n`);
    process.exit(EXIT.usage);
  }
  if (command.help) {
    process.stdout.write(usage() + '\n');
    return;
  }
  if (command.version) {
    process.stdout.write(pkg.version + '\n');
    return;
  }
  const { fault = [], faultsFile, open = false, ...options } = command.options;
  let rules;
  try {
    rules = [
      ...(faultsFile ? await loadFaultsFile(faultsFile, { hangLimitMs: options.hangLimitMs }) : []),
      ...fault.map((/** @type {string} */ text) => parseFault(text, { hangLimitMs: options.hangLimitMs })),
    ];
  } catch (err) {
    process.stderr.write(`otlp-mock: ${/** @type {Error} */ (err).message}\n`);
    process.exit(EXIT.usage);
  }
  muteGrpcBindNoise();
  keepHeapRoom();
  let collector;
  try {
    collector = await startCollector({ ...options, faults: rules });
  } catch (err) {
    if (err instanceof ListenError) {
      process.stderr.write(`otlp-mock: ${listenFailure(err)}\n`);
      process.exit(EXIT.listen);
    }
    if (!(err instanceof ImportError) && !(err instanceof ForwardTargetError)) throw err;
    process.stderr.write(`otlp-mock: ${err.message}\n`);
    process.exit(EXIT.usage);
  }
  // With --print json, stdout carries only OTLP/JSON lines, for piping.
  const banner = options.print === 'json' ? process.stderr : process.stdout;
  banner.write(
    `otlp-mock ${pkg.version}\n` +
      collector.imported.map((i) => `Imported   ${i.file}: ${i.requests} requests (${describeItems(i.items)})\n`).join('') +
      `OTLP/gRPC  ${collector.urls.grpc}\n` +
      `OTLP/HTTP  ${collector.urls.http}\n` +
      `UI + API   ${collector.urls.ui}\n` +
      collector.forwarder
        .list()
        .map((t) => `Forward    ${t.url} (${t.role})\n`)
        .join(''),
  );
  if (open) openBrowser(collector.urls.ui, banner);
  let stopping = false;
  const stop = async (/** @type {string} */ signal) => {
    if (stopping) process.exit(130);
    stopping = true;
    banner.write(`otlp-mock: ${signal}, stopping\n`);
    await collector.stop();
    // The summary's last lines; --print none and json keep the console as they promise.
    if (options.print === 'summary') banner.write(clientSummary(collector.clients.report()));
    process.exit(0);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`otlp-mock: ${err?.stack ?? err}\n`);
  process.exit(1);
});
