/**
 * Whether the rollback journal beside a file is a dead writer's, asked of
 * SQLite: a live writer of a rollback-journal file has a `-journal` for
 * every transaction it runs, gone at its commit, which is no leftover.
 *
 * @module
 */
import type { SqliteDriver } from "../sqlite/driver/types.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import { hasLeftoverJournal } from "../sqlite/damaged_file.ts";

/** SQLITE_READONLY: a read-only read that met a hot journal (`SQLITE_READONLY_ROLLBACK`). */
const SQLITE_READONLY = 8;

/**
 * Whether a writer died in the middle of a transaction and left its
 * rollback journal beside `path` (a hot journal, which only a writable open
 * plays back). A non-empty `-journal` alone does not say it: a writer at
 * work has one too, and holds its lock. SQLite's read-only mode tells them
 * apart, as it does before every read: it refuses to read past a hot
 * journal, reads past a live writer's, and answers busy while that writer
 * writes its pages (then the journal is a live writer's: a dead one holds
 * no lock). That connection changes nothing.
 *
 * @param path The database file.
 * @param openDriver The driver opener.
 * @returns True when the journal is a dead writer's.
 */
export function deadWritersJournal(path: string, openDriver: SqliteDriver): boolean {
  if (!hasLeftoverJournal(path)) return false;
  let db;
  try {
    db = openDriver(path, { readonly: true });
  } catch {
    return true; // unreadable even so: the journal is said, as before
  }
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
    return false;
  } catch (error) {
    return error instanceof SqliteError && error.code === SQLITE_READONLY &&
      hasLeftoverJournal(path);
  } finally {
    db.close();
  }
}
