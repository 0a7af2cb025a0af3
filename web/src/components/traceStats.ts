import type { Node, Tree } from './traceTree';

const endOf = (n: Node) => n.offsetMs + n.durationMs;

/**
 * The spans on the trace's critical path: from each root, the child that finished last, then the child that
 * finished last before that one started, and so on down; a span nothing waited on is not on it.
 */
export function criticalPath(tree: Tree): Set<string> {
  const on = new Set<string>();
  const stack: { node: Node; until: number }[] = tree.roots.map((node) => ({ node, until: endOf(node) }));
  while (stack.length) {
    const { node, until } = stack.pop()!;
    if (on.has(node.span.spanId)) continue;
    on.add(node.span.spanId);
    let cursor = Math.min(endOf(node), until);
    const children = [...node.children].sort((a, b) => endOf(b) - endOf(a));
    for (const child of children) {
      if (child.offsetMs >= cursor) continue;
      stack.push({ node: child, until: cursor });
      cursor = child.offsetMs;
    }
  }
  return on;
}

/** A span's own time: its duration less the time its children ran within it (overlapping children counted once). */
export function selfMs(n: Node): number {
  const start = n.offsetMs;
  const end = endOf(n);
  const spans = n.children
    .map((c) => [Math.max(start, c.offsetMs), Math.min(end, endOf(c))])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let reach = start;
  for (const [a, b] of spans) {
    if (b <= reach) continue;
    covered += b - Math.max(a, reach);
    reach = b;
  }
  return Math.max(0, n.durationMs - covered);
}

export interface OperationStats {
  service: string;
  name: string;
  count: number;
  errors: number;
  totalMs: number;
  selfMs: number;
  maxMs: number;
}

/** Per operation (service and span name) of one trace: how many spans, their total and self time; most self time first. */
export function operationStats(tree: Tree): OperationStats[] {
  const by = new Map<string, OperationStats>();
  for (const n of tree.ordered) {
    const key = `${n.span.service}\u0000${n.span.name}`;
    let row = by.get(key);
    if (!row) by.set(key, (row = { service: n.span.service, name: n.span.name, count: 0, errors: 0, totalMs: 0, selfMs: 0, maxMs: 0 }));
    row.count++;
    if (n.span.status.code === 2) row.errors++;
    row.totalMs += n.durationMs;
    row.selfMs += selfMs(n);
    row.maxMs = Math.max(row.maxMs, n.durationMs);
  }
  return [...by.values()].sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs);
}
