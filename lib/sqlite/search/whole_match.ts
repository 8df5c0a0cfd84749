/**
 * The snippets FTS5 ends in the middle of a match, chosen again in
 * TypeScript. FTS5's `snippet()` prefers the window that starts at the
 * match's sentence, and counts a match that only starts in that window:
 * a search for `数据库连接池` standing about 40 characters into its
 * sentence showed `我们今天讨论了…>>>数据库连<<<...`, the word the reader
 * looked for cut off. `fts5_snippet.ts` chooses as FTS5 does but counts in
 * a sentence's window only the matches that end in it, so the window
 * centred on the match wins there: `...消息中间件>>>数据库连接池<<<的配置...`.
 *
 * That choice differs from FTS5's only where FTS5's window is a sentence's
 * holding such a match, and such a window ends inside it: its snippet ends
 * in `<<<...`. So only the hits whose snippet ends so are chosen again (their
 * text read from the full-text table), and every other snippet stays FTS5's,
 * the same as on PostgreSQL, which chooses every snippet in TypeScript.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { FtsTable } from "../schema/schema_sql.ts";
import type { HitRow } from "./ranked.ts";
import { cutSnippet, type LongTextColumns } from "./long_snippet.ts";
import { ROWID_PARAM } from "./fts_rowid.ts";

/** How a snippet ends when its window's last token is marked (and the text goes on). */
const ENDS_MARKED = "<<<...";

/** The text of one row of a full-text table, and its other columns, as text. */
function textSql(table: FtsTable, others: LongTextColumns): string {
  const columns = ["content", ...others].map((column, i) => {
    if (!/^\w+$/.test(column)) throw new TypeError(`Not a column name: ${JSON.stringify(column)}`);
    return `CAST("${column}" AS TEXT) AS c${i}`;
  });
  return `SELECT ${columns.join(", ")} FROM ${table} WHERE rowid = ${ROWID_PARAM}`;
}

/**
 * Chooses again, in place, the snippet of each hit whose FTS5 snippet ends
 * with a marked token (`<<<...`), which is where FTS5 may have cut a match.
 *
 * @param store The open store (in the page's read snapshot).
 * @param rows The page's rows (`id` is the full-text rowid).
 * @param table The full-text table they come from.
 * @param match The MATCH expression they were found with; the parser of
 *   `fts5_snippet.ts` must read it (`phraseCount` is not `undefined`).
 * @param others The table's columns after `content` (none in the v11 layout).
 * @returns How many snippets were chosen again.
 * @throws {SqliteError} On a storage failure.
 */
export function wholeMatchSnippets(
  store: Store,
  rows: HitRow[],
  table: FtsTable,
  match: string,
  others: LongTextColumns = [],
): number {
  let count = 0;
  for (const row of rows) {
    if (typeof row.snippet !== "string" || !row.snippet.endsWith(ENDS_MARKED)) continue;
    const found = store.statement(textSql(table, others)).get(row.id);
    if (typeof found?.c0 !== "string") continue;
    const rest = others.map((_, i) => {
      const value = found[`c${i + 1}`];
      return typeof value === "string" ? value : null;
    });
    row.snippet = cutSnippet(table, found.c0, match, rest);
    count++;
  }
  return count;
}
