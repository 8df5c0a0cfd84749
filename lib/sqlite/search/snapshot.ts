/**
 * One read transaction around the statements of one search, so that every
 * statement sees the same file even while other processes commit.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { SqliteError } from "../driver/sqlite_error.ts";

/**
 * Runs `fn` in one read transaction; inside a caller's transaction, in that one.
 *
 * @param store The open store.
 * @param fn The reads.
 * @returns What `fn` returned.
 * @throws {SqliteError} On a storage failure.
 */
export function inSnapshot<T>(store: Store, fn: () => T): T {
  try {
    store.db.exec("BEGIN");
  } catch (error) {
    // Already in a transaction: it is the snapshot.
    if (error instanceof SqliteError && /within a transaction/.test(error.message)) return fn();
    throw error;
  }
  try {
    return fn();
  } finally {
    store.db.exec("COMMIT");
  }
}
