/**
 * The lineage reads of the PostgreSQL engine: a compression chain's tip,
 * the session a resume continues, a session's ancestors and descendants,
 * and the chain a conversation with its ancestors reads, each through the
 * store's query.
 *
 * @module
 */
import { checkKeyText } from "../core/session_options.ts";
import type { SessionRow } from "../core/types.ts";
import { MAX_LINEAGE_DEPTH } from "../core/lineage_depth.ts";
import type { PgQuery } from "./_client_types.ts";
import { SESSION_COLUMNS } from "./_rows.ts";

const MAX_COMPRESSION_STEPS = 100;
const MAX_RESUME_STEPS = 32;
const MAX_CONVERSATION_LINEAGE = 100;

/**
 * The newest continuation of a compressed session, followed down its
 * chain: `id` itself when it was not compressed.
 *
 * @param query The store's query.
 * @param id A session id.
 * @returns The id of the chain's tip.
 */
export async function compressionTipPg(query: PgQuery, id: string): Promise<string> {
  checkKeyText("find compression tip", "id", id);
  let current = id;
  for (let step = 0; step < MAX_COMPRESSION_STEPS; step++) {
    const rows = await query(
      `SELECT id FROM sessions
         WHERE parent_session_id = $1
           AND started_at >= (SELECT ended_at FROM sessions WHERE id = $1 AND end_reason = 'compression')
         ORDER BY started_at DESC LIMIT 1`,
      [current],
    );
    if (rows.length === 0) return current;
    current = rows[0].id as string;
  }
  return current;
}

/**
 * The session a resume of `id` continues: `id` when it has messages, else
 * its newest descendant with messages (down at most 32 steps), else `id`.
 *
 * @param query The store's query.
 * @param id A session id.
 * @returns The id to resume.
 */
export async function resumeSessionIdPg(query: PgQuery, id: string): Promise<string> {
  checkKeyText("resolve resume session", "id", id);
  if (!id) return id;
  const hasMessages = async (sessionId: string) =>
    (await query("SELECT 1 FROM messages WHERE session_id = $1 LIMIT 1", [sessionId]))
      .length > 0;
  if (await hasMessages(id)) return id;
  const seen = new Set([id]);
  let current = id;
  for (let step = 0; step < MAX_RESUME_STEPS; step++) {
    const rows = await query(
      `SELECT id FROM sessions WHERE parent_session_id = $1
         ORDER BY started_at DESC, id COLLATE "C" DESC LIMIT 1`,
      [current],
    );
    const child = rows[0]?.id as string | undefined;
    if (!child || seen.has(child)) return id;
    seen.add(child);
    if (await hasMessages(child)) return child;
    current = child;
  }
  return id;
}

/**
 * A session and its ancestors, nearest first, each read by `readSession`.
 *
 * @param id A session id.
 * @param readSession The store's `getSession`.
 * @returns The rows, none when `id` is unknown.
 */
export async function ancestorsPg(
  id: string,
  readSession: (id: string) => Promise<SessionRow | undefined>,
): Promise<SessionRow[]> {
  checkKeyText("read ancestors", "id", id);
  const rows: SessionRow[] = [];
  const seen = new Set<string>();
  let current: string | null = id;
  while (current !== null && !seen.has(current) && rows.length <= MAX_LINEAGE_DEPTH) {
    const row: SessionRow | undefined = await readSession(current);
    if (row === undefined) break;
    rows.push(row);
    seen.add(current);
    current = row.parent_session_id;
  }
  return rows;
}

/**
 * A session and its descendants, by depth, then start.
 *
 * @param query The store's query.
 * @param id A session id.
 * @returns The rows, none when `id` is unknown.
 */
export async function descendantsPg(query: PgQuery, id: string): Promise<SessionRow[]> {
  checkKeyText("read descendants", "id", id);
  return await query(
    `WITH RECURSIVE tree(id, depth) AS (
         SELECT id, 0 FROM sessions WHERE id = $1
         UNION ALL
         SELECT child.id, tree.depth + 1
         FROM tree JOIN sessions child ON child.parent_session_id = tree.id
         WHERE tree.depth < $2 AND child.id != $1
       )
       SELECT ${SESSION_COLUMNS} FROM tree JOIN sessions s ON s.id = tree.id
       ORDER BY tree.depth, s.started_at, s.id COLLATE "C"`,
    [id, MAX_LINEAGE_DEPTH],
  ) as SessionRow[];
}

/**
 * The ids of a session's lineage, root first, `sessionId` last (at most
 * 100), for a conversation with its ancestors.
 *
 * @param query The store's query.
 * @param sessionId A session id.
 * @returns The ids.
 */
export async function lineageRootToTipPg(query: PgQuery, sessionId: string): Promise<string[]> {
  if (!sessionId) return [sessionId];
  const chain: string[] = [];
  const seen = new Set<string>();
  let current: unknown = sessionId;
  for (let step = 0; step < MAX_CONVERSATION_LINEAGE; step++) {
    if (typeof current !== "string" || current === "" || seen.has(current)) break;
    seen.add(current);
    chain.push(current);
    const rows = await query("SELECT parent_session_id FROM sessions WHERE id = $1", [
      current,
    ]);
    if (rows.length === 0) break;
    current = rows[0].parent_session_id;
  }
  return chain.reverse();
}
