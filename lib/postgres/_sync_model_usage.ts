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
import { MODEL_USAGE_COLUMNS, type SessionModelUsage } from "../core/session_model_usage.ts";
import { MODEL_USAGE_TABLE } from "../core/usage_by_model.ts";
import { readsSessionModelUsage } from "../sqlite/session_model_usage.ts";
import type { Store } from "../sqlite/store.ts";
import type { PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** Every column of a server row but `session_id`, in order, with its type there. */
const SERVER_COLUMNS: readonly { readonly name: keyof SessionModelUsage; readonly type: string }[] =
  MODEL_USAGE_COLUMNS.map(({ name, kind }) => ({
    name,
    type: kind === "key" || kind === "text"
      ? "text"
      : kind === "count"
      ? "bigint"
      : "double precision",
  }));

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
  if (!readsSessionModelUsage(store)) return undefined;
  const names = store.columns(MODEL_USAGE_TABLE);
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
 * Why a session's usage rows cannot reach the server: a value its number
 * columns cannot hold (text, an infinite REAL, a fraction or more than 2^63
 * where it keeps an integer), which failed the whole pass. `undefined`:
 * they can.
 *
 * @param entries The session's rows.
 * @returns The reason, or `undefined`.
 */
export function unshippableUsage(entries: readonly SessionModelUsage[]): string | undefined {
  for (const entry of entries) {
    for (const { name, type } of SERVER_COLUMNS) {
      // As the file holds it: text where a number belongs, too.
      const value: unknown = entry[name];
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
function fits(value: unknown, type: string): boolean {
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
  sessions: readonly { readonly id: string; readonly usage: readonly SessionModelUsage[] }[],
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
