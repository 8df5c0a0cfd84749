/**
 * Damage only in an index: when every line of SQLite's integrity check is
 * about an index that no longer matches its table (a row missing from it,
 * a wrong count of entries, two entries of a unique index alike), every
 * page is sound and the table data whole, and `REINDEX` mends it from the
 * table. Any other line (a page, a cell, the free list, a value) means the
 * table's own pages may be damaged: then only `recover` is safe.
 *
 * One index fault hides damage to a table: a table page that went back to
 * an older version (a write lost) still parses, and its rows are gone;
 * the check then says only "wrong # of entries in index", and the index
 * is the last witness of those rows (`recover` names them). So an index
 * that lists a row its table no longer holds is not rebuilt
 * ({@linkcode danglingEntries}).
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { groupedCount } from "../core/grouped_digits.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";

/** The lines SQLite writes about an index alone, each naming it. */
const INDEX_FAULT = [
  /^row \d+ missing from index (\S+)$/,
  /^wrong # of entries in index (\S+)$/,
  /^non-unique entry in index (\S+)$/,
];

/**
 * The indexes named by an integrity check whose every line is an index
 * fault.
 *
 * @param lines The check's lines (FTS lines apart), not `["ok"]`.
 * @returns The damaged indexes, each once, in the order named; `undefined`
 *   when a line says anything else (the table data may be damaged too).
 *
 * @example
 * ```ts
 * import { damagedIndexes } from "./index_check.ts";
 * const lines = ["row 4 missing from index idx_messages_session"];
 * console.assert(damagedIndexes(lines)?.[0] === "idx_messages_session");
 * console.assert(damagedIndexes([...lines, "Tree 5 page 9 cell 0: invalid page number 0"]) === undefined);
 * ```
 */
export function damagedIndexes(lines: readonly string[]): string[] | undefined {
  if (lines.length === 0) return undefined;
  const names: string[] = [];
  for (const line of lines) {
    const name = INDEX_FAULT.map((pattern) => pattern.exec(line)?.[1]).find((n) => n !== undefined);
    if (name === undefined) return undefined;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * The `integrity` finding of a file whose damage is only in indexes: a
 * problem `doctor --fix` repairs (`REINDEX` of each, nothing else).
 *
 * @param names The damaged indexes.
 * @param lines SQLite's lines, kept as details.
 * @returns The finding.
 */
export function indexDamageFinding(
  names: readonly string[],
  lines: readonly string[],
): HealthCheck {
  return finding(
    "integrity",
    "problem",
    `${
      groupedCount(
        names.length,
        "index no longer matches its table",
        "indexes no longer match their tables",
      )
    } (${names.join(", ")}); the table data is whole`,
    {
      fix: "hermes-state doctor --fix (rebuilds exactly those indexes from their tables: REINDEX)",
      fixable: true,
      // One line per index first: the details are cut, and the repair reads the names there.
      details: [...firstLines(lines), ...lines.filter((line) => !firstLines(lines).includes(line))],
    },
  );
}

/** The first line about each index, in order. */
function firstLines(lines: readonly string[]): string[] {
  const seen = new Set<string>();
  return lines.filter((line) => {
    const name = damagedIndexes([line])?.[0];
    if (name === undefined || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/**
 * Counts the entries of `index` whose row its table no longer holds, read
 * from the index alone (a covering scan) against the table read without
 * any index.
 *
 * @param db The connection.
 * @param index The index.
 * @returns The count, or `undefined` when it cannot be told (no such index,
 *   an index on expressions or on a table without rowid, a scan SQLite
 *   cannot make or that fails).
 */
export function danglingEntries(db: SqliteConnection, index: string): number | undefined {
  try {
    const row = db.prepare(
      "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'index' AND name = ?",
    ).get(index);
    if (row === undefined) return undefined;
    const table = String(row.tbl_name);
    const tableSql = db.prepare(
      "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
    ).get(table)?.sql;
    if (/\bWITHOUT\s+ROWID\b/i.test(String(tableSql ?? ""))) return undefined;
    const columns = db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(index)
      .map((c) => c.name);
    if (columns.length === 0 || columns.some((c) => typeof c !== "string")) return undefined;
    // A partial index is used only under its own condition: one of the form of our title
    // index's is repeated (as identifiers), any other is not judged.
    const where = /\sWHERE\s+(.+)$/is.exec(String(row.sql ?? ""))?.[1];
    const notNull = where === undefined ? undefined : /^"?(\w+)"? IS NOT NULL$/i.exec(where.trim());
    if (where !== undefined && notNull === null) return undefined;
    const column = notNull?.[1];
    const partial = column === undefined ? undefined : `${quoteIdentifier(column)} IS NOT NULL`;
    const t = quoteIdentifier(table);
    const n = db.prepare(
      `SELECT count(*) AS n FROM (SELECT rowid AS r FROM ${t} INDEXED BY ${quoteIdentifier(index)}
       ${partial === undefined ? "" : `WHERE ${partial}`}
       ORDER BY ${columns.map((c) => quoteIdentifier(String(c))).join(", ")})
       WHERE r NOT IN (SELECT rowid FROM ${t} NOT INDEXED)`,
    ).get()?.n;
    return Number(n);
  } catch (error) {
    // A scan SQLite cannot plan or read: not shown safe to rebuild.
    if (error instanceof SqliteError) return undefined;
    throw error;
  }
}
