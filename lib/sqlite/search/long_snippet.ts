/**
 * The snippets of long texts, cut in TypeScript. FTS5's `snippet()` scores
 * a window for each instance of the query against the instances after it:
 * a log a tool printed, holding the searched word on every line, costs it
 * 146 ms at 120,000 characters and 1.2 s at 600,000, and a search pays
 * that for every such hit of its page. `fts5_snippet.ts` gives the same
 * snippet in linear time (16 ms at 120,000 characters), checked against
 * `snippet()` itself (`tests/fts5_snippet_test.ts`).
 *
 * So, for a text of more than {@linkcode LONG_TEXT_BYTES}, a page's
 * statement asks for the text instead of FTS5's snippet, and
 * {@linkcode cutLongSnippets} cuts it. Only in the v11 layout (one column;
 * `unicode61` or `trigram` as Python v11 and hermes-state create them): a
 * newer Hermes's tables keep `snippet()` for every text.
 *
 * @module
 */
import { trigramSnippet, wordsSnippet } from "../../core/search/fts5_snippet.ts";
import type { HitRow } from "./ranked.ts";
import type { FtsTable } from "../schema/schema_sql.ts";

/** Past this many bytes, a text's snippet is cut here; below it FTS5 is as fast or faster. */
export const LONG_TEXT_BYTES = 16_384;

/** The column that carries a long text to {@linkcode cutLongSnippets}. */
const LONG_TEXT = "_long_text";

/**
 * The snippet column(s) of a page's statement.
 *
 * @param table The FTS5 table.
 * @param cutLong Whether long texts are cut here (the v11 layout).
 * @returns `snippet`, and `_long_text` when `cutLong`.
 */
export function snippetColumnsSql(table: string, cutLong: boolean): string {
  const snippet = `snippet(${table}, 0, '>>>', '<<<', '...', 40)`;
  if (!cutLong) return `${snippet} AS snippet`;
  const long = `length(CAST(${table}.content AS BLOB)) > ${LONG_TEXT_BYTES}`;
  return `CASE WHEN ${long} THEN NULL ELSE ${snippet} END AS snippet,
  CASE WHEN ${long} THEN ${table}.content END AS ${LONG_TEXT}`;
}

/**
 * Gives each row that carries a long text its snippet, as FTS5 would cut
 * it for `match`, and drops the text.
 *
 * @param rows The page's rows.
 * @param table The FTS5 table they come from.
 * @param match The MATCH expression they were found with.
 * @returns The same rows.
 */
export function cutLongSnippets(
  rows: HitRow[],
  table: FtsTable,
  match: string,
): HitRow[] {
  const cut = table === "messages_fts_trigram" ? trigramSnippet : wordsSnippet;
  for (const row of rows) {
    const text = row[LONG_TEXT];
    if (text === undefined) continue;
    if (typeof text === "string") row.snippet = cut(text, match);
    delete row[LONG_TEXT];
  }
  return rows;
}
