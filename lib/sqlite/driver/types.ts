/**
 * The driver contract: the small synchronous subset of `node:sqlite` and
 * `bun:sqlite` that the rest of hermes-state uses. Code above `lib/sqlite/driver/`
 * depends on three files of it only: this contract, `sqlite_error.ts` (the
 * one error type every adapter throws) and `load.ts` (which picks the
 * adapter of the running runtime, for the open path).
 *
 * @module
 */

/** A value SQLite can bind or return. BLOBs are `Uint8Array`. */
export type SqlValue = string | number | bigint | Uint8Array | null;

/** One result row, keyed by column name. */
export type SqlRow = Record<string, SqlValue>;

/** Effect of a write, normalized across runtimes. */
export interface RunResult {
  /** Rows changed by the statement. */
  readonly changes: number;
  /** Rowid of the last inserted row. */
  readonly lastInsertRowid: number | bigint;
}

/** A prepared statement. Positional `?` parameters only. */
export interface SqliteStatement {
  /** Runs the statement and reports its effect. */
  run(...params: readonly SqlValue[]): RunResult;
  /** First row, or `undefined` when there is none. */
  get(...params: readonly SqlValue[]): SqlRow | undefined;
  /** Every row. */
  all(...params: readonly SqlValue[]): SqlRow[];
  /**
   * Rows one at a time, of one snapshot; an error met on the way is thrown.
   * Bun's driver steps the statement, so a large result never sits in
   * memory whole; `node:sqlite` (Deno, Node) reads the rows whole first,
   * as its own iterator hides errors on Deno and fails on an integer
   * beyond 2^53 on Node.
   */
  iterate(...params: readonly SqlValue[]): IterableIterator<SqlRow>;
}

/** Which runtime module a driver wraps. */
export type DriverKind = "node:sqlite" | "bun:sqlite";

/** One synchronous connection. Methods throw `SqliteError`, never a raw runtime error. */
export interface SqliteConnection extends Disposable {
  /** The runtime module behind this connection. */
  readonly kind: DriverKind;
  /** Runs one or more statements without parameters. */
  exec(sql: string): void;
  /** Prepares one statement. */
  prepare(sql: string): SqliteStatement;
  /** Closes the connection; a second call does nothing. */
  close(): void;
  /** Closes the connection as `close()` does, so that `using` closes it at the end of its block. */
  [Symbol.dispose](): void;
}

/** Options for opening a connection. */
export interface SqliteDriverOptions {
  /** Open without write access; a missing file is an error. */
  readonly readonly?: boolean;
  /**
   * Open read-only as an immutable file (SQLite's `immutable=1` URI
   * parameter): no locks are taken and no `-wal` or `-shm` is read or
   * created. Only for a file no process can change while it is open (a
   * read-only folder without a `-wal`); implies `readonly`.
   */
  readonly immutable?: boolean;
}

/** A driver: the runtime's adapter, which opens connections to the file at `path`. */
export type SqliteDriver = (
  path: string,
  options?: SqliteDriverOptions,
) => SqliteConnection;
