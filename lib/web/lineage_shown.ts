/**
 * A session's family tree cut to what a side panel can show: at most
 * {@linkcode MAX_SHOWN} sessions off the current one's path and {@linkcode MAX_CHILDREN} children of
 * one session, long single-child runs (a compression chain of thousands)
 * shortened to their ends, and every cut said on the node where it was
 * made. The session being viewed and its path from the root are always
 * shown.
 *
 * @module
 */
import type { LineageTreeNode } from "../render/lineage_tree.ts";

/** Sessions shown at most beside the path to the current one (which a shortened run keeps short). */
export const MAX_SHOWN = 200;
/** Children of one session shown at most (the one on the current path comes on top). */
export const MAX_CHILDREN = 30;
/** A single-child run longer than this is shortened to its ends (and the current session). */
export const MAX_RUN = 7;

/** One session of {@linkcode shownLineage}'s tree. */
export interface ShownLineageNode extends Omit<LineageTreeNode, "children"> {
  /** Its children shown, oldest first. */
  children: ShownLineageNode[];
  /** How many sessions between its parent and it are left out (a run shortened). */
  skipped?: number;
  /** How many of its descendants are left out (too many children, or too many sessions). */
  hidden?: number;
}

/** How many descendants each node of `root` has, by node. */
function descendantCounts(root: LineageTreeNode): Map<LineageTreeNode, number> {
  const order: LineageTreeNode[] = [root];
  for (let i = 0; i < order.length; i++) order.push(...order[i].children);
  const counts = new Map<LineageTreeNode, number>();
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i];
    counts.set(node, node.children.reduce((sum, kid) => sum + 1 + counts.get(kid)!, 0));
  }
  return counts;
}

/** The nodes shown: the path, then breadth first while the budget lasts. */
function chooseShown(root: LineageTreeNode, path: ReadonlySet<string>): Set<LineageTreeNode> {
  const shown = new Set<LineageTreeNode>([root]);
  const queue = [root];
  let others = 0;
  for (let i = 0; i < queue.length; i++) {
    const onPath = queue[i].children.filter((kid) => path.has(kid.id));
    const offPath = queue[i].children.filter((kid) => !path.has(kid.id));
    const room = Math.max(0, MAX_CHILDREN - onPath.length);
    for (const kid of [...onPath, ...offPath.slice(0, room)]) {
      if (!path.has(kid.id) && others++ >= MAX_SHOWN) continue;
      shown.add(kid);
      queue.push(kid);
    }
  }
  return shown;
}

/** The shown part of `node`'s tree, with the counts of what is left out. */
function copyShown(
  node: LineageTreeNode,
  shown: ReadonlySet<LineageTreeNode>,
  counts: ReadonlyMap<LineageTreeNode, number>,
): ShownLineageNode {
  const { children, ...fields } = node;
  const out: ShownLineageNode = { ...fields, children: [] };
  let hidden = 0;
  for (const kid of children) {
    if (shown.has(kid)) out.children.push(copyShown(kid, shown, counts));
    else hidden += 1 + counts.get(kid)!;
  }
  if (hidden > 0) out.hidden = hidden;
  return out;
}

/** Shortens every single-child run longer than {@linkcode MAX_RUN}, keeping `current`. */
function shortenRuns(node: ShownLineageNode, current: string): void {
  const run = [node];
  let last = node;
  while (last.children.length === 1 && last.hidden === undefined) {
    last = last.children[0];
    run.push(last);
  }
  if (run.length > MAX_RUN) {
    const at = run.findIndex((n) => n.id === current);
    const kept = run.filter((_, i) =>
      i < 2 || i >= run.length - 2 || (at >= 0 && Math.abs(i - at) <= 1)
    );
    for (let k = 0; k < kept.length - 1; k++) {
      const gap = run.indexOf(kept[k + 1]) - run.indexOf(kept[k]) - 1;
      kept[k].children = [kept[k + 1]];
      if (gap > 0) kept[k + 1].skipped = gap;
    }
  }
  for (const kid of last.children) shortenRuns(kid, current);
}

/**
 * `tree` cut to a side panel's size, keeping `path` (the root's line down
 * to `current`).
 *
 * @param tree The whole tree.
 * @param path The ids from the tree's root to the current session.
 * @param current The session being viewed.
 * @returns The tree shown.
 *
 * @example
 * ```ts
 * import { shownLineage } from "./lineage_shown.ts";
 * const node = (id: string, children: never[] = []) =>
 *   ({ id, title: null, source: "cli", started_at: 0, ended_at: null, end_reason: null,
 *     message_count: 0, relation: "child", children }) as never;
 * const wide = node("root", Array.from({ length: 100 }, (_, i) => node(`k${i}`)) as never);
 * const shown = shownLineage(wide, ["root", "k99"], "k99");
 * console.assert(shown.children.some((kid) => kid.id === "k99") && shown.hidden === 70);
 * ```
 */
export function shownLineage(
  tree: LineageTreeNode,
  path: readonly string[],
  current: string,
): ShownLineageNode {
  const shown = chooseShown(tree, new Set(path));
  const root = copyShown(tree, shown, descendantCounts(tree));
  shortenRuns(root, current);
  return root;
}
