/**
 * The declarations `recover` gives the columns a newer Hermes added (those
 * the v11 schema lacks): the source's own, read from its schema, or, when
 * its schema is unreadable, those of the newest layout we know (Python's
 * v21). A column added without its declaration would lose its type (its
 * integers then kept as REAL), its `NOT NULL` and its `DEFAULT` (the newer
 * Hermes's inserts that leave it out would store NULL).
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** What `pragma_table_info` says of a column. */
export interface ColumnDeclaration {
  /** The declared type (`""` for none). */
  readonly type: string;
  /** True for `NOT NULL`. */
  readonly notNull: boolean;
  /** The `DEFAULT` expression as SQL text, or `null`. */
  readonly defaultSql: string | null;
}

function declared(type: string, notNull = false, defaultSql: string | null = null) {
  return { type, notNull, defaultSql };
}

/** Python Hermes v21's columns that v11 lacks, as its schema declares them. */
const V21_EXTRA_COLUMNS: Record<string, Record<string, ColumnDeclaration>> = {
  sessions: {
    session_key: declared("TEXT"),
    chat_id: declared("TEXT"),
    chat_type: declared("TEXT"),
    thread_id: declared("TEXT"),
    display_name: declared("TEXT"),
    origin_json: declared("TEXT"),
    expiry_finalized: declared("INTEGER", false, "0"),
    cwd: declared("TEXT"),
    git_branch: declared("TEXT"),
    git_repo_root: declared("TEXT"),
    handoff_state: declared("TEXT"),
    handoff_platform: declared("TEXT"),
    handoff_error: declared("TEXT"),
    compression_failure_cooldown_until: declared("REAL"),
    compression_failure_error: declared("TEXT"),
    compression_fallback_streak: declared("INTEGER", true, "0"),
    rewind_count: declared("INTEGER", true, "0"),
    archived: declared("INTEGER", true, "0"),
  },
  messages: {
    effect_disposition: declared("TEXT"),
    platform_message_id: declared("TEXT"),
    observed: declared("INTEGER", false, "0"),
    active: declared("INTEGER", true, "1"),
    compacted: declared("INTEGER", true, "0"),
  },
};

/**
 * The declarations of `table`'s columns in `db`.
 *
 * @param db The connection.
 * @param table The table.
 * @returns By column name; empty when the table does not exist.
 */
export function columnDeclarations(
  db: SqliteConnection,
  table: string,
): Map<string, ColumnDeclaration> {
  const rows = db.prepare(
    `SELECT name, type, "notnull" AS not_null, dflt_value FROM pragma_table_info(?)`,
  ).all(table);
  return new Map(
    rows.map((row) => [
      String(row.name),
      declared(
        String(row.type ?? ""),
        Number(row.not_null) === 1,
        row.dflt_value === null || row.dflt_value === undefined ? null : String(row.dflt_value),
      ),
    ]),
  );
}

/**
 * The declaration of a column v11 lacks: the source's, else the v21 one.
 *
 * @param table The table.
 * @param column The column.
 * @param source The source's declarations of the table (empty when unreadable).
 * @returns The declaration; an untyped one for a column neither knows.
 */
export function extraColumnDeclaration(
  table: string,
  column: string,
  source: ReadonlyMap<string, ColumnDeclaration>,
): ColumnDeclaration {
  return source.get(column) ?? V21_EXTRA_COLUMNS[table]?.[column] ?? declared("");
}

/**
 * Adds `column` to `table` with its declaration; when SQLite refuses that
 * for an added column (a default that is not a constant), with less of it:
 * the type alone, then nothing.
 *
 * @param db The new file.
 * @param table The table.
 * @param column The column and its declaration.
 */
export function addDeclaredColumn(
  db: SqliteConnection,
  table: string,
  column: { readonly name: string; readonly declaration: ColumnDeclaration },
): void {
  const { type, notNull, defaultSql } = column.declaration;
  const kind = /^[\w ()',]*$/.test(type) ? type : "";
  const attempts = [
    [
      kind,
      notNull && defaultSql !== null ? "NOT NULL" : "",
      defaultSql === null ? "" : `DEFAULT ${defaultSql}`,
    ],
    [kind],
    [],
  ];
  for (const [i, parts] of attempts.entries()) {
    const sql = [`ALTER TABLE ${table} ADD COLUMN ${quoteIdentifier(column.name)}`, ...parts]
      .filter((part) => part !== "").join(" ");
    try {
      db.exec(sql);
      return;
    } catch (error) {
      if (i === attempts.length - 1) throw error;
    }
  }
}
