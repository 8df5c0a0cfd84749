/**
 * Telling SQLite's complaints about the text of a query (answered with no
 * hits) from storage failures (which propagate).
 *
 * @module
 */
import { SqliteError } from "../driver/sqlite_error.ts";

/**
 * FTS5's own messages about a MATCH expression: syntax errors, a string cut
 * short (FTS5 reads the expression up to a U+0000), a bad NEAR distance, an
 * expression nested too deep, an unknown special query.
 */
const MATCH_MESSAGE =
  /^(fts5[: ]|unterminated string|expected integer|unknown special query|malformed MATCH expression)/;
/** FTS5 reads `name:` as a column filter. */
const NO_SUCH_COLUMN = /^no such column: (.*)$/s;

/**
 * Whether `error` is FTS5 rejecting the MATCH expression `match`: a syntax
 * error, or a column filter naming a column that does not exist (the name
 * must appear in `match`, so a missing table column is not mistaken for one).
 *
 * @param error What the statement threw.
 * @param match The MATCH expression it ran.
 * @returns `true` when the query text is at fault.
 */
export function isMatchError(error: unknown, match: string): boolean {
  if (!(error instanceof SqliteError) || error.code !== 1) return false;
  if (MATCH_MESSAGE.test(error.message)) return true;
  const column = NO_SUCH_COLUMN.exec(error.message)?.[1];
  if (column === undefined) return false;
  // Only an empty quoted name (`"":x`, `-""`, pasted `{"": 1}`) makes an empty one.
  if (column === "") return match.includes('""');
  // SQLite received lone surrogates as U+FFFD. Compared in upper case: lower-casing depends on
  // the context (`ΟΣ` alone ends in `ς`, in `ΟΣ:x` in `σ`), upper-casing does not. A quoted
  // name (`"a""b":x`) is named unquoted (`a"b`).
  const name = column.toUpperCase();
  const text = match.toWellFormed().toUpperCase();
  return text.includes(name) || text.replaceAll('""', '"').includes(name);
}

/**
 * Whether `error` is SQLite refusing a LIKE pattern longer than its limit
 * (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`, 50,000 bytes by default).
 *
 * @param error What the statement threw.
 * @returns `true` when the pattern is at fault.
 */
export function isPatternError(error: unknown): boolean {
  return error instanceof SqliteError && error.code === 1 &&
    error.message.startsWith("LIKE or GLOB pattern too complex");
}
