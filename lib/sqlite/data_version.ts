/**
 * A cheap marker of "the file changed": SQLite's `PRAGMA data_version`
 * (which moves when another connection, in any process, commits) with this
 * connection's own `total_changes()`. Live pages poll it.
 *
 * @module
 */
import type { Store } from "./store.ts";

/** Implements `SessionDB.dataVersion`: `data_version` with `total_changes()`. */
export function dataVersion(store: Store): string {
  const version = store.statement("PRAGMA data_version").get();
  const changes = store.statement("SELECT total_changes() AS n").get();
  return `${Number(version?.data_version ?? 0)}.${Number(changes?.n ?? 0)}`;
}
