/**
 * Whether a row read from a damaged file is one a Hermes could have
 * written: a damaged cell still decodes (SQLite returns it, or the page
 * scan reads it) into values no writer made, such as a session id of NUL
 * bytes or NULL in a `NOT NULL` column. `recover` keeps only plausible rows;
 * the others are counted as lost, never written into the new file.
 *
 * @module
 */
import type { SqlValue } from "../sqlite/driver/types.ts";
import { DECLARED_COLUMNS } from "../sqlite/schema/schema_sql.ts";
import { type ColumnDeclaration, extraColumnDeclaration } from "./_column_declarations.ts";

/**
 * Columns that name something: text, never empty, without a NUL or bytes
 * that are not UTF-8 (read as U+FFFD): Hermes writes them from strings.
 */
const NAMING_COLUMNS: Record<string, readonly string[]> = {
  sessions: ["id", "source"],
  messages: ["session_id", "role"],
};

/** Columns that always hold a number (a time). */
const TIME_COLUMNS: Record<string, readonly string[]> = {
  sessions: ["started_at"],
  messages: ["timestamp"],
};

/** The v11 declarations, by table and column. */
const V11: ReadonlyMap<string, ColumnDeclaration> = new Map(
  DECLARED_COLUMNS.map((column) => {
    const type = /^\w+/.exec(column.definition)?.[0] ?? "";
    const notNull = /\bNOT NULL\b/i.test(column.definition);
    return [`${column.table}.${column.name}`, { type, notNull, defaultSql: null }];
  }),
);

function declarationOf(
  table: string,
  column: string,
  source: ReadonlyMap<string, ColumnDeclaration>,
): ColumnDeclaration {
  return source.get(column) ?? V11.get(`${table}.${column}`) ??
    extraColumnDeclaration(table, column, source);
}

/** SQLite's TEXT affinity: such a column never holds an integer or a real. */
function textAffinity(type: string): boolean {
  const upper = type.toUpperCase();
  return !upper.includes("INT") && /CHAR|CLOB|TEXT/.test(upper);
}

const isNumber = (value: SqlValue) => typeof value === "number" || typeof value === "bigint";

/**
 * Whether a row's values could have been written by a Hermes: its naming
 * columns (a session's id and source, a message's session and role) are
 * text, not empty, without a NUL or U+FFFD; its times are numbers; no value
 * is a NaN (SQLite stores none); its `NOT NULL` columns are not NULL; its TEXT columns hold no number (SQLite turns a
 * number written there into text).
 *
 * @param table The table.
 * @param columns The column of each value.
 * @param values The values.
 * @param declarations The source's declarations of the table's columns (empty when unknown:
 *   v11's, then v21's are used).
 * @returns `true` when plausible.
 */
export function plausibleRow(
  table: string,
  columns: readonly string[],
  values: readonly SqlValue[],
  declarations: ReadonlyMap<string, ColumnDeclaration> = new Map(),
): boolean {
  const naming = NAMING_COLUMNS[table] ?? [];
  const times = TIME_COLUMNS[table] ?? [];
  const count = Math.min(columns.length, values.length);
  for (let i = 0; i < count; i++) {
    const column = columns[i];
    const value = values[i];
    const named = typeof value === "string" && value !== "" && !value.includes("\u0000") &&
      !value.includes("\uFFFD");
    if (naming.includes(column) && !named) return false;
    if (times.includes(column) && !isNumber(value)) return false;
    if (Number.isNaN(value)) return false; // SQLite stores a NaN as NULL: only damage reads one
    const declaration = declarationOf(table, column, declarations);
    if (value === null && declaration.notNull) return false;
    if (isNumber(value) && textAffinity(declaration.type)) return false;
  }
  return true;
}
