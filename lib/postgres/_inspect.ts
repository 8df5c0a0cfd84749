/**
 * `inspect` on the PostgreSQL engine: the report a SQLite file gives, with
 * the server's words where the file's do not apply.
 *
 * @module
 */
import type { DatabaseInfo } from "../core/database_info.ts";
import type { PgQuery } from "./_client_types.ts";

/** What {@linkcode inspectPg} asks of the store beside its query. */
export interface InspectedStore {
  /** The URL, its password masked. */
  readonly target: string;
  /** The store's `sessionCount()`. */
  sessionCount(): Promise<number>;
  /** The store's `messageCount()`. */
  messageCount(): Promise<number>;
}

/**
 * What `inspect` says of a store on a server: its schema version, the
 * server's version, the size of its tables, its counts and meta keys.
 *
 * @param query The store's query.
 * @param store The store's target and counts.
 * @returns The report; no integrity check is made.
 */
export async function inspectPg(
  query: PgQuery,
  store: InspectedStore,
): Promise<DatabaseInfo> {
  const [version] = await query("SELECT version FROM schema_version LIMIT 1");
  const [server] = await query(
    `SELECT current_setting('server_version') AS v, current_setting('block_size') AS bs,
         (SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
          WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
           AND c.relkind = 'r') AS bytes`,
  );
  const meta = await query('SELECT key FROM state_meta ORDER BY key COLLATE "C"');
  const pageSize = Number(server.bs);
  return {
    path: store.target,
    schemaVersion: version === undefined ? null : Number(version.version),
    sqliteVersion: `PostgreSQL ${server.v}`,
    sqliteWarning: null,
    journalMode: "postgresql",
    walBytes: 0,
    staleFtsTables: [],
    pageSize,
    pageCount: Math.ceil(Number(server.bytes) / pageSize),
    freePages: 0,
    sessions: await store.sessionCount(),
    messages: await store.messageCount(),
    ftsTables: ["message_words.search_words", "messages.search_grams"],
    metaKeys: meta.map((row) => String(row.key)),
    integrity: null,
    searchIndexesChecked: false,
    knownIssues: [],
    damage: [],
  };
}
