/**
 * A session's per-model usage rows in a newer Hermes's file
 * (`session_model_usage`), read and written whole: what `getModelUsage`
 * answers, what `importSession` writes with `modelUsage` (so `copy` carries
 * them), and what `sync` ships to a server.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { blobAsText } from "../core/blob_text.ts";
import { MODEL_USAGE_COLUMNS, type SessionModelUsage } from "../core/session_model_usage.ts";
import { MODEL_USAGE_READ_COLUMNS, MODEL_USAGE_TABLE } from "../core/usage_by_model.ts";
import { knownUsageLayout } from "./model_usage.ts";

/** How the rows of one key of the reader give each column that is not part of it. */
const AGGREGATE: Readonly<Record<string, string>> = {
  count: "TOTAL",
  cost: "TOTAL",
  text: "MAX",
};

/**
 * Whether the file has a per-model usage table a session's rows can be
 * read from (every column a report reads).
 *
 * @param store The file.
 * @returns `true` when it has.
 */
export function readsSessionModelUsage(store: Store): boolean {
  const names = store.columns(MODEL_USAGE_TABLE);
  return MODEL_USAGE_READ_COLUMNS.every((name) => names.has(name));
}

/**
 * A reader of one session's rows, one per key of {@linkcode
 * SessionModelUsage} (rows of a key the file tells apart further, as a
 * layout with other key columns would, are summed), in key order; a column
 * the file's table lacks is `''`, `0` or `null`. Values are as the file
 * holds them (a BLOB as its text). Call only on a file {@linkcode
 * readsSessionModelUsage} accepts.
 *
 * @param store The file, inside a read.
 * @returns A function from a session id to its rows.
 */
export function modelUsageReader(store: Store): (id: string) => SessionModelUsage[] {
  const names = store.columns(MODEL_USAGE_TABLE);
  const keys = MODEL_USAGE_COLUMNS.filter((c) => c.kind === "key").map(({ name }) =>
    names.has(name) ? `COALESCE(CAST(${name} AS TEXT), '')` : "''"
  );
  const columns = MODEL_USAGE_COLUMNS.map(({ name, kind }, i) => {
    if (kind === "key") return `${keys[i]} AS ${name}`;
    if (!names.has(name)) return `${kind === "text" || kind === "time" ? "NULL" : "0"} AS ${name}`;
    const of = kind === "time" ? (name === "first_seen" ? "MIN" : "MAX") : AGGREGATE[kind];
    return `${of}(${name}) AS ${name}`;
  });
  const read = store.statement(
    `SELECT ${columns.join(", ")} FROM ${MODEL_USAGE_TABLE} WHERE session_id = ?
     GROUP BY ${keys.join(", ")} ORDER BY ${keys.join(", ")}`,
  );
  return (id) =>
    read.all(id).map((row) => {
      const entry: Record<string, unknown> = {};
      for (const { name } of MODEL_USAGE_COLUMNS) {
        const value = blobAsText(row[name] ?? null);
        entry[name] = typeof value === "bigint" ? Number(value) : value;
      }
      return entry as unknown as SessionModelUsage;
    });
}

/**
 * Implements `SessionDB.getModelUsage`: a session's rows, `[]` in a file
 * without such a table.
 *
 * @param store The file, inside a read.
 * @param id The session.
 * @returns Its rows, in key order.
 */
export function readSessionModelUsage(store: Store, id: string): SessionModelUsage[] {
  return readsSessionModelUsage(store) ? modelUsageReader(store)(id) : [];
}

/**
 * Replaces a session's rows with `rows`, inside the caller's write. Rows
 * whose keys the file's table does not tell apart (a table without `task`)
 * are merged into one: counts and costs added, the latest text kept, the
 * first and last times. Does nothing and answers `false` on a file without
 * such a table, or of a layout it cannot write (`knownUsageLayout`).
 *
 * @param store The file, inside a write; the session exists.
 * @param id The session.
 * @param rows Its rows, checked (`checkModelUsage`).
 * @returns Whether the file keeps them.
 */
export function writeSessionModelUsage(
  store: Store,
  id: string,
  rows: readonly SessionModelUsage[],
): boolean {
  const layout = knownUsageLayout(store);
  if (layout === undefined) return false;
  const kept = MODEL_USAGE_COLUMNS.filter(({ name }) => layout.columns.has(name));
  // The table's own key tells rows apart: a schema-21 table has no `task`.
  const rowKey = layout.key.filter((name) => name !== "session_id");
  const merged = new Map<string, Record<string, string | number | null>>();
  for (const row of rows) {
    const key = JSON.stringify(rowKey.map((name) => row[name as keyof SessionModelUsage]));
    const into = merged.get(key);
    if (into === undefined) {
      merged.set(key, { ...row });
      continue;
    }
    for (const { name, kind } of MODEL_USAGE_COLUMNS) {
      const value = row[name];
      if (kind === "count" || kind === "cost") into[name] = Number(into[name]) + Number(value);
      else if (kind === "text") into[name] = value ?? into[name];
      else if (kind === "time" && value !== null) {
        const now = into[name];
        into[name] = now === null
          ? value
          : name === "first_seen"
          ? Math.min(Number(now), Number(value))
          : Math.max(Number(now), Number(value));
      }
    }
  }
  store.statement(`DELETE FROM ${MODEL_USAGE_TABLE} WHERE session_id = ?`).run(id);
  const insert = store.statement(
    `INSERT INTO ${MODEL_USAGE_TABLE} (session_id, ${kept.map((c) => c.name).join(", ")})
     VALUES (?, ${kept.map(() => "?").join(", ")})`,
  );
  for (const row of merged.values()) insert.run(id, ...kept.map(({ name }) => row[name]));
  return true;
}
