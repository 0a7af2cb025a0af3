import { api } from '../api';
import { formatDuration, formatValue } from '../format';
import type { AnyValue, Span } from '../generated/api';

export interface Node {
  span: Span;
  children: Node[];
  parent: Node | null;
  depth: number;
  offsetMs: number;
  durationMs: number;
  orphan: boolean;
}

export interface Tree {
  roots: Node[];
  byId: Map<string, Node>;
  /** Every span in tree order (parents before children, siblings by start), whatever is folded. */
  ordered: Node[];
  startNs: bigint;
  totalMs: number;
  maxDepth: number;
  /** In order of first appearance in the tree, so colours go to services as a reader meets them. */
  services: string[];
  errors: number;
}

function safeBigInt(s: string): bigint {
  try {
    return BigInt(s || '0');
  } catch {
    return 0n;
  }
}

/** Parent/child tree with offsets computed exactly from the nanosecond strings. */
export function buildTree(spans: Span[]): Tree {
  let startNs = -1n;
  let endNs = -1n;
  for (const s of spans) {
    const a = safeBigInt(s.startTimeUnixNano);
    const b = safeBigInt(s.endTimeUnixNano);
    if (startNs < 0n || a < startNs) startNs = a;
    if (b > endNs) endNs = b;
  }
  const byId = new Map<string, Node>();
  for (const s of spans) {
    const a = safeBigInt(s.startTimeUnixNano);
    const b = safeBigInt(s.endTimeUnixNano);
    byId.set(s.spanId, {
      span: s,
      children: [],
      parent: null,
      depth: 0,
      offsetMs: Number(a - startNs) / 1e6,
      durationMs: b > a ? Number(b - a) / 1e6 : 0,
      orphan: false,
    });
  }
  const roots: Node[] = [];
  for (const n of byId.values()) {
    const parent = n.span.parentSpanId ? byId.get(n.span.parentSpanId) : undefined;
    if (parent && parent !== n) {
      parent.children.push(n);
      n.parent = parent;
    } else {
      n.orphan = Boolean(n.span.parentSpanId);
      roots.push(n);
    }
  }
  const byStart = (a: Node, b: Node) => a.offsetMs - b.offsetMs;
  for (const n of byId.values()) n.children.sort(byStart);
  roots.sort(byStart);
  const ordered = walk(roots, () => true);
  let maxDepth = 0;
  for (const n of ordered) {
    n.depth = n.parent ? n.parent.depth + 1 : 0;
    maxDepth = Math.max(maxDepth, n.depth);
  }
  return {
    roots,
    byId,
    ordered,
    startNs: startNs < 0n ? 0n : startNs,
    totalMs: endNs > startNs ? Number(endNs - startNs) / 1e6 : 0,
    maxDepth,
    services: [...new Set(ordered.map((n) => n.span.service))],
    errors: spans.filter((s) => s.status.code === 2).length,
  };
}

/** Depth first, parents before children; `open(n)` says whether to go into n's children. A cycle is walked once. */
function walk(roots: Node[], open: (n: Node) => boolean): Node[] {
  const out: Node[] = [];
  const stack = [...roots].reverse();
  const seen = new Set<Node>();
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    out.push(n);
    if (open(n)) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

/** The rows a waterfall shows: every span whose ancestors are unfolded. */
export function visibleRows(tree: Tree, collapsed: Set<string>): Node[] {
  return collapsed.size ? walk(tree.roots, (n) => !collapsed.has(n.span.spanId)) : tree.ordered;
}

/** What find-in-trace searches, per span, in lower case: names, ids, status, attributes, events. */
export function searchText(s: Span): string {
  const parts = [s.name, s.service, s.spanId, s.status.message];
  const attrs = (a: Record<string, AnyValue>) => {
    for (const [k, v] of Object.entries(a)) parts.push(`${k}=${formatValue(v)}`);
  };
  attrs(s.attributes);
  for (const e of s.events) {
    parts.push(e.name);
    attrs(e.attributes);
  }
  return parts.join('\n').toLowerCase();
}

/** The spans, in tree order, whose text contains `needle` (case-insensitive). */
export function findSpans(tree: Tree, texts: string[], needle: string): Node[] {
  const q = needle.trim().toLowerCase();
  if (!q) return [];
  const out: Node[] = [];
  for (let i = 0; i < texts.length; i++) if (texts[i].includes(q)) out.push(tree.ordered[i]);
  return out;
}

/**
 * A span's place in its trace by what it did, not by its ids: the service and name of it and of each
 * ancestor. Two runs of the same request have the same signatures; comparison counts them.
 */
export function signature(n: Node): string {
  const parts: string[] = [];
  for (let p: Node | null = n; p; p = p.parent) parts.push(`${p.span.service}\u0000${p.span.name}`);
  return parts.reverse().join('\u0001');
}

/** How many spans of each signature a tree has. */
export function signatureCounts(tree: Tree): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of tree.ordered) {
    const sig = signature(n);
    counts.set(sig, (counts.get(sig) ?? 0) + 1);
  }
  return counts;
}

type OtlpRequest = { resourceSpans?: { resource?: unknown; scopeSpans?: { spans?: { traceId?: string }[] }[] }[] };

/**
 * The trace as one OTLP/JSON ExportTraceServiceRequest, ready to POST to any /v1/traces: cut from the
 * decoded bodies of the requests that carried its spans, so every value keeps its exact OTLP type.
 * Spans whose request the journal no longer holds are rebuilt from their API form.
 */
export async function traceAsOtlp(traceId: string, spans: Span[]): Promise<{ resourceSpans: unknown[] }> {
  const requestIds = [...new Set(spans.map((s) => s.requestId))];
  const found = new Set<string>();
  const resourceSpans: unknown[] = [];
  for (const id of requestIds) {
    const body = (await api.request(String(id)).catch(() => null))?.body as OtlpRequest | undefined;
    for (const rs of body?.resourceSpans ?? []) {
      const scopeSpans = (rs.scopeSpans ?? []).map((ss) => ({ ...ss, spans: (ss.spans ?? []).filter((s) => s.traceId === traceId) })).filter((ss) => ss.spans.length);
      for (const ss of scopeSpans) for (const s of ss.spans) found.add((s as { spanId?: string }).spanId ?? '');
      if (scopeSpans.length) resourceSpans.push({ ...rs, scopeSpans });
    }
  }
  const rest = spans.filter((s) => !found.has(s.spanId));
  for (const s of rest) {
    resourceSpans.push({
      resource: { attributes: keyValues(s.resource) },
      scopeSpans: [
        {
          scope: { name: s.scope.name, version: s.scope.version },
          spans: [
            {
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId,
              traceState: s.traceState,
              flags: s.flags,
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.startTimeUnixNano,
              endTimeUnixNano: s.endTimeUnixNano,
              attributes: keyValues(s.attributes),
              status: s.status,
              events: s.events.map((e) => ({ ...e, attributes: keyValues(e.attributes) })),
              links: s.links.map((l) => ({ ...l, attributes: keyValues(l.attributes) })),
            },
          ],
        },
      ],
    });
  }
  return { resourceSpans };
}

function keyValues(attrs: Record<string, AnyValue>): { key: string; value: unknown }[] {
  return Object.entries(attrs).map(([key, v]) => ({ key, value: anyValue(v) }));
}

function anyValue(v: AnyValue): unknown {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (v === null) return {};
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: keyValues(v) } };
}

/** Saves text as a file the browser downloads. */
export function download(name: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** What a span's bar says on hover. */
export function spanTitle(s: Span, durationMs: number): string {
  return `${s.service}: ${s.name} · ${formatDuration(durationMs)}${s.status.code === 2 ? ' · error' : ''}`;
}
