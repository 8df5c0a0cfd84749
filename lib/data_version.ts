/**
 * A cheap marker of "the file changed": SQLite's `PRAGMA data_version`
 * (which moves when another connection, in any process, commits) with this
 * connection's own `total_changes()`. Live pages poll it.
 *
 * @module
 */
import type { Store } from "./store.ts";

/**
 * The current change marker; two equal answers mean nothing was committed in between.
 *
 * @param store The open store.
 * @returns An opaque text.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * const db = await SessionDB.open({ path: `${dir}/state.db` });
 * const before = db.dataVersion();
 * db.createSession("s1", "cli");
 * console.assert(db.dataVersion() !== before);
 * db.close();
 * ```
 */
export function dataVersion(store: Store): string {
  const version = store.statement("PRAGMA data_version").get();
  const changes = store.statement("SELECT total_changes() AS n").get();
  return `${Number(version?.data_version ?? 0)}.${Number(changes?.n ?? 0)}`;
}
