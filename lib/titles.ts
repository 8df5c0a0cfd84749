/**
 * Session titles and id resolution: cleaning a title, keeping titles unique,
 * numbering the titles of a lineage (`"my project #3"`), and resolving what a
 * user typed (a title, an id, an id prefix) to a session.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SessionRow } from "./types.ts";
import { TitleError } from "./errors.ts";
import { codePointLength, PYTHON_WHITESPACE, pythonStrip } from "./python_text.ts";

/** The longest title accepted, in code points. */
const MAX_TITLE_LENGTH = 100;

/** ASCII control characters except tab, LF and CR (those become spaces). */
// deno-lint-ignore no-control-regex
const ASCII_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
/** Zero-width, bidirectional-override and object-replacement characters. */
const INVISIBLES = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]/g;
/** A run of Unicode whitespace, as Python's `\s+` sees it. */
const WHITESPACE_RUN = new RegExp(`[${PYTHON_WHITESPACE}]+`, "gu");
/** `"<base> #<digits>"`, with Python's `^(.*?) #(\d+)$` semantics (`$` may precede a final LF). */
const NUMBERED_TITLE = /^([^\n]*?) #(\p{Nd}+)\n?$/u;
const DECIMAL_DIGIT = /\p{Nd}/u;

/**
 * Escapes `\`, `%` and `_` so that `text` matches only itself in
 * `LIKE ? ESCAPE '\'`.
 */
function escapeLike(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_");
}

/**
 * The value of a run of Unicode decimal digits (any script, as Python's
 * `int()` reads them). Every Unicode digit block is a run of whole decades
 * starting at a zero, so a digit's value is its offset in its block, mod 10.
 */
function digitsValue(digits: string): bigint {
  let value = 0n;
  for (const ch of digits) {
    let cp = ch.codePointAt(0)!;
    let start = cp;
    while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
    cp = (cp - start) % 10;
    value = value * 10n + BigInt(cp);
  }
  return value;
}

/**
 * Cleans a session title as the Python Hermes does: removes ASCII control
 * characters (except tab, LF and CR), zero-width and bidirectional-override
 * characters (U+200B–200F, U+2028–202E, U+2060–2069, U+FEFF, U+FFFC,
 * U+FFF9–FFFB), collapses every whitespace run to one space and trims.
 *
 * @param title The title as typed.
 * @returns The clean title, or `null` when nothing is left (which clears a title).
 * @throws {TitleError} `Title too long (N chars, max 100)` when the clean title
 *   has more than 100 code points.
 * @throws {TypeError} When `title` is neither a string nor empty.
 *
 * @example Cleaning a title
 * ```ts
 * import { sanitizeTitle } from "./titles.ts";
 * console.assert(sanitizeTitle("  Weekly \u200b sync\t notes ") === "Weekly sync notes");
 * console.assert(sanitizeTitle(" \u200b ") === null);
 * ```
 */
export function sanitizeTitle(title: string | null | undefined): string | null {
  if (!title) return null;
  if (typeof title !== "string") {
    throw new TypeError(
      `Cannot sanitize title: title must be a string: current value is ${typeof title}`,
    );
  }
  const cleaned = title
    .replace(ASCII_CONTROLS, "")
    .replace(INVISIBLES, "")
    .replace(WHITESPACE_RUN, " ");
  const trimmed = pythonStrip(cleaned);
  if (trimmed === "") return null;
  const length = codePointLength(trimmed);
  if (length > MAX_TITLE_LENGTH) {
    throw new TitleError(`Title too long (${length} chars, max ${MAX_TITLE_LENGTH})`);
  }
  return trimmed;
}

/**
 * Sets the title of a session, or clears it when the title cleans to
 * nothing. Titles are unique (case-sensitive) among sessions.
 *
 * @param store The open store.
 * @param id The session id.
 * @param title The title; cleaned with {@linkcode sanitizeTitle} first.
 * @returns True when the session exists (and now has the title).
 * @throws {TitleError} `Title too long (N chars, max 100)`, or
 *   `Title 'T' is already in use by session ID` when another session has it.
 * @throws {ReadonlyError} When the database was opened read-only.
 *
 * @example Naming a session
 * ```ts ignore
 * db.setSessionTitle("20260420_090000_994beb", "my project");
 * db.getSessionTitle("20260420_090000_994beb"); // "my project"
 * ```
 */
export function setSessionTitle(store: Store, id: string, title: string | null): boolean {
  const clean = sanitizeTitle(title);
  return store.write(() => {
    if (clean) {
      const conflict = store.statement("SELECT id FROM sessions WHERE title = ? AND id != ?")
        .get(clean, id);
      if (conflict !== undefined) {
        throw new TitleError(`Title '${clean}' is already in use by session ${conflict.id}`);
      }
    }
    return store.statement("UPDATE sessions SET title = ? WHERE id = ?").run(clean, id).changes > 0;
  });
}

/**
 * Reads the title of a session.
 *
 * @param store The open store.
 * @param id The session id.
 * @returns The title; `null` when the session has none; `undefined` when there is no such session.
 *
 * @example
 * ```ts ignore
 * db.getSessionTitle("20260425_090957_a6f35fc6"); // "Weekly sync notes"
 * db.getSessionTitle("does-not-exist"); // undefined
 * ```
 */
export function getSessionTitle(store: Store, id: string): string | null | undefined {
  const row = store.statement("SELECT title FROM sessions WHERE id = ?").get(id);
  return row === undefined ? undefined : row.title as string | null;
}

/**
 * Finds the session whose title is exactly `title` (case-sensitive).
 *
 * @param store The open store.
 * @param title The title.
 * @returns The full session row, or `undefined`.
 *
 * @example
 * ```ts ignore
 * db.getSessionByTitle("数据库迁移计划")?.id; // "20260426_090000_b0f791"
 * ```
 */
export function getSessionByTitle(store: Store, title: string): SessionRow | undefined {
  return store.statement("SELECT * FROM sessions WHERE title = ?").get(title) as
    | SessionRow
    | undefined;
}

/**
 * Resolves a title to a session id. When numbered variants `"<title> #N"`
 * exist, the most recently started one wins, even over an exact match (it is
 * the live continuation). The variant match is SQL `LIKE`: ASCII
 * case-insensitive, and `%`, `_` and `\` in the title are taken literally.
 *
 * @param store The open store.
 * @param title The title as typed.
 * @returns The session id, or `undefined` when nothing matches.
 *
 * @example
 * ```ts ignore
 * // "my project", "my project #2" and "my project #3" exist:
 * db.resolveSessionByTitle("my project"); // the id of "my project #3"
 * ```
 */
export function resolveSessionByTitle(store: Store, title: string): string | undefined {
  const numbered = store.statement(
    "SELECT id, title, started_at FROM sessions WHERE title LIKE ? ESCAPE '\\' ORDER BY started_at DESC",
  ).get(`${escapeLike(title)} #%`);
  if (numbered !== undefined) return numbered.id as string;
  return getSessionByTitle(store, title)?.id;
}

/**
 * The title for the next session of a lineage: the base title (any `" #N"`
 * suffix removed) with one more than the highest number in use, the
 * unnumbered original counting as #1. A base no session uses comes back as is.
 *
 * @param store The open store.
 * @param base A title, with or without a `" #N"` suffix.
 * @returns The next title, e.g. `"my project #4"`.
 *
 * @example
 * ```ts ignore
 * // "my project", "my project #2" and "my project #3" exist:
 * db.getNextTitleInLineage("my project #2"); // "my project #4"
 * db.getNextTitleInLineage("brand new title"); // "brand new title"
 * ```
 */
export function getNextTitleInLineage(store: Store, base: string): string {
  const stem = NUMBERED_TITLE.exec(base)?.[1] ?? base;
  const rows = store.statement(
    "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
  ).all(stem, `${escapeLike(stem)} #%`);
  if (rows.length === 0) return stem;
  let highest = 1n;
  for (const row of rows) {
    const match = typeof row.title === "string" ? /^[^\n]* #(\p{Nd}+)\n?$/u.exec(row.title) : null;
    if (match) {
      const n = digitsValue(match[1]);
      if (n > highest) highest = n;
    }
  }
  return `${stem} #${highest + 1n}`;
}

/**
 * Resolves an exact session id, or a prefix of exactly one session id (SQL
 * `LIKE`, so ASCII case-insensitive; `%`, `_` and `\` are taken literally).
 *
 * @param store The open store.
 * @param idOrPrefix What the user typed.
 * @returns The id, or `undefined` when no session or more than one matches.
 *
 * @example
 * ```ts ignore
 * db.resolveSessionId("20260429_090322_3"); // "20260429_090322_3762ca"
 * db.resolveSessionId("2026"); // undefined: ambiguous
 * ```
 */
export function resolveSessionId(store: Store, idOrPrefix: string): string | undefined {
  const exact = store.statement("SELECT id FROM sessions WHERE id = ?").get(idOrPrefix);
  if (exact !== undefined) return exact.id as string;
  const rows = store.statement(
    "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 2",
  ).all(`${escapeLike(idOrPrefix)}%`);
  return rows.length === 1 ? rows[0].id as string : undefined;
}

/** Sessions whose id starts with a prefix: how many, and the newest few. */
export interface PrefixMatches {
  /** How many sessions match. */
  readonly count: number;
  /** The ids of the newest-started matches, at most `limit`. */
  readonly ids: readonly string[];
}

/**
 * The sessions whose id starts with `prefix` (`\`, `%` and `_` match
 * literally), for telling a user which ones an ambiguous prefix names.
 *
 * @param store The open store.
 * @param prefix The id prefix.
 * @param options `limit`: the most ids to return (default 10).
 * @returns The count and the newest-started ids.
 *
 * @example
 * ```ts ignore
 * db.sessionIdsWithPrefix("2026"); // { count: 35, ids: ["20260429_…", …] }
 * ```
 */
export function sessionIdsWithPrefix(
  store: Store,
  prefix: string,
  options: { limit?: number } = {},
): PrefixMatches {
  const pattern = `${escapeLike(prefix)}%`;
  const count = Number(
    store.statement("SELECT count(*) AS n FROM sessions WHERE id LIKE ? ESCAPE '\\'").get(pattern)
      ?.n,
  );
  const ids = store.statement(
    "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY started_at DESC, id LIMIT ?",
  ).all(pattern, options.limit ?? 10).map((row) => row.id as string);
  return { count, ids };
}
