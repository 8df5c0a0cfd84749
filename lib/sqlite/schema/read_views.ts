/**
 * Reading a file of an older or a newer Hermes as it is, through TEMP views
 * of the same name on a read connection (TEMP objects live in the
 * connection only; the file is not touched, and unqualified names find
 * `temp` before `main`):
 *
 * - A v1–v10 file lacks some columns the v11 schema declares
 *   (`api_call_count`, `reasoning_content`, `model`…); the upgrade adds them
 *   with `ALTER TABLE … ADD COLUMN`, which a read must not do. The view has
 *   the live columns in file order, then each missing one with its declared
 *   default, exactly the shape (and values) the upgrade would give.
 * - A newer Hermes (its schema 25 and later) keeps each distinct system
 *   prompt once, in `system_prompts (hash, prompt)`: a session's row names
 *   it by `system_prompt_hash` and its own `system_prompt` is NULL, and
 *   `tool_names` may be such a hash too. That Hermes reads a session as
 *   `COALESCE(sp.prompt, s.system_prompt)` (and the same for `tool_names`),
 *   joining the table by hash; so does the view, so that every read,
 *   export, `sync` and `copy` has the prompt itself, not a hash that means
 *   nothing without that table.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import type { Store } from "../store.ts";
import { DECLARED_COLUMNS } from "./schema_sql.ts";
import { quoteIdentifier } from "../../core/sql_identifier.ts";

/** The tables a read may see through a view. */
const TABLES = ["sessions", "messages"] as const;

/** The value a missing column reads as: its declared DEFAULT, else NULL. */
function defaultOf(definition: string): string {
  const match = /\bDEFAULT\s+('(?:[^']|'')*'|-?\d+(?:\.\d+)?|NULL)/i.exec(definition);
  return match ? match[1] : "NULL";
}

/**
 * Creates, on a read-only connection, a TEMP view for each Hermes table of
 * the file that lacks declared columns, or (`sessions`) keeps its prompts in
 * `system_prompts`. Call after checking that both tables exist. A view
 * already there is kept, so a try that another process's lock cut short may
 * be run again.
 *
 * @param db A read-only connection.
 * @returns The tables read through a view (`[]` for a v11 file).
 */
export function createReadViews(db: SqliteConnection): string[] {
  const viewed: string[] = [];
  for (const table of TABLES) {
    const select = viewSelect(db, table, { missing: true });
    if (select === undefined) continue;
    db.exec(`CREATE TEMP VIEW IF NOT EXISTS ${table} AS ${select}`);
    viewed.push(table);
  }
  return viewed;
}

/**
 * The TEMP view a writable connection reads whole session rows through
 * ({@linkcode sessionsRead}), where `sessions` is the table itself: made
 * only for a file that keeps its prompts in `system_prompts`.
 */
export const RESOLVED_SESSIONS = "hermes_sessions_read";

/**
 * Creates, on a writable connection, {@linkcode RESOLVED_SESSIONS} when the
 * file keeps its prompts in `system_prompts`. Call outside a transaction
 * (a rollback would take the view with it).
 *
 * @param db A writable connection.
 * @returns Whether the view exists.
 */
export function createResolvedSessionsView(db: SqliteConnection): boolean {
  const select = viewSelect(db, "sessions", { missing: false });
  if (select === undefined) return false;
  db.exec(`CREATE TEMP VIEW IF NOT EXISTS ${RESOLVED_SESSIONS} AS ${select}`);
  return true;
}

/**
 * Where a read of whole session rows (`SELECT *`, `s.*`) finds them:
 * `sessions`, or on a writable connection to a file that keeps its prompts
 * in `system_prompts`, {@linkcode RESOLVED_SESSIONS} (a read-only
 * connection's `sessions` is already such a view).
 *
 * @param store The open store.
 * @returns A table or view name, for a FROM clause.
 */
export function sessionsRead(store: Store): string {
  return !store.readonly && store.isReadView(RESOLVED_SESSIONS) ? RESOLVED_SESSIONS : "sessions";
}

/**
 * The SELECT a view of `table` reads, or `undefined` when none is needed:
 * the live columns in file order (the prompt columns through
 * `system_prompts`), then, with `missing`, each declared column the file
 * lacks with its default.
 */
function viewSelect(
  db: SqliteConnection,
  table: typeof TABLES[number],
  { missing: addMissing }: { missing: boolean },
): string | undefined {
  const live = db.prepare("SELECT name FROM pragma_table_info(?, 'main')").all(table)
    .map((row) => String(row.name));
  const present = new Set(live);
  const missing = addMissing
    ? DECLARED_COLUMNS.filter((c) => c.table === table && !present.has(c.name))
    : [];
  const resolved = table === "sessions" && hasPromptsTable(db)
    ? PROMPT_COLUMNS.filter((c) => present.has(c.text) && present.has(c.hash))
    : [];
  if (missing.length === 0 && resolved.length === 0) return undefined;
  const resolvedBy = new Map<string, { hash: string; alias: string }>(
    resolved.map((c, i) => [c.text, { hash: c.hash, alias: `p${i}` }]),
  );
  const columns = [
    ...live.map((name) => {
      const resolve = resolvedBy.get(name);
      const column = `t.${quoteIdentifier(name)}`;
      return resolve === undefined
        ? column
        : `COALESCE(${resolve.alias}.prompt, ${column}) AS ${quoteIdentifier(name)}`;
    }),
    ...missing.map((c) => `${defaultOf(c.definition)} AS ${quoteIdentifier(c.name)}`),
  ];
  const joins = [...resolvedBy.values()].map(({ hash, alias }) =>
    ` LEFT JOIN main.system_prompts ${alias} ON ${alias}.hash = t.${quoteIdentifier(hash)}`
  );
  return `SELECT ${columns.join(", ")} FROM main.${table} t${joins.join("")}`;
}

/**
 * The session columns a newer Hermes resolves through `system_prompts`:
 * each, its text column and the column holding the hash (the same one for
 * `tool_names`, which holds either).
 */
const PROMPT_COLUMNS = [
  { text: "system_prompt", hash: "system_prompt_hash" },
  { text: "tool_names", hash: "tool_names" },
] as const;

/** Whether the file has a newer Hermes's `system_prompts (hash, prompt)`. */
function hasPromptsTable(db: SqliteConnection): boolean {
  const columns = new Set(
    db.prepare("SELECT name FROM pragma_table_info('system_prompts', 'main')").all()
      .map((row) => String(row.name)),
  );
  return columns.has("hash") && columns.has("prompt");
}
