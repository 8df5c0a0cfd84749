/**
 * Adapter over `bun:sqlite`, used on Bun. The module is imported dynamically
 * with a computed specifier, so other runtimes never try to resolve it.
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import type {
  RunResult,
  SqliteConnection,
  SqliteDriverOptions,
  SqliteStatement,
  SqlRow,
  SqlValue,
} from "./types.ts";
import { translated } from "./_to_sqlite_error.ts";
import { iterateRows } from "./_iterate.ts";

/** The part of a `bun:sqlite` statement this adapter calls. */
interface BunStatement {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): SqlRow | null;
  all(...params: SqlValue[]): SqlRow[];
  iterate(...params: SqlValue[]): IterableIterator<SqlRow>;
  finalize(): void;
}

/** The part of a `bun:sqlite` database this adapter calls. */
interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): BunStatement;
  close(): void;
}

type BunDatabaseConstructor = new (
  path: string,
  options: { readonly?: boolean; create?: boolean; strict?: boolean } | number,
) => BunDatabase;

/** `SQLITE_OPEN_READONLY | SQLITE_OPEN_URI`: how an immutable `file:` URI is opened. */
const READONLY_URI_FLAGS = 0x01 | 0x40;

function plainBytes(row: SqlRow): SqlRow {
  // Bun hands BLOBs back as Buffer; callers expect a plain Uint8Array.
  for (const key in row) {
    const value = row[key];
    if (value instanceof Uint8Array && value.constructor !== Uint8Array) {
      row[key] = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return row;
}

class BunSqliteStatement implements SqliteStatement {
  readonly #stmt: BunStatement;

  constructor(stmt: BunStatement) {
    this.#stmt = stmt;
  }

  run(...params: readonly SqlValue[]): RunResult {
    return translated(() => {
      const result = this.#stmt.run(...params);
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    });
  }

  get(...params: readonly SqlValue[]): SqlRow | undefined {
    const row = translated(() => this.#stmt.get(...params));
    return row === null ? undefined : plainBytes(row);
  }

  all(...params: readonly SqlValue[]): SqlRow[] {
    return translated(() => this.#stmt.all(...params)).map(plainBytes);
  }

  iterate(...params: readonly SqlValue[]): IterableIterator<SqlRow> {
    return iterateRows(() => this.#stmt.iterate(...params), plainBytes);
  }
}

class BunSqliteDriver implements SqliteConnection {
  readonly kind = "bun:sqlite" as const;
  readonly #db: BunDatabase;
  /** Finalized on close: while one lives, Bun only defers the close (the WAL stays). */
  readonly #statements = new Set<BunStatement>();
  #open = true;

  constructor(db: BunDatabase) {
    this.#db = db;
  }

  exec(sql: string): void {
    translated(() => this.#db.exec(sql));
  }

  prepare(sql: string): SqliteStatement {
    const stmt = translated(() => this.#db.prepare(sql));
    this.#statements.add(stmt);
    return new BunSqliteStatement(stmt);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    // A statement that fails to finalize must not keep the database open.
    let failure: unknown;
    for (const stmt of this.#statements) {
      try {
        translated(() => stmt.finalize());
      } catch (error) {
        failure ??= error;
      }
    }
    this.#statements.clear();
    translated(() => this.#db.close());
    if (failure !== undefined) throw failure;
  }
}

/**
 * Loads `bun:sqlite` and returns a function that opens connections with it.
 *
 * @returns The opener.
 */
export async function loadBunSqlite(): Promise<
  (path: string, options?: SqliteDriverOptions) => SqliteConnection
> {
  const specifier = "bun:" + "sqlite";
  const module = await import(specifier) as { Database: BunDatabaseConstructor };
  return (path, options = {}) => {
    const readonly = options.readonly ?? false;
    // Flags instead of an options object turn off `strict`, which matters
    // only for named parameters; this adapter binds positional ones alone.
    const db = options.immutable
      ? translated(() =>
        new module.Database(`${pathToFileURL(path).href}?immutable=1`, READONLY_URI_FLAGS)
      )
      : translated(() =>
        new module.Database(path, readonly ? { readonly: true } : { create: true, strict: true })
      );
    return new BunSqliteDriver(db);
  };
}
