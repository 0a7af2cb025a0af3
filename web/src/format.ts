import type { AttrValue, LogRecord } from './types';

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
export function formatValue(v: AttrValue | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

export const STATUS_CODES = ['unset', 'ok', 'error'];

export const GRPC_CODES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS',
  'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED',
  'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
];

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

const PALETTE = [
  '#4f8cff', '#f59f00', '#2fb344', '#e64980', '#7950f2', '#15aabf', '#f76707', '#82c91e',
  '#be4bdb', '#1c7ed6', '#d6336c', '#0ca678', '#fab005', '#5c7cfa', '#e8590c', '#20c997',
];

const colorCache = new Map<string, string>();

/** A stable colour per service name, so a service keeps its colour across traces and views. */
export function serviceColor(service: string): string {
  let c = colorCache.get(service);
  if (c) return c;
  let h = 2166136261;
  for (let i = 0; i < service.length; i++) h = Math.imul(h ^ service.charCodeAt(i), 16777619);
  c = PALETTE[(h >>> 0) % PALETTE.length];
  colorCache.set(service, c);
  return c;
}

/** Series colours for charts: distinct for the first few lines, then cycling. */
export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

export function shortId(id: string, n = 8): string {
  return id.length > n ? id.slice(0, n) : id;
}

/** Stable key for an attribute set, independent of key order. */
export function attrsKey(attrs: Record<string, AttrValue>): string {
  const keys = Object.keys(attrs).sort();
  if (keys.length === 0) return '';
  return keys.map((k) => `${k}=${formatValue(attrs[k])}`).join(', ');
}

export function toNumber(v: number | string | undefined): number {
  if (v === undefined) return NaN;
  if (typeof v === 'number') return v;
  return Number(v);
}
