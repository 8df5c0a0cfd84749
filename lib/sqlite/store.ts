/**
 * The context every feature module works with: one connection, a statement
 * cache, the write path and the clock. Internal: not exported from `mod.ts`.
 *
 * @module
 */
import type { SqliteConnection, SqliteStatement } from "./driver/types.ts";
import { ReadonlyError } from "../core/errors.ts";
import {
  damagedFtsTable,
  markFtsStale,
  needsNewerCjkTokenizer,
  setNewerCjkIndexAside,
} from "./fts_stale.ts";
import { WAL_TRUNCATE_BYTES, walBytes } from "./durability.ts";
import { trigramNulWriteError } from "./known_issues.ts";
import type { FtsTable } from "./schema/schema_sql.ts";
import type { Writer } from "./write.ts";
import { wallClockSeconds } from "../core/wall_clock.ts";

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Options of {@linkcode Store}. */
export interface StoreOptions {
  /** The database path, for messages. */
  readonly path: string;
  /** True when opened read-only: writes then throw. */
  readonly readonly: boolean;
  /** Seconds since the epoch, as a float. Defaults to the system clock. */
  readonly clock?: () => number;
}

/** One open database, as the feature modules see it. */
export class Store {
  /** The connection. */
  readonly db: SqliteConnection;
  /** The database path. */
  readonly path: string;
  /** True when opened read-only. */
  readonly readonly: boolean;
  readonly #writer: Writer;
  readonly #clock: () => number;
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #columns = new Map<string, ReadonlySet<string>>();
  /** `PRAGMA schema_version` when {@linkcode columns} was last read. */
  #columnsCookie = -1;
  readonly #views = new Map<string, boolean>();
  readonly #derived = new Map<symbol, unknown>();

  /**
   * @param db The connection.
   * @param writer Its write path.
   * @param options Path, mode and clock.
   */
  constructor(db: SqliteConnection, writer: Writer, options: StoreOptions) {
    this.db = db;
    this.#writer = writer;
    this.path = options.path;
    this.readonly = options.readonly;
    this.#clock = options.clock ?? wallClockSeconds;
  }

  /** The prepared statement for `sql`, prepared once per connection. */
  statement(sql: string): SqliteStatement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * The columns `table` has in this file: a file written by a newer Hermes
   * has more (`sessions.archived`, `messages.active`…), an older one fewer.
   * Empty for a missing table. Read again after any schema change, by this
   * connection or another process (a newer Hermes upgrading the file while
   * a server keeps it open): the file's schema cookie says when, and the
   * prepared statements are then dropped too.
   *
   * @param table A table name from a closed set in the caller.
   * @returns The column names.
   */
  columns(table: string): ReadonlySet<string> {
    const cookie = Number(this.statement("PRAGMA schema_version").get()?.schema_version);
    if (cookie !== this.#columnsCookie) {
      // A statement prepared on the old schema names the columns of then: SQLite prepares
      // it again, but the driver keeps the names it read (`SELECT *` rows lacked a new column).
      // The first look too: a statement prepared before it may predate the change.
      this.#statements.clear();
      this.#columns.clear();
      this.#columnsCookie = cookie;
    }
    let names = this.#columns.get(table);
    if (names === undefined) {
      const rows = this.db.prepare("SELECT name FROM pragma_table_info(?)").all(table);
      names = new Set(rows.map((row) => String(row.name)));
      this.#columns.set(table, names);
    }
    return names;
  }

  /**
   * Whether `table` is read through the TEMP view a read-only open gives an
   * older file (see `schema/read_views.ts`), which has no rowid.
   *
   * @param table `sessions` or `messages`.
   * @returns True for a view.
   */
  isReadView(table: string): boolean {
    let viewed = this.#views.get(table);
    if (viewed === undefined) {
      viewed = this.db.prepare(
        "SELECT 1 AS one FROM sqlite_temp_schema WHERE type = 'view' AND name = ?",
      ).get(table) !== undefined;
      this.#views.set(table, viewed);
    }
    return viewed;
  }

  /**
   * Whether `table` exists in this file (read once per connection).
   *
   * @param table The table name.
   * @returns True when it exists.
   */
  hasTable(table: string): boolean {
    return this.columns(table).size > 0;
  }

  /**
   * State a feature module derives from this connection's view of the file
   * (kept current by that module), made on first use and dropped with the
   * connection: the store, not the module, owns it.
   *
   * @param key The module's own key.
   * @param make Makes the state the first time.
   * @returns The state.
   */
  derived<T>(key: symbol, make: () => T): T {
    if (!this.#derived.has(key)) this.#derived.set(key, make());
    return this.#derived.get(key) as T;
  }

  /**
   * Runs `fn` as one write transaction (retried while the file is locked).
   * When it fails because a full-text table is damaged, `fn` runs again in
   * a new transaction that first marks that table stale (its triggers
   * dropped, see `fts_stale.ts`): a broken index never costs a message. So
   * does a newer Hermes's CJK index whose tokenizer this process lacks.
   * `fn` must be safe to run more than once (as for a busy retry).
   *
   * @throws {ReadonlyError} When the database was opened read-only.
   */
  write<T>(fn: () => T): T {
    if (this.readonly) throw new ReadonlyError(this.path);
    if (this.#writer.active) return fn();
    try {
      return this.#writer.run(fn);
    } catch (error) {
      return this.#writeDespiteFtsDamage(fn, error);
    }
  }

  /**
   * Redoes a write that `failure` stopped, marking each damaged full-text
   * table stale, and setting aside a newer Hermes's CJK index when its
   * tokenizer is what failed it.
   */
  #writeDespiteFtsDamage<T>(fn: () => T, failure: unknown): T {
    const marks = new Map<FtsTable, string>();
    let cjkAside = false;
    let error = failure;
    for (;;) {
      const table = damagedFtsTable(this.db, error, [...marks.keys()]);
      if (table !== undefined) marks.set(table, describe(error));
      else if (!cjkAside && needsNewerCjkTokenizer(this.db, error)) cjkAside = true;
      else throw trigramNulWriteError(this.db, error, this.path) ?? error;
      try {
        return this.#writer.run(() => {
          if (cjkAside) setNewerCjkIndexAside(this.db);
          for (const [stale, reason] of marks) {
            markFtsStale(this.db, stale, { reason, at: this.now() });
          }
          return fn();
        });
      } catch (next) {
        error = next;
      }
    }
  }

  /** True while a write transaction of this store is running (its reads see uncommitted rows). */
  get writing(): boolean {
    return this.#writer.active;
  }

  /** The current time in seconds since the epoch. */
  now(): number {
    return this.#clock();
  }

  /**
   * Best-effort WAL checkpoint (see `Writer.checkpoint`).
   *
   * @param mode `"truncate"` empties the `-wal` when no other connection is
   *   busy and it has grown past {@linkcode WAL_TRUNCATE_BYTES}.
   */
  checkpoint(mode: "passive" | "truncate" = "passive"): void {
    if (this.readonly) return;
    const truncate = mode === "truncate" && walBytes(this.path) >= WAL_TRUNCATE_BYTES;
    this.#writer.checkpoint(truncate ? "truncate" : "passive");
  }
}
