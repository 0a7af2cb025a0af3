// GET /api/snapshot: what a scenario produced, as a document that is the same every time the scenario runs,
// for a golden file. Ids become labels given in a canonical order (T1, T1.S2), timestamps are dropped (or
// kept as order, or as durations relative to the trace), attributes are sorted and volatile ones masked,
// and siblings, traces and logs are ordered by content, so neither arrival order nor timing shows.
import { hasList, listing } from '../query/engine.js';
import { scanAll, Slicer } from '../query/scan.js';
import { attributesObject, plainValue } from '../query/views.js';
import { logTime } from '../query/filters.js';
import { compareNanos } from '../otlp/model.js';
import { compilePattern } from '../query/pattern.js';
import { perSignal } from '../otlp/signals.js';

/**
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {'drop'|'order'|'relative'} TimesMode
 * @typedef {{ signals: import('../otlp/signals.js').SignalName[], filters: Record<string, unknown>, mask: Pattern[], times: TimesMode }} SnapshotOptions
 * @typedef {import('../query/pattern.js').Pattern} Pattern
 * @typedef {{ e: Entry, span: any, children: Node[], key: string, view: Record<string, any>, label: string }} Node
 */

/** Attributes that differ between runs of the same scenario: process, host and instance identity, ports, SDK versions. */
export const VOLATILE_ATTRIBUTES = [
  'service.instance.id',
  'host.*',
  'os.*',
  'process.*',
  'container.*',
  'k8s.pod.*',
  'k8s.node.*',
  'telemetry.sdk.version',
  'telemetry.distro.version',
  'thread.id',
  'thread.name',
  'client.port',
  'server.port',
  'network.peer.port',
  'network.local.port',
  'net.peer.port',
  'net.host.port',
  'net.sock.*',
  'url.full',
  'http.url',
  'user_agent.original',
  'http.user_agent',
  'exception.stacktrace',
];
export const MASKED = '<masked>';
/** How deep a trace's spans may nest in a snapshot. */
export const MAX_SNAPSHOT_DEPTH = 1000;
/** How many characters the ordering keys of one snapshot's spans may take: a span's key holds its subtree. */
const MAX_KEY_CHARS = 64 * 1024 * 1024;
/** The most items (spans, log records, metric series) one snapshot holds: it is a golden file, built and sent whole. */
export const MAX_SNAPSHOT_ITEMS = 10_000;

/** A snapshot that would hold more than MAX_SNAPSHOT_ITEMS. */
export class SnapshotTooLarge extends Error {}
const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS = ['unset', 'ok', 'error'];

/**
 * A name pattern: `host.*` (glob) or `/^process\./` (regular expression, RE2 syntax).
 * @param {string} pattern @returns {Pattern} @throws {import('../query/pattern.js').PatternError}
 */
export function maskPattern(pattern) {
  const re = /^\/(.*)\/$/.exec(pattern);
  return re ? compilePattern(re[1]) : globPattern(pattern);
}

/** `*` stands for any run of characters; a glob needs no regular expression. @param {string} glob @returns {Pattern} */
function globPattern(glob) {
  const parts = glob.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  const test = (/** @type {string} */ text) => {
    if (parts.length === 1) return text === glob;
    if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (let i = 1; i < parts.length - 1; i++) {
      const found = text.indexOf(parts[i], at);
      if (found < 0 || found + parts[i].length > end) return false;
      at = found + parts[i].length;
    }
    return true;
  };
  return { source: glob, maxChars: Infinity, test };
}

/**
 * Whether an attribute key is masked, remembered per key: a snapshot asks it of the same few keys on every item, and
 * a regular expression's engine took a tenth of a large snapshot's time answering it again.
 * @param {Pattern[]} mask @returns {(key: string) => boolean}
 */
function maskedKeys(mask) {
  /** @type {Map<string, boolean>} */
  const known = new Map();
  return (key) => {
    let masked = known.get(key);
    if (masked === undefined) known.set(key, (masked = mask.some((re) => re.test(key))));
    return masked;
  };
}

/** @param {Record<string, any>} attrs @param {(key: string) => boolean} masked @returns {Record<string, any>} sorted by key, volatile values masked */
function normalAttributes(attrs, masked) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const key of Object.keys(attrs).sort()) out[key] = masked(key) ? MASKED : attrs[key];
  return out;
}

/**
 * Fields left out when they say nothing: empty attributes, an unset status, no children. Copied rather than deleted
 * from: an object that lost properties is slower to build on and to write as JSON.
 * @param {Record<string, any>} o
 */
function compact(o) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const k in o) {
    const v = o[k];
    if (v === undefined || v === '' || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && isEmpty(v))) continue;
    out[k] = v;
  }
  return out;
}

/** @param {object} o */
function isEmpty(o) {
  for (const _ in o) return false;
  return true;
}

/** @param {string} a @param {string} b */
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * @param {Store} store @param {import('../store/journal.js').Journal} journal @param {SnapshotOptions} options
 * @throws {import('../query/params.js').QueryError} a filter the list queries would refuse
 */
export async function snapshot(store, journal, { signals, filters, mask, times }) {
  const sources = { store, journal };
  const masked = maskedKeys(mask);
  // Parsed before anything is read, so that a bad filter is refused whatever is stored.
  // Spans come as trees, one per trace: the trace list chooses them.
  const lists = perSignal((s) => (signals.includes(s.name) && hasList(s) ? listing(s.traceIndex ? 'traces' : s.listKind, filters, sources) : null));
  /** @type {Map<string, Record<string, any>>} */
  const resources = new Map();
  /** The resources already noted: items of one batch, and often of one sender, share theirs. @type {Set<object>} */
  const noted = new Set();
  /** @param {Entry} e */
  const noteResource = (e) => {
    if (noted.has(e.ctx.resource)) return;
    noted.add(e.ctx.resource);
    const attrs = normalAttributes(attributesObject(e.ctx.resource.attributes), masked);
    resources.set(JSON.stringify(attrs), attrs);
  };
  /** @type {Record<string, any>} */
  const doc = {};
  /** @type {Map<string, Node>} span id → node, for labels that logs and links refer to */
  const bySpanId = new Map();
  /** @type {Map<string, string>} trace id → label */
  const traceLabels = new Map();
  /** @type {Set<Node>} */
  const referenced = new Set();
  /** @type {{ label: string, roots: Node[], startNs: string, key: string }[]} */
  const traces = [];
  let items = 0;
  /** @param {number} n @param {string} noun */
  const take = (n, noun) => {
    items += n;
    if (items > MAX_SNAPSHOT_ITEMS)
      throw new SnapshotTooLarge(
        `the snapshot would hold more than ${MAX_SNAPSHOT_ITEMS} spans, log records and metric series (the limit), reached at ${noun}: narrow it with signal= and filters such as service=, attr.<key>=, from= and to=`,
      );
  };
  const slicer = new Slicer(1);
  const keyBudget = { left: MAX_KEY_CHARS };

  if (lists.traces) {
    const match = lists.traces.match;
    /** @type {import('../store/store.js').TraceSpans[]} */
    const chosen = [];
    await scanAll(
      store.eachTrace(),
      (t) => {
        if (t.head < t.entries.length && match(t)) chosen.push(t);
      },
      lists.traces.prepare,
    );
    for (const t of chosen) take(t.entries.length - t.head, 'spans');
    for (const t of chosen) {
      if (slicer.due()) await slicer.pause();
      /** @type {Map<string, Node>} */
      const nodes = new Map();
      for (const e of t.stored()) {
        noteResource(e);
        nodes.set(e.item.spanId, { e, span: e.item, children: [], key: '', view: {}, label: '' });
      }
      /** @type {Node[]} */
      const roots = [];
      for (const node of nodes.values()) {
        const parent = node.span.parentSpanId ? nodes.get(node.span.parentSpanId) : undefined;
        (parent ? parent.children : roots).push(node);
      }
      let startNs = '0';
      for (const n of nodes.values()) if (startNs === '0' || compareNanos(n.span.startTimeUnixNano, startNs) < 0) startNs = n.span.startTimeUnixNano;
      checkDepth(roots);
      for (const root of roots) keyOf(root, masked, times, keyBudget);
      sortNodes(roots, times);
      traces.push({ label: '', roots, startNs, key: traceKey(roots) });
    }
    traces.sort((a, b) => (times !== 'drop' ? compareNanos(a.startNs, b.startNs) : 0) || cmp(a.key, b.key));
    for (const [i, t] of traces.entries()) {
      if (slicer.due()) await slicer.pause();
      t.label = `T${i + 1}`;
      let n = 0;
      const label = (/** @type {Node} */ node) => {
        node.label = `${t.label}.S${++n}`;
        bySpanId.set(node.span.spanId, node);
        traceLabels.set(node.span.traceId, t.label);
        node.children.forEach(label);
      };
      t.roots.forEach(label);
    }
  }

  /** A span or trace someone refers to, by label. @param {string} traceId @param {string} spanId */
  const refer = (traceId, spanId) => {
    const node = spanId ? bySpanId.get(spanId) : undefined;
    if (node) {
      referenced.add(node);
      return node.label;
    }
    return traceId ? (traceLabels.get(traceId) ?? 'not in this snapshot') : undefined;
  };

  if (lists.logs) {
    const match = lists.logs.match;
    /** @type {{ key: string, time: string, view: Record<string, any> }[]} */
    const logs = [];
    await scanAll(store.ring('logs'), (e) => {
      if (!match(e)) return;
      take(1, 'log records');
      noteResource(e);
      const l = e.item;
      const view = compact({
        service: e.ctx.service,
        scope: e.ctx.scope.name,
        severity: l.severityNumber,
        severityText: l.severityText,
        eventName: l.eventName,
        body: plainValue(l.body),
        attributes: normalAttributes(attributesObject(l.attributes), masked),
        span: refer(l.traceId, l.spanId),
      });
      logs.push({ key: JSON.stringify({ ...view, span: undefined }), time: logTime(/** @type {import('../otlp/model.js').LogEntry} */ (e)), view });
    });
    logs.sort((a, b) => (times !== 'drop' ? compareNanos(a.time, b.time) : 0) || cmp(a.key, b.key));
    doc.logs = logs.map((l) => l.view);
  }

  if (lists.metrics) {
    const match = lists.metrics.match;
    /** @type {Map<string, { metric: Record<string, any>, series: Map<string, { seq: number, point: Record<string, any> }> }>} */
    const metrics = new Map();
    await scanAll(store.ring('metrics'), (e) => {
      if (!match(e)) return;
      noteResource(e);
      const m = e.ctx.metric;
      const id = JSON.stringify([e.ctx.service, m.name, m.type, m.unit]);
      let entry = metrics.get(id);
      if (!entry) metrics.set(id, (entry = { metric: compact({ service: e.ctx.service, name: m.name, type: m.type, unit: m.unit }), series: new Map() }));
      const attributes = normalAttributes(attributesObject(e.item.attributes), masked);
      const key = JSON.stringify(attributes);
      const last = entry.series.get(key);
      if (!last) take(1, 'metric series');
      // The latest point of each series: how many points arrived depends on the export interval.
      if (!last || last.seq < e.seq) entry.series.set(key, { seq: e.seq, point: compact({ attributes, ...pointValue(m.type, e.item) }) });
    });
    doc.metrics = [...metrics.entries()]
      .sort((a, b) => cmp(a[0], b[0]))
      .map(([, { metric, series }]) => ({ ...metric, series: [...series.entries()].sort((a, b) => cmp(a[0], b[0])).map(([, s]) => s.point) }));
  }

  // The lists that write their own part (engine.js Listing `snapshot`), in the table's order.
  for (const [name, list] of Object.entries(lists)) {
    if (!list?.snapshot) continue;
    const { match } = list;
    /** @type {Entry[]} */
    const matching = [];
    await scanAll(store.ring(/** @type {import('../otlp/signals.js').SignalName} */ (name)), (e) => {
      if (!match(e)) return;
      noteResource(e);
      matching.push(e);
    });
    doc[name] = await list.snapshot(matching, take);
  }

  if (lists.traces) {
    // Links mark the spans they point at before any span is written, so that those carry their label.
    const linking = (/** @type {Node} */ node) => {
      for (const l of node.span.links) refer(l.traceId, l.spanId);
      node.children.forEach(linking);
    };
    for (const t of traces) {
      t.roots.forEach(linking);
      if (slicer.due()) await slicer.pause();
    }
    doc.traces = [];
    for (const t of traces) {
      doc.traces.push({ trace: t.label, spans: t.roots.map((r) => render(r, refer, referenced, times, t.startNs)) });
      if (slicer.due()) await slicer.pause();
    }
  }
  const ordered = { resources: [...resources.entries()].sort((a, b) => cmp(a[0], b[0])).map(([, r]) => r), ...doc };
  return ordered;
}

/** @param {string} type @param {any} p */
function pointValue(type, p) {
  if (type === 'gauge' || type === 'sum') return { value: p.asDouble ?? (p.asInt !== undefined ? Number(p.asInt) : undefined) };
  return { count: Number(p.count) };
}

/** @param {Node[]} roots */
const traceKey = (roots) => roots.map((r) => r.key).join('\n');

/** Trees are walked by recursion: their depth is checked first, without it. @param {Node[]} roots */
function checkDepth(roots) {
  let level = roots;
  for (let depth = 1; level.length; depth++) {
    if (depth > MAX_SNAPSHOT_DEPTH)
      throw new SnapshotTooLarge(
        `a trace nests spans more than ${MAX_SNAPSHOT_DEPTH} deep, the most a snapshot takes: leave it out with filters such as traceId= or service=`,
      );
    level = level.flatMap((n) => n.children);
  }
}

/**
 * The node's content and its subtree's, which orders siblings whatever their ids and arrival. Children's
 * keys are written in as they are, not as quoted strings: quoting them again at each level doubled the
 * escapes per level, and a chain of 28 spans took gigabytes. Each key still holds its subtree, so the
 * keys of a snapshot together are held to a budget.
 * @param {Node} node @param {(key: string) => boolean} masked @param {TimesMode} times @param {{ left: number }} budget characters of keys left
 */
function keyOf(node, masked, times, budget) {
  for (const c of node.children) keyOf(c, masked, times, budget);
  sortNodes(node.children, times);
  node.view = ownView(node, masked);
  node.key = `[${JSON.stringify(node.view)},[${node.children.map((c) => c.key).join(',')}]]`;
  budget.left -= node.key.length;
  if (budget.left < 0)
    throw new SnapshotTooLarge(
      `the snapshot's traces nest too deep to order (their spans' content, counted once per ancestor, passes ${MAX_KEY_CHARS} characters): narrow it with filters such as traceId= or service=`,
    );
  return node.key;
}

/** @param {Node[]} nodes @param {TimesMode} times */
function sortNodes(nodes, times) {
  nodes.sort((a, b) => (times !== 'drop' ? compareNanos(a.span.startTimeUnixNano, b.span.startTimeUnixNano) : 0) || cmp(a.key, b.key));
}

/** What a span is, without ids or times. @param {Node} node @param {(key: string) => boolean} masked */
function ownView({ e, span }, masked) {
  return compact({
    name: span.name,
    service: e.ctx.service,
    scope: e.ctx.scope.name,
    kind: SPAN_KINDS[span.kind] ?? span.kind,
    status: span.status.code ? (STATUS[span.status.code] ?? span.status.code) : undefined,
    statusMessage: span.status.message,
    attributes: normalAttributes(attributesObject(span.attributes), masked),
    events: span.events.map((/** @type {any} */ ev) => compact({ name: ev.name, attributes: normalAttributes(attributesObject(ev.attributes), masked) })),
    links: span.links.map((/** @type {any} */ l) => compact({ attributes: normalAttributes(attributesObject(l.attributes), masked) })),
  });
}

/**
 * @param {Node} node @param {(traceId: string, spanId: string) => string|undefined} refer @param {Set<Node>} referenced
 * @param {TimesMode} times @param {string} traceStart
 * @returns {Record<string, any>}
 */
function render(node, refer, referenced, times, traceStart) {
  const view = { ...node.view };
  if (node.span.links.length)
    view.links = node.span.links.map((/** @type {any} */ l, /** @type {number} */ i) => ({ to: refer(l.traceId, l.spanId), ...(view.links?.[i] ?? {}) }));
  /** @type {Record<string, any>} */
  const out = referenced.has(node) ? { id: node.label, ...view } : view;
  if (times === 'relative') {
    out.startMs = ms(node.span.startTimeUnixNano, traceStart);
    out.durationMs = ms(node.span.endTimeUnixNano, node.span.startTimeUnixNano);
  }
  if (node.children.length) out.children = node.children.map((c) => render(c, refer, referenced, times, traceStart));
  return out;
}

/** Milliseconds between two nanosecond timestamps, to a tenth. @param {string} end @param {string} start */
const ms = (end, start) => Math.round(Number(BigInt(end) - BigInt(start)) / 1e5) / 10;
