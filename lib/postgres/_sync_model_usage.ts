/**
 * A newer Hermes's per-model usage rows (`session_model_usage`: each
 * call's tokens and cost under the model and billing route it used, and
 * side work such as titles under a `task`), carried by `sync` with their
 * session: read from the file in the pass's snapshot (as a text in the
 * session's row digest, so a change to them ships the session again; as
 * rows for the sessions a pass writes), and
 * written under the id the server gives the session, replacing the rows it
 * held. The server's usage report reads them as a file's is read
 * (`../core/usage_by_model.ts`); they go with their session (a foreign
 * key, `ON DELETE CASCADE`).
 *
 * @module
 */
import { blobAsText } from "../core/blob_text.ts";
import { COST_COLUMNS, TOKEN_TOTALS } from "../core/usage.ts";
import { MODEL_USAGE_READ_COLUMNS, MODEL_USAGE_TABLE } from "../core/usage_by_model.ts";
import type { Store } from "../sqlite/store.ts";
import type { PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** The columns naming a row (`''` where the file's table lacks one: a schema-21 `task`). */
const KEY_COLUMNS: readonly string[] = [
  "model",
  "billing_provider",
  "billing_base_url",
  "billing_mode",
  "task",
];

/** The counted columns, summed over the file's rows of one key, and 0 where the table lacks one. */
const COUNT_COLUMNS: readonly string[] = [
  "api_call_count",
  ...TOKEN_TOTALS.map((t) => t.column),
  ...COST_COLUMNS,
];

/** The other columns, with how the rows of one key give their value. */
const OTHER_COLUMNS: readonly { readonly name: string; readonly of: string }[] = [
  { name: "cost_status", of: "MAX" },
  { name: "cost_source", of: "MAX" },
  { name: "first_seen", of: "MIN" },
  { name: "last_seen", of: "MAX" },
];

/** One row of a session's usage as the server keeps it (the session's id aside). */
export type ModelUsageEntry = Readonly<Record<string, string | number | null>>;

/** Every column of a server row but `session_id`, in order, with its type there. */
const SERVER_COLUMNS: readonly { readonly name: string; readonly type: string }[] = [
  ...KEY_COLUMNS.map((name) => ({ name, type: "text" })),
  ...COUNT_COLUMNS.map((name) => ({
    name,
    type: COST_COLUMNS.includes(name) ? "double precision" : "bigint",
  })),
  { name: "cost_status", type: "text" },
  { name: "cost_source", type: "text" },
  { name: "first_seen", type: "double precision" },
  { name: "last_seen", type: "double precision" },
];

/**
 * Each session's per-model usage rows in the file as one text: every
 * column of every row (a BLOB as its `quote()`), a line a row, in the order
 * of the file's index on the session. It goes into the session's row digest,
 * so a pass sees any change to them without reading the rows themselves
 * (reading 25,000 rows as records took an unchanged pass over 10,000
 * sessions from 0.34 to 0.62 s; this text, 30 ms). `undefined` for a file
 * without such a table (or without a column a report reads), whose
 * sessions' rows `sync` leaves as they are.
 *
 * @param store The file, inside the pass's read transaction.
 * @returns The text by session id, or `undefined`.
 */
export function readModelUsageDigests(store: Store): Map<string, string> | undefined {
  const names = store.columns(MODEL_USAGE_TABLE);
  if (!MODEL_USAGE_READ_COLUMNS.every((name) => names.has(name))) return undefined;
  // json_array() refuses a BLOB: that value goes in as its quote() (X'…').
  const values = [...names].map((name) => {
    const column = quoteIdentifier(name);
    return `CASE WHEN typeof(${column}) = 'blob' THEN quote(${column}) ELSE ${column} END`;
  });
  const texts = new Map<string, string>();
  for (
    const row of store.statement(
      `SELECT session_id, group_concat(json_array(${values.join(", ")}), char(10)) AS usage
       FROM ${MODEL_USAGE_TABLE} GROUP BY session_id`,
    ).all()
  ) {
    texts.set(String(blobAsText(row.session_id)), String(row.usage));
  }
  return texts;
}

/**
 * Reads one session's per-model usage rows from the file, one per key of
 * the server's table (rows of a key the file tells apart further, as a
 * layout with other key columns would, are summed), in key order: for the
 * sessions a pass writes. Call only on a file
 * {@linkcode readModelUsageDigests} found the table in.
 *
 * @param store The file, inside the pass's read transaction.
 * @returns A function from a session id to its rows.
 */
export function modelUsageReader(store: Store): (id: string) => ModelUsageEntry[] {
  const names = store.columns(MODEL_USAGE_TABLE);
  const keys = KEY_COLUMNS.map((name) =>
    names.has(name) ? `COALESCE(CAST(${name} AS TEXT), '')` : "''"
  );
  const columns = [
    ...KEY_COLUMNS.map((name, i) => `${keys[i]} AS ${name}`),
    ...COUNT_COLUMNS.map((name) => names.has(name) ? `TOTAL(${name}) AS ${name}` : `0 AS ${name}`),
    ...OTHER_COLUMNS.map(({ name, of }) =>
      names.has(name) ? `${of}(${name}) AS ${name}` : `NULL AS ${name}`
    ),
  ];
  const read = store.statement(
    `SELECT ${columns.join(", ")} FROM ${MODEL_USAGE_TABLE} WHERE session_id = ?
     GROUP BY ${keys.join(", ")} ORDER BY ${keys.join(", ")}`,
  );
  return (id) =>
    read.all(id).map((row) => {
      const entry: Record<string, string | number | null> = {};
      for (const { name } of SERVER_COLUMNS) {
        const value = blobAsText(row[name] ?? null);
        entry[name] = typeof value === "bigint" ? Number(value) : value as string | number | null;
      }
      return entry;
    });
}

/**
 * Why a session's usage rows cannot reach the server: a value its number
 * columns cannot hold (text, an infinite REAL, a fraction or more than 2^63
 * where it keeps an integer), which failed the whole pass. `undefined`:
 * they can.
 *
 * @param entries The session's rows.
 * @returns The reason, or `undefined`.
 */
export function unshippableUsage(entries: readonly ModelUsageEntry[]): string | undefined {
  for (const entry of entries) {
    for (const { name, type } of SERVER_COLUMNS) {
      const value = entry[name];
      if (type === "text" || value === null || fits(value, type)) continue;
      const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
      return `its ${MODEL_USAGE_TABLE}.${name} holds ${shown}, where the server keeps ${
        type === "bigint" ? "an integer" : "a number"
      }`;
    }
  }
  return undefined;
}

/** Whether a column of the server's `type` holds `value`. */
function fits(value: string | number, type: string): boolean {
  if (typeof value !== "number" || !Number.isFinite(value)) return false;
  return type !== "bigint" || (Number.isInteger(value) && Math.abs(value) < 2 ** 63);
}

/**
 * Sets the usage rows of sessions on the server to the file's, in the
 * caller's transaction: the rows it held of them are deleted.
 *
 * @param query The transaction's query function.
 * @param sessions Each session's server id and its rows in the file.
 */
export async function replaceModelUsage(
  query: PgQuery,
  sessions: readonly { readonly id: string; readonly usage: readonly ModelUsageEntry[] }[],
): Promise<void> {
  if (sessions.length === 0) return;
  await query(
    `DELETE FROM ${MODEL_USAGE_TABLE} WHERE session_id IN (SELECT json_array_elements_text($1::text::json))`,
    [jsonParam(sessions.map((session) => session.id))],
  );
  const rows = sessions.flatMap((session) =>
    session.usage.map((entry) => ({ session_id: session.id, ...entry }))
  );
  if (rows.length === 0) return;
  const names = ["session_id", ...SERVER_COLUMNS.map((column) => column.name)];
  const types = ["session_id text", ...SERVER_COLUMNS.map(({ name, type }) => `${name} ${type}`)];
  await query(
    `INSERT INTO ${MODEL_USAGE_TABLE} (${names.join(", ")})
     SELECT ${names.join(", ")} FROM json_to_recordset($1::text::json) AS u(${types.join(", ")})`,
    [jsonParam(rows)],
  );
}
