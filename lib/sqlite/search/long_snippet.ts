/**
 * The snippets of long texts, cut in TypeScript. FTS5's `snippet()` scores
 * a window for each instance of the query against the instances after it:
 * a log a tool printed, holding the searched word on every line, costs it
 * 146 ms at 120,000 characters and 1.2 s at 600,000, and a search pays
 * that for every such hit of its page. `fts5_snippet.ts` gives the same
 * snippet in linear time (16 ms at 120,000 characters), checked against
 * `snippet()` itself (`tests/fts5_snippet_test.ts`).
 *
 * So, for a text of more than {@linkcode LONG_TEXT_BYTES} (less for a query
 * of several phrases, {@linkcode longTextBytes}), a page's
 * statement asks for the text instead of FTS5's snippet, and
 * {@linkcode cutLongSnippets} cuts it. The tokenizers are `unicode61` and
 * `trigram`, as Python and hermes-state create them. In a newer Hermes's
 * tables of several columns (`content`, `tool_name`, `tool_calls`) the
 * snippet is still of `content`, but the row matches the query by all its
 * columns: the statement carries the others too.
 *
 * @module
 */
import { trigramSnippet, wordsSnippet } from "../../core/search/fts5_snippet.ts";
import type { HitRow } from "./ranked.ts";
import type { FtsTable } from "../schema/schema_sql.ts";

/** Past this many bytes, a text's snippet is cut here; below it FTS5 is as fast or faster. */
export const LONG_TEXT_BYTES = 16_384;

/**
 * Past how many bytes a text's snippet is cut here for a query of `phrases`
 * phrases: {@linkcode LONG_TEXT_BYTES} for one, and a quarter of it each
 * time the count doubles. FTS5's `snippet()` costs the square of the
 * instances, and each phrase can have one at every token (`d* do* doc*`
 * over a log of `docker`s, or a pasted paragraph over a long text): so no
 * query costs it more than one word does at {@linkcode LONG_TEXT_BYTES}.
 * The cut here is linear; beyond 64 phrases it cuts every text.
 *
 * @param phrases How many phrases the MATCH expression has.
 * @returns The byte length past which the snippet is cut here.
 */
export function longTextBytes(phrases: number): number {
  let bytes = LONG_TEXT_BYTES;
  for (let size = 1; size < phrases && bytes > 0; size *= 2) bytes = bytes >> 2;
  return bytes;
}

/** The column that carries a long text to {@linkcode cutLongSnippets}, and its row's others. */
const LONG_TEXT = "_long_text";
const LONG_OTHER = "_long_other_";

/**
 * The columns of a full-text table after its first (`content`), which a
 * page reads with a long text to cut its snippet here: none in the v11
 * layout. A page without them keeps FTS5's `snippet()` for every text.
 */
export type LongTextColumns = readonly string[];

/**
 * The snippet column(s) of a page's statement.
 *
 * @param table The FTS5 table.
 * @param cut Whether long texts are cut here, and the table's other columns (plain names).
 * @param bytes Past how many bytes a text is long ({@linkcode longTextBytes}).
 * @returns `snippet`, and `_long_text` (and `_long_other_N`) when `cut`.
 */
export function snippetColumnsSql(
  table: string,
  cut?: LongTextColumns,
  bytes: number = LONG_TEXT_BYTES,
): string {
  const snippet = `snippet(${table}, 0, '>>>', '<<<', '...', 40)`;
  if (cut === undefined) return `${snippet} AS snippet`;
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new RangeError(`Cannot cut snippets past ${bytes} bytes: current value is ${bytes}`);
  }
  const long = `length(CAST(${table}.content AS BLOB)) > ${bytes}`;
  // As text: FTS5 reads a BLOB's bytes as text too.
  const text = (column: string) => {
    if (!/^\w+$/.test(column)) throw new TypeError(`Not a column name: ${JSON.stringify(column)}`);
    return `CAST(${table}."${column}" AS TEXT)`;
  };
  const others = cut.map((column, i) =>
    `,\n  CASE WHEN ${long} THEN ${text(column)} END AS ${LONG_OTHER}${i}`
  );
  return `CASE WHEN ${long} THEN NULL ELSE ${snippet} END AS snippet,
  CASE WHEN ${long} THEN ${text("content")} END AS ${LONG_TEXT}${others.join("")}`;
}

/**
 * The snippet of `text` from `table`, cut here for `match` as FTS5 would
 * (`fts5_snippet.ts`), the row's other columns counted in the match.
 *
 * @param table The FTS5 table the text is indexed in.
 * @param text The text of its first column.
 * @param match The MATCH expression.
 * @param others The row's other columns (`null` for one that is not text).
 * @returns The snippet.
 */
export function cutSnippet(
  table: FtsTable,
  text: string,
  match: string,
  others: readonly (string | null)[],
): string {
  const snippet = table === "messages_fts_trigram" ? trigramSnippet : wordsSnippet;
  return snippet(text, match, others);
}

/**
 * Gives each row that carries a long text its snippet, as FTS5 would cut
 * it for `match`, and drops the text (in place).
 *
 * @param rows The page's rows.
 * @param table The FTS5 table they come from.
 * @param match The MATCH expression they were found with.
 * @param cut The other columns the statement carried ({@linkcode snippetColumnsSql}).
 * @returns How many snippets were cut here.
 */
export function cutLongSnippets(
  rows: HitRow[],
  table: FtsTable,
  match: string,
  cut: LongTextColumns = [],
): number {
  let count = 0;
  for (const row of rows) {
    const text = row[LONG_TEXT];
    const others = cut.map((_, i) => {
      const value = row[`${LONG_OTHER}${i}`];
      delete row[`${LONG_OTHER}${i}`];
      return typeof value === "string" ? value : null;
    });
    if (text === undefined) continue;
    if (typeof text === "string") {
      row.snippet = cutSnippet(table, text, match, others);
      count++;
    }
    delete row[LONG_TEXT];
  }
  return count;
}
