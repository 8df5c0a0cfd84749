/**
 * How far the lineage reads go: a family is followed at most this many
 * generations up (`getAncestors`) and down (`getDescendants`), so that a
 * cycle or an endless chain cannot make a read endless. The CLI's
 * `lineage` says where a tree it draws is cut by it, and the web view marks
 * a cut above.
 *
 * @module
 */
import type { SessionStore } from "./session_store.ts";
import type { SessionRow } from "./types.ts";

/** Generations `getAncestors` and `getDescendants` follow at most. */
export const MAX_LINEAGE_DEPTH = 1000;

/**
 * Where a family goes on above the ancestors a walk up read: the parent of the last of
 * `ancestors` when that parent is a stored session the walk did not reach (it stopped at
 * {@linkcode MAX_LINEAGE_DEPTH} generations). `undefined` when the last ancestor is a root, when
 * its parent is not stored (deleted, pruned, or never copied here), or when its parent is already
 * among `ancestors` (a cycle a damaged file may hold: nothing lies above it).
 *
 * @param store The open store (only its `getSession` is read).
 * @param ancestors What `getAncestors(id)` answered: the session itself first, then its parent,
 *   and so on up.
 * @returns The id of the first session above the cut, or `undefined` when nothing is cut above.
 */
export async function parentAboveCut(
  store: Pick<SessionStore, "getSession">,
  ancestors: readonly SessionRow[],
): Promise<string | undefined> {
  const parent = ancestors[ancestors.length - 1]?.parent_session_id ?? null;
  if (parent === null || ancestors.some((row) => row.id === parent)) return undefined;
  return (await store.getSession(parent)) === undefined ? undefined : parent;
}
