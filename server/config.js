// Every option of the collector, its default, its flag and its environment variable, in one table.

/** @typedef {'none'|'summary'|'json'} PrintMode */

/**
 * Defaults of `startCollector`: any free ports and a silent console, so that tests can start several
 * collectors side by side. The command line overrides these with CLI_DEFAULTS.
 */
export const DEFAULTS = {
  host: '127.0.0.1',
  grpcPort: 0,
  httpPort: 0,
  uiPort: 0,
  maxSpans: 100_000,
  maxLogs: 100_000,
  maxPoints: 100_000,
  maxRequests: 10_000,
  maxRequestBytes: 64 * 1024 * 1024,
  /** @type {string[]|'*'} */
  corsOrigins: '*',
  hangLimitMs: 300_000,
  /** @type {PrintMode} */
  print: 'none',
  /** @type {string[]} OTLP/JSON lines files (as GET /api/export writes them) loaded before listening */
  importFiles: [],
};

/** What the command line (and so the Docker image) uses instead: the standard OTLP ports, a console summary. */
export const CLI_DEFAULTS = {
  grpcPort: 4317,
  httpPort: 4318,
  uiPort: 4319,
  /** @type {PrintMode} */
  print: 'summary',
};

export const PRINT_MODES = /** @type {PrintMode[]} */ (['none', 'summary', 'json']);

/**
 * @typedef {'string'|'port'|'count'|'origins'|'list'|'choice'|'boolean'} OptionKind
 * @typedef {{ key: string, flag: string, env: string, kind: OptionKind, help: string, choices?: string[] }} OptionSpec
 */

/** @type {OptionSpec[]} */
export const OPTIONS = /** @type {any[]} */ ([
  { key: 'host', flag: 'host', kind: 'string', help: 'address to bind (default 127.0.0.1; 0.0.0.0 in Docker)' },
  { key: 'grpcPort', flag: 'grpc-port', kind: 'port', help: 'OTLP/gRPC port (default 4317; 0 = any free port)' },
  { key: 'httpPort', flag: 'http-port', kind: 'port', help: 'OTLP/HTTP port (default 4318; 0 = any free port)' },
  { key: 'uiPort', flag: 'ui-port', kind: 'port', help: 'web UI and REST API port (default 4319; 0 = any free port)' },
  { key: 'maxSpans', flag: 'max-spans', kind: 'count', help: 'spans kept before the oldest are evicted (default 100000)' },
  { key: 'maxLogs', flag: 'max-logs', kind: 'count', help: 'log records kept (default 100000)' },
  { key: 'maxPoints', flag: 'max-points', kind: 'count', help: 'metric data points kept (default 100000)' },
  { key: 'maxRequests', flag: 'max-requests', kind: 'count', help: 'request journal entries kept (default 10000)' },
  { key: 'maxRequestBytes', flag: 'max-request-bytes', kind: 'count', help: 'largest request body, after decompression (default 67108864 = 64 MiB)' },
  { key: 'corsOrigins', flag: 'cors-origins', kind: 'origins', help: 'comma-separated origins allowed to send OTLP/HTTP from a browser (default *)' },
  { key: 'hangLimitMs', flag: 'hang-limit-ms', kind: 'count', help: 'longest a "hang" fault holds a request (default 300000)' },
  { key: 'fault', flag: 'fault', kind: 'list', help: 'a fault rule at start-up, repeatable (see below)' },
  { key: 'faultsFile', flag: 'faults-file', kind: 'string', help: 'a JSON file with an array of fault rules' },
  { key: 'print', flag: 'print', kind: 'choice', choices: PRINT_MODES, help: 'console output per request: none, summary (default) or json (OTLP/JSON lines)' },
  { key: 'importFiles', flag: 'import', kind: 'list', help: 'an OTLP/JSON lines file (from GET /api/export) to load at start-up, repeatable' },
  { key: 'open', flag: 'open', kind: 'boolean', help: 'open the web UI in the default browser once listening' },
]).map((o) => ({ ...o, env: 'OTLP_MOCK_' + o.flag.toUpperCase().replace(/-/g, '_') }));

export class ConfigError extends Error {}

const BOOLEANS = new Map([['1', true], ['true', true], ['yes', true], ['0', false], ['false', false], ['no', false]]);

/**
 * @param {OptionSpec} spec @param {string} raw @param {string} source where the value came from, for the message
 * @returns {any}
 */
export function convert(spec, raw, source) {
  switch (spec.kind) {
    case 'port': {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n > 65535) throw new ConfigError(`${source}: "${raw}" is not a port number (0-65535)`);
      return n;
    }
    case 'count': {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < 1 || !Number.isSafeInteger(n)) throw new ConfigError(`${source}: "${raw}" is not a positive whole number`);
      return n;
    }
    case 'origins': {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      if (!list.length) throw new ConfigError(`${source}: give * or a comma-separated list of origins`);
      return list.includes('*') ? '*' : list;
    }
    case 'boolean': {
      const value = BOOLEANS.get(raw.toLowerCase());
      if (value === undefined) throw new ConfigError(`${source}: "${raw}" is not one of ${[...BOOLEANS.keys()].join(', ')}`);
      return value;
    }
    case 'choice': {
      const choices = spec.choices ?? [];
      if (!choices.includes(raw)) throw new ConfigError(`${source}: "${raw}" is not one of ${choices.join(', ')}`);
      return raw;
    }
    default:
      if (raw === '') throw new ConfigError(`${source}: needs a value`);
      return raw;
  }
}
