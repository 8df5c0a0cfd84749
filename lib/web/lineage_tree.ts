/**
 * The family tree of a session for the transcript view: its root, then
 * every descendant, each labelled by how it began.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import { parentAboveCut } from "../core/lineage_depth.ts";
import { buildLineageTree } from "../render/lineage_tree.ts";
import { shownLineage, type ShownLineageNode } from "./lineage_shown.ts";

/** The tree the transcript view shows. */
export interface LineageTree extends ShownLineageNode {
  /**
   * The root shown has a parent that is not shown: the walk up stopped
   * before the real root (a chain deeper than the store walks).
   */
  older?: true;
}

/**
 * The tree `id` belongs to, from its root down, cut to a panel's size (see
 * {@linkcode shownLineage}): `id` and its path from the root always in it.
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
): Promise<LineageTree | undefined> {
  const ancestors = await store.getAncestors(id);
  if (ancestors.length === 0) return undefined;
  const root = ancestors[ancestors.length - 1];
  const [rows, own] = await Promise.all([
    store.getDescendants(root.id),
    root.id === id ? [] : store.getDescendants(id),
  ]);
  // The path down to `id`, and what is under it, are in the tree even when the store's walk
  // down from the root stopped short of them (it goes so many levels deep).
  const listed = new Set(rows.map((row) => row.id));
  const more = [...ancestors.slice(0, -1).reverse(), ...own].filter((row) => {
    if (listed.has(row.id)) return false;
    listed.add(row.id);
    return true;
  });
  const tree = buildLineageTree(rows.length === 0 ? [root, ...more] : [...rows, ...more])!;
  const shown: LineageTree = shownLineage(tree, ancestors.map((row) => row.id).reverse(), id);
  if ((await parentAboveCut(store, ancestors)) !== undefined) shown.older = true;
  return shown;
}
