#!/usr/bin/env node
// The command line: flags and OTLP_MOCK_* variables in, a running collector out.
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { OPTIONS, CLI_DEFAULTS, ConfigError, convert } from './config.js';
import { startCollector } from './collector.js';
import { FAULT_HELP, parseFault, loadFaultsFile } from './faults/compact.js';
import { ImportError } from './transfer/import.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

function usage() {
  const rows = OPTIONS.map((o) => `  --${o.flag.padEnd(20)} ${o.help}\n  ${''.padEnd(22)} env ${o.env}`);
  return `otlp-mock ${pkg.version}: a mock OpenTelemetry collector with a live inspection UI

Usage: otlp-mock [options]

Options:
${rows.join('\n')}
  --help                 show this help
  --version              show the version

${FAULT_HELP}`;
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export function parseCommandLine(argv, env) {
  /** @type {Record<string, any>} */
  const spec = { help: { type: 'boolean' }, version: { type: 'boolean' } };
  for (const o of OPTIONS) spec[o.flag] = { type: 'string', multiple: o.kind === 'list' };
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
      const list = fromFlag ?? (env[o.env] ? env[o.env].split(';').filter(Boolean) : []);
      if (list.length) options[o.key] = list;
      continue;
    }
    if (fromFlag !== undefined) options[o.key] = convert(o, fromFlag, `--${o.flag}`);
    else if (env[o.env] !== undefined && env[o.env] !== '') options[o.key] = convert(o, /** @type {string} */ (env[o.env]), o.env);
  }
  return { help: Boolean(values.help), version: Boolean(values.version), options };
}

/** @param {Record<string, number>} items */
function describeItems(items) {
  return `${items.traces} spans, ${items.metrics} data points, ${items.logs} log records`;
}

async function main() {
  let command;
  try {
    command = parseCommandLine(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`otlp-mock: ${err.message}\nRun otlp-mock --help for the options.\n`);
    process.exit(2);
  }
  if (command.help) {
    process.stdout.write(usage() + '\n');
    return;
  }
  if (command.version) {
    process.stdout.write(pkg.version + '\n');
    return;
  }
  const { fault = [], faultsFile, ...options } = command.options;
  let rules;
  try {
    rules = [
      ...(faultsFile ? await loadFaultsFile(faultsFile, { hangLimitMs: options.hangLimitMs }) : []),
      ...fault.map((/** @type {string} */ text) => parseFault(text, { hangLimitMs: options.hangLimitMs })),
    ];
  } catch (err) {
    process.stderr.write(`otlp-mock: ${/** @type {Error} */ (err).message}\n`);
    process.exit(2);
  }
  let collector;
  try {
    collector = await startCollector({ ...options, faults: rules });
  } catch (err) {
    if (!(err instanceof ImportError)) throw err;
    process.stderr.write(`otlp-mock: ${err.message}\n`);
    process.exit(2);
  }
  // With --print json, stdout carries only OTLP/JSON lines, for piping.
  const banner = options.print === 'json' ? process.stderr : process.stdout;
  banner.write(
    `otlp-mock ${pkg.version}\n` +
      collector.imported.map((i) => `Imported   ${i.file}: ${i.requests} requests (${describeItems(i.items)})\n`).join('') +
      `OTLP/gRPC  ${collector.urls.grpc}\n` +
      `OTLP/HTTP  ${collector.urls.http}\n` +
      `UI + API   ${collector.urls.ui}\n`,
  );
  let stopping = false;
  const stop = async (/** @type {string} */ signal) => {
    if (stopping) process.exit(130);
    stopping = true;
    banner.write(`otlp-mock: ${signal}, stopping\n`);
    await collector.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`otlp-mock: ${err && err.code === 'EADDRINUSE' ? `port already in use (${err.message})` : err.stack}\n`);
  process.exit(1);
});
