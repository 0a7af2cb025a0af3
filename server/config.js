// Every option of the collector, its default, its flag and its environment variable, in one table.
import { MiB } from './store/budget.js';
import { COMPRESSIONS, ENCODINGS } from './forward/target.js';
import { RETRY_WINDOW_MS } from './faults/report.js';
import { SIGNALS_SHOWN } from './otlp/signals.js';
import { ADMIN_CONCURRENCY, ADMIN_RATE } from './api/access.js';

/** @typedef {'none'|'summary'|'json'} PrintMode */

/**
 * Each signal's item cap and byte budget (maxSpans, maxSpanBytes, ...), as the signal table defines them.
 * The byte budgets (store/budget.js) make 512 MiB in all, so the process stays under 1 GiB RSS whatever arrives.
 * @type {Record<import('./otlp/signals.js').CountOption|import('./otlp/signals.js').BytesOption, number>}
 */
const BUDGET_DEFAULTS = /** @type {any} */ (
  Object.fromEntries(
    SIGNALS_SHOWN.flatMap(({ budget: b }) => [
      [b.countOption, b.countDefault],
      [b.bytesOption, b.bytesDefault],
    ]),
  )
);

/**
 * Defaults of `startCollector`: any free ports and a silent console, so that tests can start several
 * collectors side by side. The command line overrides these with CLI_DEFAULTS.
 */
export const DEFAULTS = {
  host: '127.0.0.1',
  grpcPort: 0,
  httpPort: 0,
  uiPort: 0,
  ...BUDGET_DEFAULTS,
  maxRequests: 10_000,
  maxRequestBytes: 64 * MiB,
  maxJournalBytes: 32 * MiB,
  /** request bodies being received and decoded at once, both OTLP ports together */
  maxInflightBytes: 128 * MiB,
  idleTimeoutMs: 30_000,
  maxPipelined: 4,
  maxFaults: 500,
  adminRate: ADMIN_RATE,
  adminConcurrency: ADMIN_CONCURRENCY,
  /** when set, the API, the live feed and the UI require it */
  adminToken: '',
  /** @type {string[]} names the UI port may be reached as, besides loopback names and the bind address */
  allowedHosts: [],
  /** @type {string[]|'*'} */
  corsOrigins: '*',
  hangLimitMs: 300_000,
  /** how long a retry report waits for an exporter's retry before "did not retry" (docs/faults.md) */
  retryWindowMs: RETRY_WINDOW_MS,
  /** @type {PrintMode} */
  print: 'none',
  /** @type {string[]} OTLP/JSON lines files (as GET /api/export writes them) loaded before listening */
  importFiles: [],
  /** @type {(string|Record<string, unknown>)[]} forward targets (docs/forward.md): a URL takes the forward* options below */
  forward: [],
  /** @type {'received'|'protobuf'|'json'} */
  forwardEncoding: 'received',
  /** @type {'none'|'gzip'} */
  forwardCompression: 'none',
  /** @type {string[]} NAME=VALUE headers set on every upstream call; an empty VALUE removes the client's header */
  forwardHeaders: [],
  forwardTimeoutMs: 5_000,
  /** requests under way to one forward target at once; more are shed */
  forwardMaxInflight: 64,
  /** bytes of requests under way to one forward target at once */
  forwardMaxInflightBytes: 32 * MiB,
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
 * @typedef {'string'|'port'|'count'|'origins'|'names'|'list'|'choice'|'boolean'} OptionKind
 * @typedef {{ key: string, flag: string, env: string, kind: OptionKind, help: string, choices?: string[] }} OptionSpec
 */

/** @type {OptionSpec[]} */
export const OPTIONS = /** @type {any[]} */ ([
  { key: 'host', flag: 'host', kind: 'string', help: 'address to bind (default 127.0.0.1; 0.0.0.0 in Docker)' },
  { key: 'grpcPort', flag: 'grpc-port', kind: 'port', help: 'OTLP/gRPC port (default 4317; 0 = any free port)' },
  { key: 'httpPort', flag: 'http-port', kind: 'port', help: 'OTLP/HTTP port (default 4318; 0 = any free port)' },
  { key: 'uiPort', flag: 'ui-port', kind: 'port', help: 'web UI and REST API port (default 4319; 0 = any free port)' },
  ...SIGNALS_SHOWN.map(({ budget: b }) => ({ key: b.countOption, flag: b.countFlag, kind: 'count', help: b.countHelp })),
  { key: 'maxRequests', flag: 'max-requests', kind: 'count', help: 'request journal entries kept (default 10000)' },
  { key: 'maxRequestBytes', flag: 'max-request-bytes', kind: 'count', help: 'largest request body, after decompression (default 67108864 = 64 MiB)' },
  ...SIGNALS_SHOWN.map(({ budget: b }) => ({ key: b.bytesOption, flag: b.bytesFlag, kind: 'count', help: b.bytesHelp })),
  { key: 'maxJournalBytes', flag: 'max-journal-bytes', kind: 'count', help: "bytes of faulted requests' bodies the journal keeps (default 33554432 = 32 MiB)" },
  {
    key: 'maxInflightBytes',
    flag: 'max-inflight-bytes',
    kind: 'count',
    help: 'bytes of request bodies being received or decompressed at once, both OTLP ports (default 134217728 = 128 MiB; above it: 503 / UNAVAILABLE)',
  },
  { key: 'idleTimeoutMs', flag: 'idle-timeout-ms', kind: 'count', help: 'a client that sends nothing for this long while sending a request is dropped (default 30000)' },
  {
    key: 'maxPipelined',
    flag: 'max-pipelined',
    kind: 'count',
    help: 'HTTP requests one connection may send before earlier ones are answered (pipelining) before it is cut off (default 4)',
  },
  { key: 'maxFaults', flag: 'max-faults', kind: 'count', help: 'fault rules kept at once (default 500)' },
  { key: 'adminRate', flag: 'admin-rate', kind: 'count', help: `admin API requests a second per client address; past it: 429 with Retry-After (default ${ADMIN_RATE})` },
  {
    key: 'adminConcurrency',
    flag: 'admin-concurrency',
    kind: 'count',
    help: `admin API requests worked on at once, the rest wait their turn; queries waiting for data (minCount, timeoutMs) do not count (default ${ADMIN_CONCURRENCY})`,
  },
  { key: 'adminToken', flag: 'admin-token', kind: 'string', help: 'require this token on the API, the live feed and the UI (default none)' },
  {
    key: 'allowedHosts',
    flag: 'allowed-hosts',
    kind: 'names',
    help: 'comma-separated host names the UI port may be reached as, besides loopback and --host (default: any when --host is 0.0.0.0 or ::)',
  },
  { key: 'corsOrigins', flag: 'cors-origins', kind: 'origins', help: 'comma-separated origins allowed to send OTLP/HTTP from a browser (default *)' },
  { key: 'hangLimitMs', flag: 'hang-limit-ms', kind: 'count', help: 'longest a "hang" fault holds a request (default 300000)' },
  {
    key: 'retryWindowMs',
    flag: 'retry-window-ms',
    kind: 'count',
    help: 'a batch faulted with a retryable error and not retried is "waiting" this long before its retry report says "did not retry" (default 8500; a longer Retry-After extends it)',
  },
  { key: 'fault', flag: 'fault', kind: 'list', help: 'a fault rule at start-up, repeatable (see below)' },
  { key: 'faultsFile', flag: 'faults-file', kind: 'string', help: 'a JSON file with an array of fault rules' },
  {
    key: 'print',
    flag: 'print',
    kind: 'choice',
    choices: PRINT_MODES,
    help: 'console output per request: none, summary (default; 20 requests a second in full, then a count) or json (OTLP/JSON lines)',
  },
  { key: 'importFiles', flag: 'import', kind: 'list', help: 'an OTLP/JSON lines file (from GET /api/export) to load at start-up, repeatable' },
  {
    key: 'forward',
    flag: 'forward',
    kind: 'list',
    help: 'send every accepted request on to this OTLP endpoint too, repeatable: grpc://host:4317 or http://host:4318 (the first one answers the client; see docs/forward.md)',
  },
  {
    key: 'forwardEncoding',
    flag: 'forward-encoding',
    kind: 'choice',
    choices: ENCODINGS,
    help: 'what OTLP/HTTP targets get: received (default: the encoding the client sent), protobuf or json',
  },
  { key: 'forwardCompression', flag: 'forward-compression', kind: 'choice', choices: COMPRESSIONS, help: 'compression of forwarded requests: none (default) or gzip' },
  {
    key: 'forwardHeaders',
    flag: 'forward-header',
    kind: 'list',
    help: "NAME=VALUE header on every forwarded request, repeatable (NAME= drops the client's header of that name)",
  },
  {
    key: 'forwardTimeoutMs',
    flag: 'forward-timeout-ms',
    kind: 'count',
    help: "longest wait for a forward target's answer; then HTTP 504 / DEADLINE_EXCEEDED (default 5000)",
  },
  {
    key: 'forwardMaxInflight',
    flag: 'forward-max-inflight',
    kind: 'count',
    help: 'requests under way to one forward target; above it: 503 / UNAVAILABLE, retry in 1 s (default 64)',
  },
  { key: 'forwardMaxInflightBytes', flag: 'forward-max-inflight-bytes', kind: 'count', help: 'bytes under way to one forward target (default 33554432 = 32 MiB)' },
  { key: 'open', flag: 'open', kind: 'boolean', help: 'open the web UI in the default browser once listening' },
]).map((o) => ({ ...o, env: 'OTLP_MOCK_' + o.flag.toUpperCase().replace(/-/g, '_') }));

export class ConfigError extends Error {}

const BOOLEANS = new Map([
  ['1', true],
  ['true', true],
  ['yes', true],
  ['0', false],
  ['false', false],
  ['no', false],
]);

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
      const list = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (!list.length) throw new ConfigError(`${source}: give * or a comma-separated list of origins`);
      return list.includes('*') ? '*' : list;
    }
    case 'names': {
      const list = raw
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      if (!list.length) throw new ConfigError(`${source}: give a comma-separated list of host names`);
      return list;
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
