import { place, type Span01 } from './Timeline';
import type { Node, Tree } from './traceTree';

/** Narrower than this a span is not drawn on its own but counted in its level's group at that spot. */
export const MIN_PX = 3;
/** The width of the slots tiny spans are grouped in: a group never spans more than this, plus its last span. */
const GROUP_PX = 6;

export interface FlameBlock {
  node: Node;
  left: number;
  width: number;
  px: number;
}

/** Tiny spans of one level drawn as one block: `count` spans, `errors` of them failed, between left and left + width percent. */
export interface FlameGroup {
  depth: number;
  left: number;
  width: number;
  count: number;
  errors: number;
}

export interface FlameLayout {
  blocks: FlameBlock[];
  groups: FlameGroup[];
  /** How many spans the groups stand for. */
  grouped: number;
}

/**
 * What the flame graph draws in a window `widthPx` wide: each span wide enough as its own block, and every
 * narrower one counted in a group (per level, per slot of GROUP_PX), so that nothing in view is left out unsaid.
 */
export function layoutFlame(tree: Tree, win: Span01, widthPx: number): FlameLayout {
  const blocks: FlameBlock[] = [];
  const groups = new Map<string, FlameGroup>();
  let grouped = 0;
  for (const node of tree.ordered) {
    const { left, width } = place(node.offsetMs, node.durationMs, tree.totalMs, win);
    // A span of no duration at the window's start is in view, one that ends there is not.
    if (left >= 100 || left + width < 0 || (width > 0 && left + width === 0)) continue;
    const px = (width / 100) * widthPx;
    if (px >= MIN_PX) {
      blocks.push({ node, left, width, px });
      continue;
    }
    grouped++;
    const slot = Math.floor(((left / 100) * widthPx) / GROUP_PX);
    const key = `${node.depth}:${slot}`;
    const failed = node.span.status.code === 2 ? 1 : 0;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, { depth: node.depth, left, width, count: 1, errors: failed });
      continue;
    }
    const right = Math.max(g.left + g.width, left + width);
    g.left = Math.min(g.left, left);
    g.width = right - g.left;
    g.count++;
    g.errors += failed;
  }
  return { blocks, groups: [...groups.values()], grouped };
}
