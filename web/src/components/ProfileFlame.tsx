import { useMemo } from 'react';
import { FlameBlocks, type FlameBlock } from './FlameGraph';
import { place } from './Timeline';
import type { StackNode } from '../generated/api';

/**
 * A frame's place in the tree: the names from the root's first child down to it joined by `;`, the folded-stack
 * notation flame graph tools share. The root (`all`) is the empty path.
 */
export const framePath = (names: string[]): string => names.join(';');

interface Placed {
  node: StackNode;
  path: string;
  depth: number;
  /** The value of the frames left of it under the root: where it starts. */
  offset: number;
}

/** A function's shade, the same wherever it is drawn: a hash of its name. */
function shadeOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 0xffffffff;
}

function flatten(root: StackNode): Placed[] {
  const out: Placed[] = [];
  const walk = (node: StackNode, names: string[], depth: number, offset: number) => {
    out.push({ node, path: framePath(names), depth, offset });
    let x = offset;
    for (const child of node.children) {
      walk(child, [...names, child.name], depth + 1, x);
      x += child.total;
    }
  };
  walk(root, [], 0, 0);
  return out;
}

/**
 * A profile's (or a filter's) merged stacks as a flame graph: the root across the whole width, each frame as wide
 * as its share of the root's value. A click zooms to a frame (its callers then span the width); `focus` is the
 * zoomed frame's path, `highlight` a function whose frames are marked wherever they are.
 */
export function ProfileFlame({
  tree,
  service,
  focus,
  highlight,
  describe,
  onFocus,
}: {
  tree: StackNode;
  /** The one service the samples are of, whose colour the frames take; none when they are of several. */
  service?: string;
  focus: string;
  highlight: string;
  /** A value in the profile's unit, for the frames' titles. */
  describe: (value: number) => string;
  onFocus: (path: string) => void;
}) {
  const placed = useMemo(() => flatten(tree), [tree]);
  const focused = placed.find((p) => p.path === focus) ?? placed[0];
  const total = tree.total;
  const win = total > 0 ? { a: focused.offset / total, b: (focused.offset + focused.node.total) / total } : { a: 0, b: 1 };
  const maxDepth = placed.reduce((m, p) => Math.max(m, p.depth), 0);
  const share = (v: number) => (total > 0 ? `${+((v / total) * 100).toPrecision(3)}%` : '—');
  const blocks = placed.map((p): FlameBlock => {
    const at = place(p.offset, p.node.total, total, win);
    // The zoomed frame's callers are wider than the window: drawn across it, so their names stay readable.
    const left = Math.max(0, at.left);
    const right = Math.min(100, at.left + at.width);
    return {
      key: p.path,
      left,
      width: right - left,
      depth: p.depth,
      label: p.node.name,
      title: `${p.node.name}\ntotal ${describe(p.node.total)} (${share(p.node.total)}) · self ${describe(p.node.self)} (${share(p.node.self)})`,
      service,
      shade: shadeOf(p.node.name),
      className: `${p.path === focused.path && p.depth > 0 ? 'selected' : ''} ${highlight && p.node.name === highlight ? 'find-match' : ''}`,
      data: { 'data-frame': p.path, 'data-total': String(p.node.total) },
    };
  });
  return (
    <div className="flame-scroll profile-flame">
      <FlameBlocks blocks={blocks} maxDepth={maxDepth} onSelect={(b) => onFocus(b.key === focused.path ? '' : b.key)} />
    </div>
  );
}
