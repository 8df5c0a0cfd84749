/**
 * A substring search's {@linkcode Condition} as PostgreSQL SQL: each word
 * tested as SQLite's LIKE tests it (over content, tool name and tool calls),
 * with the CJK gram index in front where it can narrow the rows.
 *
 * A condition of many words (a pasted text) is sent as one JSON parameter
 * and read by the server word by word: one parameter per word reached the
 * protocol's 65,535 at 32,768 CJK words ("MAX_PARAMETERS_EXCEEDED"), and
 * planning an index test per word took 14 s at 20,000.
 *
 * @module
 */
import { containsPattern } from "../core/like_pattern.ts";
import type { Condition } from "../core/search/condition.ts";
import type { PgValue } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { gramsQuery } from "./text_search.ts";

/**
 * SQLite's LIKE reads its pattern and its value as C strings, up to the
 * first NUL: a pattern is cut there (so a term that starts with NUL matches
 * any value), and a value is seen up to its first NUL (so multimodal
 * content, which starts with one, is never matched). This is what the
 * SQLite engine (and Python) answer, so it is what this one answers too.
 */
function likePattern(term: string): string {
  return containsPattern(term).split("\u0000")[0];
}

/**
 * The text SQLite's LIKE sees of a column: up to the first NUL, stored as
 * U+E000 "0" by the text codec, which stores a U+E000 as U+E000 U+E000. The
 * cut takes the pairs in order (a U+E000 then "0" is not a NUL), and only
 * runs on a value that holds U+E000 "0" at all (a strpos, cheap).
 */
function likeValue(column: string): string {
  return `CASE WHEN strpos(${column}, E'\\uE000' || '0') = 0 THEN ${column}
    ELSE substring(${column} FROM E'^(?:[^\\uE000]|\\uE000\\uE000)*') END`;
}

/** `value` as the next parameter of `params`, as the SQL reads it (`$n`). */
function bound(value: string, params: PgValue[]): string {
  params.push(value);
  return `$${params.length}`;
}

/** The columns a substring search reads, as SQLite's LIKE fallback reads them. */
const SEARCH_FIELDS = ["m.content", "m.tool_name", "m.tool_calls"];

/**
 * Whether `term` is matched exactly: SQLite's LIKE folds ASCII letters only,
 * so a term without any (and without NUL, which cuts the pattern) is matched
 * as it is, by strpos, which is also far cheaper than ILIKE.
 */
function isExact(term: string): boolean {
  return !term.includes("\u0000") && !/[A-Za-z]/.test(term);
}

/** One "contains" test over content, tool name and tool calls, as SQLite's LIKE fallback. */
function containsCondition(term: string, params: PgValue[]): string {
  // Not exact: ILIKE in the "C" collation, which folds ASCII letters only (in the database's,
  // a UTF-8 locale's, it folds É and Ü too).
  const exact = isExact(term);
  // One parameter for the three columns (with one each, fewer words passed the protocol's
  // 65,535 parameters).
  const pattern = bound(exact ? term : likePattern(term), params);
  const fields = SEARCH_FIELDS.map((field) =>
    exact
      ? `strpos(${likeValue(field)}, ${pattern}) > 0`
      : `${likeValue(field)} ILIKE ${pattern} COLLATE "C"`
  );
  // A NULL column counts as not containing the term, as on SQLite.
  const like = `coalesce(${fields.join(" OR ")}, false)`;
  const grams = term.includes("\u0000") ? undefined : gramsQuery(term);
  if (grams === undefined) return like;
  return `(m.search_grams @@ ${bound(grams, params)}::tsquery AND ${like})`;
}

/**
 * A {@linkcode Condition} as SQL, a parameter per word: an OR of clauses, each "every word of
 * `all`, and not every word of any group of `none`" (a NULL column counts
 * as not containing the word, as on SQLite).
 */
function boundConditionSql(condition: Condition, params: PgValue[]): string {
  // The CJK gram test stays outside any coalesce, where the planner sees it and uses its index.
  const every = (words: readonly string[]) =>
    words.map((word) => containsCondition(word, params)).join(" AND ");
  const clauses = condition.map((clause) => {
    const parts = [every(clause.all), ...clause.none.map((group) => `NOT (${every(group)})`)];
    return `(${parts.join(" AND ")})`;
  });
  return `(${clauses.join(" OR ")})`;
}
/** The most words a condition binds one parameter each (two for CJK); past them, JSON. */
const BOUND_WORDS_MAX = 256;
/** The most clauses whose first words narrow a JSON condition's rows through the gram index. */
const NARROWING_CLAUSES = 32;
/** The words of each clause that narrow a JSON condition's rows. */
const NARROWING_WORDS = 8;

/** How many words a condition tests, its exclusions' included. */
function wordCount(condition: Condition): number {
  let count = 0;
  for (const clause of condition) {
    count += clause.all.length;
    for (const group of clause.none) count += group.length;
  }
  return count;
}

/**
 * A word as the JSON form carries it: `=` and the text, tested exactly
 * (strpos), or `~` and its LIKE pattern, tested by ILIKE, as
 * {@linkcode containsCondition} chooses.
 */
function jsonWord(term: string): string {
  return isExact(term) ? `=${term}` : `~${likePattern(term)}`;
}

/** The columns as {@linkcode jsonConditionSql} reads them, once a row: `v.content`…. */
const READ_FIELDS = ["content", "tool_name", "tool_calls"];

/**
 * The SQL test that `word` (a {@linkcode jsonWord} the server reads) is in a
 * message's text as the row `v` holds it.
 */
function containsJsonWord(word: string): string {
  const text = `substr(${word}, 2)`;
  const exact = READ_FIELDS.map((field) => `strpos(v.${field}, ${text}) > 0`);
  const folded = READ_FIELDS.map((field) => `v.${field} ILIKE ${text} COLLATE "C"`);
  return `coalesce(CASE WHEN left(${word}, 1) = '=' THEN ${exact.join(" OR ")}
    ELSE ${folded.join(" OR ")} END, false)`;
}

/**
 * A condition of many words as one JSON parameter, which the server reads
 * once and tests a row's words against in turn, each clause stopping at its
 * first missing word; with the first words of a few clauses bound as
 * {@linkcode boundConditionSql} binds them, so the gram index narrows the
 * rows first.
 */
function jsonConditionSql(condition: Condition, params: PgValue[]): string {
  const clauses = condition.map((clause) => ({
    a: clause.all.map(jsonWord),
    n: clause.none.map((group) => group.map(jsonWord)),
  }));
  // The row's texts as LIKE sees them, read once (`|| ''` holds them unpacked: a long text
  // was read from its TOAST storage again at each word, 19 s for 33,000 words in one
  // message); OFFSET 0 keeps the planner from writing the expressions back into each test.
  const texts = SEARCH_FIELDS.map((field, i) => `${likeValue(field)} || '' AS ${READ_FIELDS[i]}`);
  const every = (words: string) =>
    `NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(${words}) AS w(word)
      WHERE NOT ${containsJsonWord("w.word")})`;
  const clausesSql = `(SELECT ${bound(jsonParam(clauses), params)}::text::jsonb)`;
  const json = `EXISTS (SELECT 1
    FROM (SELECT ${
    texts.join(", ")
  } OFFSET 0) AS v, jsonb_array_elements(${clausesSql}) AS c(clause)
    WHERE ${every("c.clause -> 'a'")} AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(c.clause -> 'n') AS g(words) WHERE ${every("g.words")}))`;
  if (condition.length > NARROWING_CLAUSES) return json;
  const first = condition.map((clause) => ({
    all: clause.all.slice(0, NARROWING_WORDS),
    none: [],
  }));
  return `(${boundConditionSql(first, params)} AND ${json})`;
}

/**
 * A {@linkcode Condition} as SQL: an OR of clauses, each "every word of
 * `all`, and not every word of any group of `none`" (a NULL column counts
 * as not containing the word, as on SQLite). Its parameters are pushed on
 * `params`: one or two per word, or, for a condition of more than
 * {@linkcode BOUND_WORDS_MAX} words, about one per clause first word of a few
 * clauses and one JSON parameter for all of it.
 *
 * @param condition The condition.
 * @param params The query's parameters so far; the condition's are added.
 * @returns The SQL, over the messages as `m`.
 */
export function conditionSql(condition: Condition, params: PgValue[]): string {
  return wordCount(condition) > BOUND_WORDS_MAX
    ? jsonConditionSql(condition, params)
    : boundConditionSql(condition, params);
}
