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
/**
 * The most spans a request may hold for its tree to be drawn: the Collector's batches (8,192 by default) and the
 * SDKs' (512) are. Each span's place costs about 1.6 µs to read: 20,000 spans held the event loop 33-36 ms.
 */
const MAX_TREE_SPANS = 8192;
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

/** @param {{ startTimeUnixNano: string }} a @param {{ startTimeUnixNano: string }} b */
const byStart = (a, b) => compareNanos(a.startTimeUnixNano, b.startTimeUnixNano);

/**
 * The `k` earliest of `nodes` by start, in order, as a stable sort would put them first: no more is printed, and a
 * request may hold twenty thousand roots.
 * @template {{ startTimeUnixNano: string }} T @param {T[]} nodes @param {number} k @returns {T[]}
 */
function earliest(nodes, k) {
  /** @type {T[]} */
  const out = [];
  for (const node of nodes) {
    if (out.length === k && (k === 0 || byStart(node, out[k - 1]) >= 0)) continue;
    let i = out.length < k ? out.length : k - 1;
    while (i > 0 && byStart(node, out[i - 1]) < 0) {
      out[i] = out[i - 1];
      i--;
    }
    out[i] = node;
  }
  return out;
}

/**
 * Parents before children, siblings by start time; spans whose parent is not in this request are roots. Each span's
 * place is read from its bytes, and only the spans printed are built: built, the 20,000 spans of one 8 MB request
 * held the event loop 150-270 ms.
 * @param {Entry[]} entries @returns {string[]}
 */
function spanTree(entries) {
  if (entries.length > MAX_TREE_SPANS) return [`  (no tree: one is drawn for requests of up to ${MAX_TREE_SPANS} spans)`];
  const spans = entries.map((e) => {
    const span = /** @type {import('../otlp/model.js').SpanEntry} */ (e);
    const node = span.treeNode();
    return { entry: span, key: span.traceId + node.spanId, ...node };
  });
  /** @typedef {(typeof spans)[number]} Node */
  const ids = new Set(spans.map((s) => s.key));
  /** @type {Map<string, Node[]>} */
  const children = new Map();
  /** @type {Node[]} */
  const roots = [];
  for (const s of spans) {
    const parent = s.parentSpanId ? s.entry.traceId + s.parentSpanId : '';
    if (parent && ids.has(parent)) {
      const list = children.get(parent);
      if (list) list.push(s);
      else children.set(parent, [s]);
    } else {
      roots.push(s);
    }
  }
  /** @type {string[]} */
  const lines = [];
  /** @param {Node} node @param {string} lead @param {string} indent @param {string} [suffix] */
  const walk = (node, lead, indent, suffix = '') => {
    if (lines.length >= MAX_TREE_LINES) return;
    lines.push(lead + spanLabel(node.entry.item) + suffix);
    const kids = earliest(children.get(node.key) ?? [], MAX_TREE_LINES - lines.length);
    kids.forEach((kid, i) => {
      const last = i === kids.length - 1;
      walk(kid, `${indent}${last ? '└─ ' : '├─ '}`, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  for (const root of earliest(roots, MAX_TREE_LINES)) walk(root, '  ', '  ', root.entry.traceId ? `  · trace ${root.entry.traceId.slice(0, 8)}` : '');
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
