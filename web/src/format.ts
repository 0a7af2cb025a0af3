import type { AnyValue, LogRecord } from './generated/api';

/** Nanosecond timestamps arrive as decimal strings; milliseconds as a double keep sub-microsecond precision. */
export function nsToMs(ns: string | undefined): number {
  if (!ns) return 0;
  return Number(ns) / 1e6;
}

/** A log record's time: its own when the sender set one, else when the sender observed it. */
export function logTime(l: LogRecord): number {
  return nsToMs(l.timeUnixNano !== '0' && l.timeUnixNano ? l.timeUnixNano : l.observedTimeUnixNano);
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const abs = Math.abs(ms);
  if (abs === 0) return '0';
  if (abs < 1) return `${+(ms * 1000).toPrecision(3)}µs`;
  if (abs < 1000) return `${+ms.toPrecision(3)}ms`;
  if (abs < 60_000) return `${+(ms / 1000).toPrecision(3)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m ${Math.round((ms - m * 60_000) / 1000)}s`;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Local wall-clock time with milliseconds; the date only when it is not today. */
export function formatTime(ms: number): string {
  if (!ms) return '—';
  const d = new Date(ms);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return t;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}`;
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatCount(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  return n.toLocaleString('en-US');
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const abs = Math.abs(v);
  if (abs !== 0 && (abs >= 1e9 || abs < 1e-3)) return v.toExponential(2);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return (+v.toPrecision(4)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** One-line rendering of an attribute value; strings as they are, everything else as compact JSON. */
export function formatValue(v: AnyValue | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

export const STATUS_CODES = ['unset', 'ok', 'error'];

/** gRPC status names by code: grpc-js's `status`, which the browser cannot import (test/unit/grpc-code-names.test.js keeps them equal). */
export const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** An answer's status as read on its wire: the HTTP status, or the gRPC code with its name ("14 UNAVAILABLE"). */
export function answerStatus(status: number, transport: string): string {
  return transport === 'grpc' || transport === 'otap' ? `${status} ${GRPC_CODES[status] ?? ''}`.trim() : String(status);
}

export function severityClass(n: number): string {
  if (n >= 21) return 'sev-fatal';
  if (n >= 17) return 'sev-error';
  if (n >= 13) return 'sev-warn';
  if (n >= 9) return 'sev-info';
  if (n >= 5) return 'sev-debug';
  if (n >= 1) return 'sev-trace';
  return 'sev-unset';
}

const SEVERITY_NAMES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];

export function severityLabel(n: number, text: string): string {
  if (text) return text;
  if (n < 1 || n > 24) return '—';
  const base = SEVERITY_NAMES[Math.floor((n - 1) / 4)];
  const step = (n - 1) % 4;
  return step ? `${base}${step + 1}` : base;
}

export const SEVERITY_LEVELS: { label: string; min: number }[] = [
  { label: 'all', min: 0 },
  { label: 'trace+', min: 1 },
  { label: 'debug+', min: 5 },
  { label: 'info+', min: 9 },
  { label: 'warn+', min: 13 },
  { label: 'error+', min: 17 },
  { label: 'fatal', min: 21 },
];

/**
 * Colours for services and series, chosen by CIEDE2000 colour difference: every pair of the first 12 is
 * at least ΔE 20 apart (clearly different at a glance, also for the bars of a waterfall), every pair of
 * all 24 at least ΔE 13, and each at least ΔE 30 from the light and the dark backgrounds. Checked by
 * test/browser/ui-traces.test.js.
 */
export const PALETTE = [
  '#3b82f6',
  '#f25d0d',
  '#2bab92',
  '#cb0b7e',
  '#690df2',
  '#ab8b2b',
  '#33adcc',
  '#ab312b',
  '#b374dc',
  '#34f477',
  '#dc747f',
  '#e7f20d',
  '#7eab2b',
  '#f49e34',
  '#f2c40d',
  '#f65ab8',
  '#ab6b2b',
  '#dc9374',
  '#2059df',
  '#f4343d',
  '#c20bcb',
  '#1bbb63',
  '#93df20',
  '#2b85ab',
];

/**
 * Each service's colour index, as the server gives it (GET /api/services, `color`): in the order services first
 * arrived, kept while the server runs, so a service has one colour in every view, tab and page load.
 */
const serviceIndex = new Map<string, number>();
/** Told of a service shown before its colour is known, so it can be asked for (serviceColors.ts). */
let unknownService: (service: string) => void = () => {};
/** Until the server has said: a grey no service is given. */
const UNKNOWN_SERVICE_COLOR = '#8b929c';

/** Takes the server's colour indexes; says whether any changed. */
export function setServiceColors(services: { name: string; color: number }[]): boolean {
  let changed = false;
  for (const { name, color } of services) {
    if (serviceIndex.get(name) === color) continue;
    serviceIndex.set(name, color);
    changed = true;
  }
  return changed;
}

/** @param ask called with each service shown before its colour is known */
export function onUnknownService(ask: (service: string) => void): void {
  unknownService = ask;
}

/** Past the palette: hues a golden angle apart, so no two services ever share a colour. */
function extraColor(i: number): string {
  const hue = (i * 137.508) % 360;
  const light = [52, 40, 64][i % 3];
  return `hsl(${hue.toFixed(1)}, 70%, ${light}%)`;
}

/**
 * A service's colour: palette colours in the order services first arrived at the server, so the first services
 * never share a colour and a service has the same colour in every view and after a reload. Grey until the
 * server has given it one.
 */
export function serviceColor(service: string): string {
  const i = serviceIndex.get(service);
  if (i === undefined) {
    unknownService(service);
    return UNKNOWN_SERVICE_COLOR;
  }
  return i < PALETTE.length ? PALETTE[i] : extraColor(i);
}

/** Series colours for charts: distinct for the first few lines, then cycling. */
export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

export function shortId(id: string, n = 8): string {
  return id.length > n ? id.slice(0, n) : id;
}

/** Stable key for an attribute set, independent of key order. */
export function attrsKey(attrs: Record<string, AnyValue>): string {
  const keys = Object.keys(attrs).sort();
  if (keys.length === 0) return '';
  return keys.map((k) => `${k}=${formatValue(attrs[k])}`).join(', ');
}

export function toNumber(v: number | string | undefined): number {
  if (v === undefined) return NaN;
  if (typeof v === 'number') return v;
  return Number(v);
}

/** Large numbers short enough for an axis: 12k, 3.4M. */
export function formatCompact(v: number): string {
  const abs = Math.abs(v);
  if (abs < 10_000) return formatNumber(v);
  for (const [div, suffix] of [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ] as const)
    if (abs >= div) return `${+(v / div).toPrecision(3)}${suffix}`;
  return formatNumber(v);
}

const BYTE_UNITS: Record<string, number> = { By: 1, KBy: 1e3, MBy: 1e6, GBy: 1e9, KiBy: 1024, MiBy: 1024 ** 2, GiBy: 1024 ** 3 };
const TIME_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, μs: 1e-3, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** A metric's UCUM unit for people: `{request}` → requests, `By` → bytes, `1` → nothing. */
export function unitLabel(unit: string): string {
  if (!unit || unit === '1') return '';
  const rate = /^(.*)\/s$/.exec(unit);
  if (rate && rate[1]) return `${unitLabel(rate[1]) || rate[1]}/s`;
  if (BYTE_UNITS[unit] === 1) return 'bytes';
  if (unit === 's') return 'seconds';
  const annotation = /^\{(.+)\}$/.exec(unit);
  if (annotation) return annotation[1].endsWith('s') ? annotation[1] : `${annotation[1]}s`;
  return unit;
}

/**
 * A value in its metric's unit: bytes as B/KiB/MiB, times as µs/ms/s/min, annotations (`{request}`)
 * and other units after the number; `compact` for axes.
 */
export function formatUnit(v: number, unit: string, compact = false): string {
  if (!Number.isFinite(v)) return String(v);
  const rate = /^(.+)\/s$/.exec(unit);
  if (rate && (BYTE_UNITS[rate[1]] || TIME_UNITS[rate[1]])) return `${formatUnit(v, rate[1], compact)}/s`;
  if (BYTE_UNITS[unit]) {
    const bytes = v * BYTE_UNITS[unit];
    const abs = Math.abs(bytes);
    const [div, name] = abs >= 1024 ** 3 ? [1024 ** 3, 'GiB'] : abs >= 1024 ** 2 ? [1024 ** 2, 'MiB'] : abs >= 1024 ? [1024, 'KiB'] : [1, 'B'];
    return `${+(bytes / div).toPrecision(3)} ${name}`;
  }
  if (TIME_UNITS[unit]) return v === 0 ? '0' : formatDuration(v * TIME_UNITS[unit]);
  const n = compact ? formatCompact(v) : formatNumber(v);
  const annotation = /^\{(.+?)s?\}$/.exec(unit);
  if (annotation && Math.abs(v) === 1) return `${n} ${annotation[1]}`;
  const label = unitLabel(unit);
  if (!label) return n;
  return label === '%' ? `${n}%` : `${n} ${label}`;
}
