/**
 * The columns a newer Hermes adds to its tables (`sessions.archived`,
 * `messages.active`, `compacted`, `display_kind`, …) on the server: kept in
 * one `jsonb` column per table, `extra_columns` (an object of column name →
 * value, NULL when a row has none), written by `copy` (importSession) and
 * `sync`, and spread back into every row read, so a row and an export
 * come back as the file holds them. The visibility rules of that Hermes
 * read it, as the SQLite engine reads the file's own columns.
 *
 * A jsonb string cannot hold U+0000 or a lone surrogate: the JSON text is
 * bound as text, so the client's text codec (`_text_codec.ts`) encodes its
 * NULs (written raw, not as `\u0000`) and the strings read back are decoded
 * here; surrogates are made well formed, as a text column makes them.
 *
 * @module
 */
import { decodeText, jsonParam } from "./_text_codec.ts";
import { STORED_BYTES_KEY } from "../core/stored_bytes.ts";
import { MODEL_USAGE_KEY } from "../core/session_model_usage.ts";

/** The column holding the newer columns of a row. */
export const EXTRA_COLUMN = "extra_columns";

/** Keys of an export record (or a file row) that are not newer columns. */
const NOT_EXTRA = new Set(["messages", "last_active", MODEL_USAGE_KEY]);

const decoder = new TextDecoder();

/**
 * A value as stored in the object: strings well formed, whole bigints as
 * numbers where exact (as text within arrays and objects; a column's own
 * is written as its digits by {@linkcode extraColumnsJson}).
 */
function storedValue(value: unknown): unknown {
  if (typeof value === "string") return value.toWellFormed();
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  }
  if (value instanceof Uint8Array) return decoder.decode(value);
  if (Array.isArray(value)) return value.map(storedValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, storedValue(v)]));
  }
  return value;
}

function readValue(value: unknown): unknown {
  if (typeof value === "string") return decodeText(value);
  if (Array.isArray(value)) return value.map(readValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, readValue(v)]));
  }
  return value;
}

/**
 * The `extra_columns` value of a row: its keys outside `known`, as JSON
 * text for a `$n::text::jsonb` parameter (a `$n::jsonb` one would store the
 * text as a JSON string), or `null` when it has none.
 *
 * @param row A file row (`SELECT *`) or an export record.
 * @param known The columns the server's table has.
 * @returns The JSON text, or `null`.
 */
export function extraColumnsJson(
  row: Record<string, unknown>,
  known: ReadonlySet<string>,
): string | null {
  const extra: Record<string, unknown> = {};
  let any = false;
  let exact = false;
  for (const [key, value] of Object.entries(row)) {
    if (known.has(key) || NOT_EXTRA.has(key) || value === undefined) continue;
    extra[key] = storedValue(value);
    exact ||= typeof value === "bigint" && typeof extra[key] === "string";
    any = true;
  }
  if (!any) return null;
  if (!exact) return jsonParam(extra);
  // An integer beyond 2^53 (an exact export's bigint) as a JSON number of every digit, which
  // jsonb keeps, not as the text storedValue makes of it.
  const members = Object.entries(extra).map(([key, value]) =>
    `${jsonParam(key)}:${typeof row[key] === "bigint" ? String(row[key]) : jsonParam(value)}`
  );
  return `{${members.join(",")}}`;
}

/**
 * Moves the newer columns of a row read from the server back into it (a
 * column of the row itself always wins), and drops `extra_columns`. The
 * exact bytes an import carried (`hermes_state_bytes`, kept there too) are
 * an export's alone, as on SQLite: a row read otherwise leaves them out.
 *
 * @param row A row as the client returns it (changed in place).
 */
export function spreadExtraColumns(row: Record<string, unknown>): void {
  if (!(EXTRA_COLUMN in row)) return;
  const extra = row[EXTRA_COLUMN];
  delete row[EXTRA_COLUMN];
  if (typeof extra !== "object" || extra === null) return;
  for (const [key, value] of Object.entries(extra)) {
    if (!(key in row) && key !== STORED_BYTES_KEY) row[key] = readValue(value);
  }
}

/** A newer column of `alias`'s row as jsonb, its JSON null as SQL NULL. */
function column(alias: string, name: string): string {
  return `NULLIF(${alias}.${EXTRA_COLUMN}->'${name}', 'null'::jsonb)`;
}

/**
 * The messages of `alias` that a newer Hermes replays: not rewound, not
 * compacted (`active` not 0; a row without it is active), as the SQLite
 * engine's `COALESCE(active, 1) != 0`.
 */
export function activeSql(alias: string): string {
  return `COALESCE(${column(alias, "active")}, '1'::jsonb) <> '0'::jsonb`;
}

/**
 * The sessions of `alias` that a newer Hermes lists: not archived
 * (`COALESCE(archived, 0) = 0`). A row without newer columns is tested
 * first: the planner reads its share from the column's statistics, where it
 * guesses 0.5% for the JSON test, which made a 0.5 ms listing page look
 * costly enough to compile (JIT) for 15–50 ms at a million sessions.
 */
export function notArchivedSql(alias: string): string {
  return `(${alias}.${EXTRA_COLUMN} IS NULL
    OR COALESCE(${column(alias, "archived")}, '0'::jsonb) = '0'::jsonb)`;
}

/**
 * Whether a newer Hermes leaves a message out of its search, from the
 * `extra_columns` of `alias`: rewound (inactive and not compacted: a
 * compacted row is still found), or `display_kind = 'hidden'`. Stored in
 * `search_hidden` when a message is written, so search filters on a plain
 * column of the table it reads (`messages` or `message_words`).
 */
export function searchHiddenSql(alias: string): string {
  return `COALESCE(
    (${column(alias, "active")} = '0'::jsonb
      AND COALESCE(${column(alias, "compacted")}, '0'::jsonb) = '0'::jsonb)
    OR ${alias}.${EXTRA_COLUMN}->>'display_kind' = 'hidden', false)`;
}
