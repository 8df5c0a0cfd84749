/**
 * `openStore(target)`: the one entry point to a {@linkcode SessionStore} on
 * any engine. A path or `sqlite:PATH` opens a state.db file; a
 * `postgres://` or `postgresql://` URL opens the PostgreSQL engine (loaded
 * only then, so the SQLite path imports no npm package).
 *
 * @module
 */
import type { PostgresStoreOptions } from "./postgres/postgres_store.ts";
import type { SessionStore } from "./core/session_store.ts";
import { OpenError } from "./core/errors.ts";
import { describeValue } from "./core/shown_value.ts";
import { isPostgresTarget, notAStoreReason, sqlitePath } from "./core/store_target.ts";
import { checkOptionNames, type OptionNames } from "./core/option_names.ts";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite_store.ts";

export { isPostgresTarget, notAStoreReason, sqlitePath };

/** Options of {@linkcode openStore}: those of the engine the target names. */
export type OpenStoreOptions = SqliteStoreOptions & Omit<PostgresStoreOptions, "retry">;

/**
 * The options of {@linkcode openStore}, checked by name (either engine's: the
 * CLI gives a server the SQLite `retry` too): a misspelt `readonly` would
 * open the store for writing.
 */
const OPEN_STORE_OPTION_NAMES: OptionNames<OpenStoreOptions> = {
  readonly: "boolean",
  synchronous: true,
  retry: true,
  clock: true,
  openDriver: true,
  max: true,
  maxAttempts: true,
  sleep: true,
  random: true,
  schema: true,
};

/**
 * Opens the store `target` names.
 *
 * @param target A file path, `sqlite:PATH`, or a `postgres://` / `postgresql://` URL
 *   (`?schema=NAME` picks the schema, `hermes` by default; `?pool_size=N`
 *   the pool's connections, 4 by default, as `options.max` does), read as `psql`
 *   reads it: a Unix socket folder as the host (`postgres:///db?host=/var/run/postgresql`),
 *   libpq's `?host=`, `?port=`, `?user=`, `?password=`, `?dbname=`, `?sslmode=`,
 *   `?connect_timeout=`, the `PG*` environment variables and the password
 *   file (`~/.pgpass`) for what it leaves out; `?pgbouncer=true` through a
 *   pooler in transaction mode (no prepared statements, the schema from the
 *   role's `search_path`); other parameters are server settings for the
 *   session.
 * @param options Engine options.
 * @returns The open store; close it with `await store.close()` or `await using`.
 * @throws {OpenError} When the target looks like a URL of another kind
 *   (`sqlite://…`, `mysql://…`, `postgres:` without `//`, `file:…`).
 * @throws {OpenError} When the file cannot be opened or the server cannot be
 *   reached; when the URL has a bad value, a parameter the client cannot honour
 *   or a bad schema name (named in the message); when statements would reach
 *   another schema than the store's (a pooler's role without its
 *   `search_path`, named with the fix); read-only, when the schema
 *   holds no store (kind `not_found`) or one this version has not migrated yet
 *   (`hermes-state --db URL migrate` upgrades it).
 * @throws {OpenError} When the `postgres` package cannot be loaded (the message
 *   says how to install it).
 * @throws {RangeError} When an option has a bad value (a `synchronous` that is
 *   not `"full"` or `"normal"`, a `retry` time that is not a non-negative
 *   number), naming it; nothing is created.
 * @throws {TypeError} When `target` is not a string, naming the value; when
 *   `options` is not an object or holds an option neither engine takes,
 *   naming it (a misspelt `readOnly` would open the store for writing);
 *   nothing is opened.
 *
 * @example Recording and searching through the asynchronous store
 * ```ts
 * import { openStore } from "./open_store.ts";
 * const dir = await Deno.makeTempDir();
 * await using store = await openStore(`${dir}/state.db`);
 * await store.createSession("s1", "cli");
 * await store.appendMessage("s1", { role: "user", content: "prune docker images" });
 * const hits = await store.searchMessages("docker");
 * console.assert(hits.length === 1);
 * ```
 */
export async function openStore(
  target: string,
  options: OpenStoreOptions = {},
): Promise<SessionStore> {
  options ??= {};
  if (typeof target !== "string") {
    throw new TypeError(
      "Cannot open store: target must be a file path, sqlite:PATH or a postgres:// URL: " +
        `current value is ${describeValue(target)}`,
    );
  }
  checkOptionNames("open store", options, OPEN_STORE_OPTION_NAMES);
  if (isPostgresTarget(target)) {
    // Loaded only now: the SQLite path never evaluates the PostgreSQL engine or its client.
    const { openPostgresStore } = await import("./postgres/postgres_store.ts");
    return await openPostgresStore(target, options);
  }
  const notStore = notAStoreReason(target);
  if (notStore !== undefined) throw new OpenError(target, notStore);
  return await openSqliteStore(sqlitePath(target), options);
}
