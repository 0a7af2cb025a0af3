// `--print summary`: one compact line per request, and for traces a small tree of the request's spans.
import { serviceOf } from '../store/store.js';
import { signalByName } from '../otlp/signals.js';
import { grpcCodeName } from '../faults/actions.js';
import { noAnswer } from '../store/journal.js';
import { compareNanos, durationNanos } from '../otlp/model.js';
import { visible } from './escape.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {{ entry: JournalEntry, stored: Entry[]|null, body: any, bytes: number }} Received
 *   `stored`: the request's items as the store kept them; `body`: the decoded request when it was not stored;
 *   `bytes`: what either keeps in memory
 */

const MAX_TREE_LINES = 8;
const MAX_SERVICES = 3;
const MAX_MESSAGE = 100;

/** @param {number} n @param {string|null} signal */
export function count(n, signal) {
  const { one, many } = signalByName(signal ?? '')?.item ?? { one: 'item', many: 'items' };
  return `${n} ${n === 1 ? one : many}`;
}

/** @param {string} iso */
export function clock(iso) {
  const d = new Date(iso);
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** @param {JournalEntry} entry */
function transportLabel(entry) {
  // a stream's batches come one a line, interleaved with other streams': which stream and which batch tells them apart
  if (entry.otap) return `otap ${entry.otap.stream}#${entry.otap.batch}`;
  if (entry.transport !== 'http') return entry.transport;
  return /json/i.test(entry.contentType) ? 'http/json' : /protobuf/i.test(entry.contentType) ? 'http/proto' : 'http';
}

/** @param {Received} r @returns {string[]} */
function servicesOf({ entry, stored, body }) {
  /** @type {Set<string>} */
  const names = new Set();
  if (stored) {
    for (const e of stored) names.add(e.ctx.service);
  } else if (body && entry.signal) {
    const signal = signalByName(entry.signal);
    for (const group of (signal && body[signal.rootField]) ?? []) names.add(serviceOf(group.resource));
  }
  return [...names].map((n) => (n ? visible(n) : '(no service.name)'));
}

/** @param {string} text */
function short(text) {
  const one = visible(text.replace(/\s+/g, ' ').trim());
  return one.length > MAX_MESSAGE ? one.slice(0, MAX_MESSAGE - 1) + '…' : one;
}

/** gRPC codes by name: "14" says little to someone reading a terminal. @param {number} status @param {string} transport */
function codeLabel(status, transport) {
  return transport === 'grpc' || transport === 'otap' ? (grpcCodeName(status) ?? `code ${status}`) : String(status);
}

/** @param {JournalEntry} entry */
function statusLabel(entry) {
  return codeLabel(/** @type {NonNullable<JournalEntry['response']>} */ (entry.response).status, entry.transport);
}

/** @param {JournalEntry} entry */
function outcomeLabel(entry) {
  const parts = [];
  if (entry.fault) parts.push(`fault ${entry.fault.action} (rule ${entry.fault.id})`);
  if (!entry.response) {
    parts.push(noAnswer(entry));
    return parts.join(' ');
  }
  const { message, partialSuccess } = entry.response;
  if (entry.outcome === 'partial' && partialSuccess) parts.push(`partial: ${partialSuccess.rejected} rejected`);
  else if (entry.outcome === 'rejected') parts.push(`rejected ${statusLabel(entry)}${message ? `: ${short(message)}` : ''}`);
  else if (entry.outcome === 'faulted' || entry.outcome === 'hang') parts.push(`answered ${statusLabel(entry)}`);
  return parts.join(' ');
}

/**
 * What the primary forward target made of the request, when it was forwarded (docs/forward.md); an upstream-side
 * fault rule is already named by the line, as the request's fault.
 * @param {JournalEntry} entry
 */
function upstreamLabel(entry) {
  const leg = entry.upstream;
  if (!leg) return '';
  const status = leg.status === null ? 'no answer' : codeLabel(leg.status, leg.transport);
  return `→ upstream ${leg.target} ${leg.outcome} ${status} ${leg.durationMs} ms`;
}

/** @param {any} span */
function spanLabel(span) {
  let ms = '';
  if (span.startTimeUnixNano !== '0' && span.endTimeUnixNano !== '0') {
    const nanos = Number(durationNanos(span.startTimeUnixNano, span.endTimeUnixNano));
    ms = ` ${nanos >= 1e6 ? (nanos / 1e6).toFixed(1) + ' ms' : (nanos / 1e3).toFixed(0) + ' µs'}`;
  }
  return `${span.name ? visible(span.name) : '(unnamed)'}${ms}${span.status.code === 2 ? ' ERROR' : ''}`;
}

/**
 * Parents before children, siblings by start time; spans whose parent is not in this request are roots.
 * @param {Entry[]} entries @returns {string[]}
 */
function spanTree(entries) {
  const spans = entries.map((e) => e.item);
  const ids = new Set(spans.map((s) => s.traceId + s.spanId));
  /** @type {Map<string, any[]>} */
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    const parent = s.parentSpanId ? s.traceId + s.parentSpanId : '';
    if (parent && ids.has(parent)) {
      const list = children.get(parent);
      if (list) list.push(s);
      else children.set(parent, [s]);
    } else {
      roots.push(s);
    }
  }
  const byStart = (/** @type {any} */ a, /** @type {any} */ b) => compareNanos(a.startTimeUnixNano, b.startTimeUnixNano);
  /** @type {string[]} */
  const lines = [];
  /** @param {any} span @param {string} lead @param {string} indent @param {string} [suffix] */
  const walk = (span, lead, indent, suffix = '') => {
    if (lines.length >= MAX_TREE_LINES) return;
    lines.push(lead + spanLabel(span) + suffix);
    const kids = (children.get(span.traceId + span.spanId) ?? []).sort(byStart);
    kids.forEach((kid, i) => {
      const last = i === kids.length - 1;
      walk(kid, `${indent}${last ? '└─ ' : '├─ '}`, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  for (const root of roots.sort(byStart)) walk(root, '  ', '  ', root.traceId ? `  · trace ${root.traceId.slice(0, 8)}` : '');
  const hidden = spans.length - lines.length;
  if (hidden > 0) lines.push(`  … ${hidden} more span${hidden === 1 ? '' : 's'}`);
  return lines;
}

/** @param {Received} r @returns {string} the line (and the tree under it), newline-terminated */
export function summaryText(r) {
  const { entry } = r;
  const services = servicesOf(r);
  const shown = services.slice(0, MAX_SERVICES).join(', ') + (services.length > MAX_SERVICES ? ` +${services.length - MAX_SERVICES}` : '');
  const head = [
    clock(entry.time),
    transportLabel(entry).padEnd(10),
    visible(entry.signal ?? entry.path).padEnd(7),
    shown || '-',
    count(entry.items, entry.signal),
    outcomeLabel(entry),
    upstreamLabel(entry),
  ]
    .filter(Boolean)
    .join('  ');
  const tree = entry.signal === 'traces' && r.stored ? spanTree(r.stored) : [];
  return [head, ...tree].join('\n') + '\n';
}
