/**
 * Lineage: sessions linked by `parent_session_id`. Compression ends a session
 * (`end_reason = 'compression'`) and continues it in a child started after
 * that end; `/branch` does the same with `branched`; delegates (subagents)
 * are children started while the parent was still live.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { sessionsRead } from "./schema/read_views.ts";
import type { SessionRow } from "../core/types.ts";
import { MAX_LINEAGE_DEPTH } from "../core/lineage_depth.ts";
import { checkKeyText } from "../core/session_options.ts";

/** Steps a compression chain is followed at most (Python's bound). */
const MAX_COMPRESSION_STEPS = 100;
/** Steps `resolveResumeSessionId` walks down at most (Python's bound). */
const MAX_RESUME_STEPS = 32;

/** Implements `SessionDB.getCompressionTip`: walks compression continuations forward. */
export function getCompressionTip(store: Store, id: string): string {
  checkKeyText("find compression tip", "id", id);
  const next = store.statement(
    `SELECT id FROM sessions
     WHERE parent_session_id = ?
       AND started_at >= (SELECT ended_at FROM sessions WHERE id = ? AND end_reason = 'compression')
     ORDER BY started_at DESC LIMIT 1`,
  );
  let current = id;
  for (let step = 0; step < MAX_COMPRESSION_STEPS; step++) {
    const row = next.get(current, current);
    if (row === undefined) return current;
    current = row.id as string;
  }
  return current;
}

/**
 * Implements `SessionDB.resolveResumeSessionId`: the first session down the chain with messages.
 */
export function resolveResumeSessionId(store: Store, id: string): string {
  checkKeyText("resolve resume session", "id", id);
  if (!id) return id;
  const hasMessages = store.statement(
    "SELECT 1 AS found FROM messages WHERE session_id = ? LIMIT 1",
  );
  const youngestChild = store.statement(
    "SELECT id FROM sessions WHERE parent_session_id = ? ORDER BY started_at DESC, id DESC LIMIT 1",
  );
  if (hasMessages.get(id) !== undefined) return id;
  const seen = new Set([id]);
  let current = id;
  for (let step = 0; step < MAX_RESUME_STEPS; step++) {
    const child = youngestChild.get(current)?.id as string | undefined;
    if (!child || seen.has(child)) return id;
    seen.add(child);
    if (hasMessages.get(child) !== undefined) return child;
    current = child;
  }
  return id;
}

/** Implements `SessionDB.getAncestors`: self, then parents up to the root, cycle safe. */
export function getAncestors(store: Store, id: string): SessionRow[] {
  checkKeyText("read ancestors", "id", id);
  const byId = store.statement(`SELECT * FROM ${sessionsRead(store)} WHERE id = ?`);
  const rows: SessionRow[] = [];
  const seen = new Set<string>();
  let current: string | null = id;
  while (current !== null && !seen.has(current) && rows.length <= MAX_LINEAGE_DEPTH) {
    const row = byId.get(current) as SessionRow | undefined;
    if (row === undefined) break;
    rows.push(row);
    seen.add(current);
    current = row.parent_session_id;
  }
  return rows;
}

/** Implements `SessionDB.getDescendants`: a recursive CTE, breadth first, cycle safe. */
export function getDescendants(store: Store, id: string): SessionRow[] {
  checkKeyText("read descendants", "id", id);
  // Every session has at most one parent, so a session can be reached twice
  // only through a cycle that passes through the starting session: refusing
  // to re-enter it is enough to visit each descendant exactly once.
  return store.statement(
    `WITH RECURSIVE tree(id, depth) AS (
       SELECT id, 0 FROM sessions WHERE id = ?
       UNION ALL
       SELECT child.id, tree.depth + 1
       FROM tree JOIN sessions child ON child.parent_session_id = tree.id
       WHERE tree.depth < ? AND child.id != ?
     )
     SELECT s.* FROM tree JOIN ${sessionsRead(store)} s ON s.id = tree.id
     ORDER BY tree.depth, s.started_at, s.id`,
  ).all(id, MAX_LINEAGE_DEPTH, id) as SessionRow[];
}
