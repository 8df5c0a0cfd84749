/**
 * Another connection to a state.db, in this process, that takes its write
 * lock at a set point of a test (a hook inside the command under test) and
 * lets it go: what a gateway writing the file is to a CLI command that
 * meets the lock. For a lock held by another process, see
 * `_held_whole_child.ts`.
 *
 * @module
 */
import { rawOpen } from "./_helpers.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";

/**
 * Takes the write lock of a file when told to (or, `whole`, the whole file,
 * as a WAL recovery holds it: no one reads it either), and lets it go.
 */
export class LockHolder {
  #db: SqliteConnection;
  #whole: boolean;
  #held = false;
  private constructor(db: SqliteConnection, whole: boolean) {
    this.#db = db;
    this.#whole = whole;
  }

  /**
   * A holder of `path`, holding nothing yet.
   *
   * @param path The state.db.
   * @param options `whole`: take the whole file (`locking_mode = EXCLUSIVE`, `BEGIN EXCLUSIVE`).
   * @returns The holder.
   */
  static async on(path: string, options: { whole?: boolean } = {}): Promise<LockHolder> {
    return new LockHolder(await rawOpen(path), options.whole ?? false);
  }

  /** Takes the lock (a transaction begun and a write in it) and keeps it; once only. */
  take(): void {
    if (this.#held) return;
    if (this.#whole) this.#db.exec("PRAGMA locking_mode = EXCLUSIVE");
    this.#db.exec(this.#whole ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE");
    this.#db.exec("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('held', 'yes')");
    this.#held = true;
  }

  /** Lets the lock go (the write rolled back) and closes the connection. */
  release(): void {
    if (this.#held) this.#db.exec("ROLLBACK");
    this.#held = false;
    this.#db.close();
  }
}
