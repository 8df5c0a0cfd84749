/**
 * One read transaction around several statements.
 *
 * @module
 */
import type { SqliteConnection } from "./driver/types.ts";

/**
 * Runs `read` in one read transaction of `db` (a savepoint, so inside a
 * transaction too): its statements see one state of the file, and in
 * rollback-journal mode a writer's commit cannot come between them, where
 * each statement would otherwise take the file's lock anew (and a busy
 * writer would make one of them fail nearly every time).
 *
 * @param db The connection.
 * @param read The statements, run at once.
 * @returns What `read` returns.
 *
 * @example
 * ```ts
 * import { loadDriver } from "./driver/load.ts";
 * import { inOneRead } from "./one_read.ts";
 * const db = (await loadDriver())(":memory:");
 * console.assert(inOneRead(db, () => db.prepare("SELECT 1 AS one").get()?.one) === 1);
 * db.close();
 * ```
 */
export function inOneRead<T>(db: SqliteConnection, read: () => T): T {
  db.exec("SAVEPOINT hermes_read");
  try {
    return read();
  } finally {
    try {
      // Nothing was written: releasing ends the read (and its lock) at once.
      db.exec("RELEASE hermes_read");
    } catch {
      // Already ended: an error of the read rolled its transaction back.
    }
  }
}
