/**
 * The family tree of a session for the transcript view: its root, then
 * every descendant, each labelled by how it began.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import { buildLineageTree, type LineageTreeNode } from "../render/lineage_tree.ts";

/** Nodes shown at most (a pathological tree is cut). */
const MAX_NODES = 500;

/**
 * The tree `id` belongs to, from its root down.
 *
 * @param store The open store.
 * @param id A session id.
 * @returns The root node, or `undefined` for an unknown session.
 *
 * @example
 * ```ts ignore
 * const tree = await lineageTree(store, "20260425_090019_d38f1d");
 * console.log(tree?.id, tree?.children.length);
 * ```
 */
export async function lineageTree(
  store: SessionStore,
  id: string,
): Promise<LineageTreeNode | undefined> {
  const ancestors = await store.getAncestors(id);
  if (ancestors.length === 0) return undefined;
  const root = ancestors[ancestors.length - 1];
  const rows = (await store.getDescendants(root.id)).slice(0, MAX_NODES);
  return buildLineageTree(rows.length === 0 ? [root] : rows);
}
