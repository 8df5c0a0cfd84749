/**
 * The context of search hits: the previous, the matching and the next
 * message of the same session (in `timestamp, id` order), each cut to 200
 * characters. One query serves every hit of a page.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { ContextMessage } from "../../core/types.ts";
import { contextText, NotTextError } from "../../core/content.ts";
import { blobAsText } from "../../core/blob_text.ts";

/** The longest context content, in code points. */
const CONTEXT_LENGTH = 200;

/**
 * For each hit (bound as a JSON array of ids, in page order), up to three
 * rows: `pos` 0 the previous message, 1 the hit, 2 the next one. The
 * `timestamp <=` / `>=` bound lets the session index seek; the OR breaks
 * ties on `id`, exactly as Python's per-hit query does.
 */
export const CONTEXT_SQL = `
WITH hit(ord, id) AS (SELECT key, value FROM json_each(?)),
target AS (
  SELECT hit.ord, m.id, m.session_id, m.timestamp
  FROM hit JOIN messages m ON m.id = hit.id
)
SELECT t.ord AS ord, 0 AS pos, p.role AS role, p.content AS content
FROM target t JOIN messages p ON p.id = (
  SELECT x.id FROM messages x
  WHERE x.session_id = t.session_id AND x.timestamp <= t.timestamp
    AND (x.timestamp < t.timestamp OR x.id < t.id)
  ORDER BY x.timestamp DESC, x.id DESC LIMIT 1
)
UNION ALL
SELECT t.ord, 1, m.role, m.content FROM target t JOIN messages m ON m.id = t.id
UNION ALL
SELECT t.ord, 2, n.role, n.content
FROM target t JOIN messages n ON n.id = (
  SELECT x.id FROM messages x
  WHERE x.session_id = t.session_id AND x.timestamp >= t.timestamp
    AND (x.timestamp > t.timestamp OR x.id > t.id)
  ORDER BY x.timestamp ASC, x.id ASC LIMIT 1
)
ORDER BY 1, 2`;

/**
 * The context of each hit, in one query.
 *
 * @param store The open store.
 * @param ids The hit ids, in page order.
 * @returns One list per id: previous, hit, next (each when present).
 */
export function hitContexts(store: Store, ids: readonly number[]): ContextMessage[][] {
  const contexts: ContextMessage[][] = ids.map(() => []);
  if (ids.length === 0) return contexts;
  const failed = new Set<number>();
  const rows = store.statement(CONTEXT_SQL).all(JSON.stringify(ids));
  rows.sort((a, b) => Number(a.ord) - Number(b.ord) || Number(a.pos) - Number(b.pos));
  for (const row of rows) {
    const ord = Number(row.ord);
    if (failed.has(ord)) continue;
    try {
      const content = contextText(row.content, CONTEXT_LENGTH);
      contexts[ord].push({ role: blobAsText(row.role) as string, content });
    } catch (error) {
      if (!(error instanceof NotTextError)) throw error;
      // Python catches the failure and gives this hit an empty context.
      failed.add(ord);
      contexts[ord] = [];
    }
  }
  return contexts;
}
