/**
 * The family tree of a session for the transcript view: its root, then
 * every descendant, each labelled by how it began.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { SessionRow } from "../core/types.ts";

/** How a session relates to its parent. */
export type LineageRelation = "root" | "compression" | "branch" | "child";

/** One node of {@linkcode lineageTree}. */
export interface LineageTreeNode {
  /** The session id. */
  id: string;
  /** Its title. */
  title: string | null;
  /** Its source. */
  source: string;
  /** When it started (Unix seconds). */
  started_at: number;
  /** How it ended, or `null` while open. */
  end_reason: string | null;
  /** Its messages. */
  message_count: number;
  /** How it began. */
  relation: LineageRelation;
  /** Its children, oldest first. */
  children: LineageTreeNode[];
}

/** Nodes shown at most (a pathological tree is cut). */
const MAX_NODES = 500;

function relationOf(parent: SessionRow | undefined, child: SessionRow): LineageRelation {
  if (parent === undefined) return "root";
  const after = parent.ended_at !== null && child.started_at >= parent.ended_at;
  if (after && parent.end_reason === "compression") return "compression";
  if (after && parent.end_reason === "branched") return "branch";
  return "child";
}

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
  const children = new Map<string, SessionRow[]>();
  for (const row of rows.slice(1)) {
    if (row.parent_session_id === null) continue;
    children.set(row.parent_session_id, [...(children.get(row.parent_session_id) ?? []), row]);
  }
  const seen = new Set<string>();
  const node = (row: SessionRow, parent: SessionRow | undefined): LineageTreeNode => {
    seen.add(row.id);
    const kids = (children.get(row.id) ?? [])
      .filter((kid) => !seen.has(kid.id))
      .sort((a, b) => a.started_at - b.started_at || a.id.localeCompare(b.id));
    return {
      id: row.id,
      title: row.title,
      source: row.source,
      started_at: row.started_at,
      end_reason: row.end_reason,
      message_count: row.message_count,
      relation: relationOf(parent, row),
      children: kids.map((kid) => node(kid, row)),
    };
  };
  return node(rows[0] ?? root, undefined);
}
