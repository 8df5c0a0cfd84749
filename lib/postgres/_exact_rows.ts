/**
 * Rows of an export read exactly, as the SQLite engine's export reads them
 * (`lib/sqlite/exact_rows.ts`): an integer beyond 2^53 as a `bigint`, where
 * the client's usual reading (`Number`, in `_client.ts`) rounds it (two
 * message ids `9007199254740993` and `9007199254740994` become one). The
 * integer columns (message ids, `token_count`, the session counters) are
 * read as their digits (`::text`), and the columns of a newer Hermes as
 * their JSON text (`extra_columns::text`), and made numbers again here: a
 * `bigint` only beyond ±(2^53 - 1) and within SQLite's 64-bit range, a
 * number otherwise (a fraction an older Hermes wrote, or a REAL SQLite held
 * beyond 2^63, stays the number it was). Other reads keep numbers, as on
 * SQLite; reading digits costs what the client's own parsing of them does.
 *
 * @module
 */
import { COUNTER_COLUMNS, MESSAGE_COLUMN_NAMES, SESSION_COLUMN_NAMES } from "./_rows.ts";
import { EXTRA_COLUMN } from "./_extra.ts";
import type { PgRow } from "./_client_types.ts";
import { mayHoldLongInteger, parseJsonExact } from "../core/exact_json.ts";
import { STORED_BYTES_KEY } from "../core/stored_bytes.ts";

/** The session columns that are integers in the file (numeric on the server). */
const SESSION_INTEGERS: ReadonlySet<string> = new Set(COUNTER_COLUMNS);

/** The message columns that are integers in the file (bigint or numeric on the server). */
const MESSAGE_INTEGERS: ReadonlySet<string> = new Set(["id", "token_count"]);

/**
 * The alias of `extra_columns` read as text: the client parses jsonb with
 * `JSON.parse`, which rounds a newer Hermes's integer column beyond 2^53.
 */
const EXTRA_TEXT = "hermes_extra_columns_text";

/**
 * The columns of `alias`, its integer ones as their digits under their own
 * names, `extra_columns` as its JSON text.
 */
function selectList(alias: string, names: readonly string[], integers: ReadonlySet<string>) {
  return names.map((c) => integers.has(c) ? `${alias}.${c}::text AS ${c}` : `${alias}.${c}`)
    .concat(`${alias}.${EXTRA_COLUMN}::text AS ${EXTRA_TEXT}`)
    .join(", ");
}

/** The session columns of alias `s`, as `SESSION_COLUMNS` lists them, integers as text. */
export const EXACT_SESSION_COLUMNS: string = selectList(
  "s",
  SESSION_COLUMN_NAMES,
  SESSION_INTEGERS,
);

/** The message columns of alias `m`, as `MESSAGE_COLUMNS` lists them, integers as text. */
export const EXACT_MESSAGE_COLUMNS: string = selectList(
  "m",
  MESSAGE_COLUMN_NAMES,
  MESSAGE_INTEGERS,
);

/** An integer's digits, as numeric prints it: maybe with a fraction of zeros (`5.0`). */
const INTEGER_DIGITS = /^(-?\d+)(?:\.0*)?$/;

/** SQLite's INTEGER range: a value beyond it was a REAL in the file. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The value of a column read as text: a number, or a `bigint` for an
 * integer a number would round that SQLite holds as an INTEGER.
 *
 * @param text The column's digits (`::text`), or `null`.
 * @returns The number, the `bigint`, or `null`.
 */
function exactValue(text: unknown): number | bigint | null {
  if (typeof text !== "string") return null;
  const value = Number(text);
  if (Number.isSafeInteger(value) || !Number.isInteger(value)) return value;
  const digits = INTEGER_DIGITS.exec(text)?.[1];
  if (digits === undefined) return value;
  const exact = BigInt(digits);
  return isInt64(exact) ? exact : value;
}

/** Whether `value` is an integer SQLite holds as an INTEGER. */
function isInt64(value: unknown): value is bigint {
  return typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * Moves the newer columns of a row (its `extra_columns` as JSON text, under
 * {@linkcode EXTRA_TEXT}) into it, as `spreadExtraColumns` does (a column of
 * the row itself wins), an integer beyond 2^53 as a `bigint`.
 */
function spreadExactExtraColumns(row: PgRow): void {
  const text = row[EXTRA_TEXT];
  delete row[EXTRA_TEXT];
  if (typeof text !== "string") return;
  // The client decoded the whole text (`_text_codec.ts`): a string's NUL is raw now, which
  // JSON refuses; its escape is the same character.
  const json = text.includes("\u0000") ? text.replaceAll("\u0000", "\\u0000") : text;
  const extra = JSON.parse(json) as Record<string, unknown> | null;
  if (typeof extra !== "object" || extra === null) return;
  const exact = mayHoldLongInteger(json) ? parseJsonExact(json) as Record<string, unknown> : {};
  for (const [key, value] of Object.entries(extra)) {
    if (!(key in row)) row[key] = isInt64(exact[key]) ? exact[key] : value;
  }
  blobColumnsNull(row);
}

/**
 * Sets each column that the row's `hermes_state_bytes` carries as a BLOB
 * to `null`, as the SQLite engine's export says it (the server's column
 * holds the BLOB's text, which a read gives, as a file's read does).
 */
function blobColumnsNull(row: PgRow): void {
  const carried = row[STORED_BYTES_KEY];
  if (typeof carried !== "object" || carried === null) return;
  for (const [column, entry] of Object.entries(carried)) {
    if (typeof entry === "object" && entry !== null && "blob" in entry && column in row) {
      row[column] = null;
    }
  }
}

function readIntegers(row: PgRow, integers: ReadonlySet<string>): PgRow {
  for (const column of integers) {
    if (column in row) row[column] = exactValue(row[column]);
  }
  spreadExactExtraColumns(row);
  return row;
}

/**
 * A session row read with {@linkcode EXACT_SESSION_COLUMNS}: its integers
 * made numbers again, a newer Hermes's columns spread into it.
 *
 * @param row The row as the client returns it (changed in place).
 * @returns The row.
 */
export function exactSessionRow(row: PgRow): PgRow {
  return readIntegers(row, SESSION_INTEGERS);
}

/**
 * A message row read with {@linkcode EXACT_MESSAGE_COLUMNS}: its integers
 * made numbers again, a newer Hermes's columns spread into it.
 *
 * @param row The row as the client returns it (changed in place).
 * @returns The row.
 */
export function exactMessageRow(row: PgRow): PgRow {
  return readIntegers(row, MESSAGE_INTEGERS);
}
