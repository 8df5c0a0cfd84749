/**
 * Rows of `sessions` and `messages` read exactly, for an export that must
 * come back as it was: integers beyond 2^53 as `bigint` (a JS number would
 * round them: two message ids become one), and the bytes of a BLOB or of
 * text that is not valid UTF-8 under `hermes_state_bytes`
 * (`lib/core/stored_bytes.ts`). Rows are read as usual first; only a row
 * that may hold such a value is read again.
 *
 * @module
 */
import type { SqlRow, SqlValue } from "./driver/types.ts";
import type { Store } from "./store.ts";
import { exactIntegersTerm, invalidTexts, putExactIntegers } from "./exact_values.ts";
import { STORED_BYTES_KEY, type StoredBytes, storedBytesValue } from "../core/stored_bytes.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { isRoundedInteger } from "../core/exact_json.ts";
import { sessionsRead } from "./schema/read_views.ts";

/** The alias of the exact-integers term in a query that reads rows again. */
const EXACT = "hermes_state_exact_integers";

/** The alias of the rowid in such a query. */
const ROWID = "hermes_state_rowid";

/**
 * Whether a row read as usual may differ from what the file holds: an
 * integer that a JS number may have rounded (none within ±(2^53 - 1) is),
 * a BLOB, or text with U+FFFD (which bytes that are not valid UTF-8 read as).
 *
 * @param row A row as the driver returns it.
 * @returns `true` when the row should be read again exactly.
 */
export function needsExactRead(row: SqlRow): boolean {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "string") {
      if (value.includes("\uFFFD")) return true;
    } else if (isRoundedInteger(value)) {
      return true;
    } else if (value instanceof Uint8Array) {
      return true;
    }
  }
  return false;
}

/**
 * Reads again, exactly, the rows of `table` that `where` selects, in
 * `orderBy`'s order: integers beyond 2^53 as `bigint`; a BLOB's column set
 * to `null` and text that is not valid UTF-8 left as read, each with its
 * bytes under `hermes_state_bytes`.
 *
 * @param store The open store.
 * @param table `sessions` or `messages`.
 * @param where The condition (positional parameters).
 * @param params Its parameters.
 * @param orderBy The ORDER BY clause, or empty.
 * @returns The rows, keyed by column in file order.
 */
export function readExactRows(
  store: Store,
  table: "sessions" | "messages",
  where: string,
  params: readonly SqlValue[],
  orderBy = "",
): SqlRow[] {
  const columns = [...store.columns(table), "rowid"];
  // Whole session rows are read where the others are (schema/read_views.ts). A TEMP view has no
  // rowid: the row's is the table's, found by id (unique in both), and its bytes are read there.
  const from = table === "sessions" ? sessionsRead(store) : table;
  const viewed = store.isReadView(from);
  const rowidTerm = viewed
    ? `(SELECT r.rowid FROM main.${table} r WHERE r.id = ${from}.id)`
    : "rowid";
  // The rowid under a name of its own: as "rowid" the result column takes the name of
  // the column it aliases ("id"), which would then be there twice.
  const names = [
    ...columns.slice(0, -1).map(quoteIdentifier),
    `${rowidTerm} AS ${ROWID}`,
  ];
  const exact = exactIntegersTerm(viewed ? columns.slice(0, -1) : columns);
  const sql = `SELECT ${names.join(", ")}, ${exact} AS ${EXACT} FROM ${from}
    WHERE ${where} ${orderBy}`;
  const keys = [...columns.slice(0, -1), ROWID];
  return store.statement(sql).all(...params).map((read) => {
    const values = keys.map((key) => read[key]);
    putExactIntegers(values, read[EXACT]);
    const rowid = values[values.length - 1] as number | bigint;
    const bytes = new Map<string, StoredBytes>();
    const bytesOf = viewed ? `main.${table}` : table;
    for (const [index, text] of invalidTexts(store.db, bytesOf, columns, rowid, values) ?? []) {
      bytes.set(columns[index], { kind: "text", bytes: text });
    }
    const row: SqlRow = {};
    for (let i = 0; i < columns.length - 1; i++) {
      const value = values[i];
      if (value instanceof Uint8Array) {
        bytes.set(columns[i], { kind: "blob", bytes: value });
        row[columns[i]] = null;
      } else {
        row[columns[i]] = value;
      }
    }
    if (bytes.size > 0) {
      (row as Record<string, unknown>)[STORED_BYTES_KEY] = storedBytesValue(bytes);
    }
    return row;
  });
}
