/**
 * Adapter over `node:sqlite` (`DatabaseSync`), used on Deno and Node.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
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
import { maskColumns, nulSafeQuery, nulSafeRow, plainRow } from "./_nul_safe.ts";

type NodeStatement = ReturnType<DatabaseSync["prepare"]>;
type NodeColumn = { name: string };

/** True when this runtime's `node:sqlite` cuts returned text at U+0000 (Deno 2.9). */
function cutsTextAtNul(db: DatabaseSync): boolean {
  const row = db.prepare("SELECT 'a' || char(0) || 'b' AS probe").get() as
    | { probe: string }
    | undefined;
  return row?.probe !== "a\u0000b";
}

/** Turns one row, as the runtime returns it, into a plain object. */
type ToRow = (row: unknown) => SqlRow;

/** node:sqlite rows have a null prototype; give callers ordinary objects. */
function spreadRow(row: unknown): SqlRow {
  return { ...(row as SqlRow) };
}

/**
 * Asks for rows as arrays (cheaper than the runtime's row objects); false
 * on a runtime without `setReturnArrays` (Node before 22.16).
 */
function returnArrays(stmt: NodeStatement): boolean {
  const s = stmt as unknown as { setReturnArrays?: (on: boolean) => void };
  if (typeof s.setReturnArrays !== "function") return false;
  s.setReturnArrays(true);
  return true;
}

/** node:sqlite's refusal of an integer beyond 2^53 read as a number. */
function isIntegerTooLarge(error: unknown): boolean {
  return error instanceof RangeError && /too large/i.test(error.message);
}

/** A row read with big integers, each value a number again (beyond 2^53: the nearest). */
function withNumbers(row: unknown): unknown {
  const number = (value: unknown) => typeof value === "bigint" ? Number(value) : value;
  if (Array.isArray(row)) return row.map(number);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row as Record<string, unknown>)) {
    out[key] = number(value);
  }
  return out;
}

class NodeSqliteStatement implements SqliteStatement {
  readonly #stmt: NodeStatement;
  readonly #toRow: ToRow;

  constructor(stmt: NodeStatement, toRow: ToRow) {
    this.#stmt = stmt;
    this.#toRow = toRow;
  }

  /**
   * Runs a read; an integer beyond 2^53 (which node:sqlite refuses to read
   * as a number, failing the whole read) is read again as a big integer and
   * given as the nearest number, as Bun and JSON do.
   */
  #read<T>(read: () => T, convert: (result: T) => T): T {
    try {
      return translated(read);
    } catch (error) {
      if (!isIntegerTooLarge(error)) throw error;
    }
    const stmt = this.#stmt as unknown as { setReadBigInts(on: boolean): void };
    stmt.setReadBigInts(true);
    try {
      return convert(translated(read));
    } finally {
      stmt.setReadBigInts(false);
    }
  }

  run(...params: readonly SqlValue[]): RunResult {
    return translated(() => {
      const result = this.#stmt.run(...(params as SqlValue[]));
      return {
        changes: Number(result.changes),
        lastInsertRowid: result.lastInsertRowid,
      };
    });
  }

  get(...params: readonly SqlValue[]): SqlRow | undefined {
    const row = this.#read(
      () => this.#stmt.get(...(params as SqlValue[])) as unknown,
      (row) => row === undefined ? row : withNumbers(row),
    );
    return row === undefined ? undefined : this.#toRow(row);
  }

  all(...params: readonly SqlValue[]): SqlRow[] {
    const rows = this.#read(
      () => this.#stmt.all(...(params as SqlValue[])) as unknown[],
      (rows) => rows.map(withNumbers),
    );
    const out = new Array<SqlRow>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = this.#toRow(rows[i]);
    return out;
  }

  /**
   * The rows read whole, then given one by one. node:sqlite's own iterator
   * cannot serve: on Deno it ends quietly at an error (a failed export looked
   * complete), and an integer beyond 2^53 fails it half-way on Node, where
   * reading the rest again would be another snapshot (rows doubled or
   * missed when a write came between).
   */
  *iterate(...params: readonly SqlValue[]): IterableIterator<SqlRow> {
    yield* this.all(...params);
  }
}

class NodeSqliteDriver implements SqliteConnection {
  readonly kind = "node:sqlite" as const;
  readonly #db: DatabaseSync;
  /** Probed on the first `prepare`: probing reads the file, so it must come after the busy timeout. */
  #nulUnsafe: boolean | undefined;
  #open = true;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  exec(sql: string): void {
    translated(() => this.#db.exec(sql));
  }

  prepare(sql: string): SqliteStatement {
    const stmt = translated(() => this.#db.prepare(sql));
    const columns = (stmt.columns() as NodeColumn[]).map((c) => c.name);
    if (columns.length === 0) return new NodeSqliteStatement(stmt, spreadRow);
    this.#nulUnsafe ??= translated(() => cutsTextAtNul(this.#db));
    if (this.#nulUnsafe) return this.#nulSafe(sql, stmt, columns);
    if (new Set(columns).size === columns.length && returnArrays(stmt)) {
      return new NodeSqliteStatement(
        stmt,
        (values) => plainRow(values as SqlValue[], columns),
      );
    }
    return new NodeSqliteStatement(stmt, spreadRow);
  }

  /** The statement wrapped so that text holding U+0000 reads back whole. */
  #nulSafe(sql: string, stmt: NodeStatement, columns: readonly string[]): SqliteStatement {
    const safeSql = nulSafeQuery(sql, columns);
    if (safeSql === undefined) return new NodeSqliteStatement(stmt, spreadRow);
    let safe: NodeStatement;
    try {
      safe = this.#db.prepare(safeSql);
    } catch {
      // Not a plain query (a PRAGMA, say): it cannot return stored text.
      return new NodeSqliteStatement(stmt, spreadRow);
    }
    const toValues = returnArrays(safe)
      ? (row: unknown) => row as SqlValue[]
      : (row: unknown) =>
        [...columns, ...maskColumns(columns.length)].map((name) => (row as SqlRow)[name]);
    return new NodeSqliteStatement(
      safe,
      (row) => nulSafeRow(toValues(row), columns),
    );
  }

  [Symbol.dispose](): void {
    this.close();
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    translated(() => this.#db.close());
  }
}

/**
 * Opens `path` with `node:sqlite`.
 *
 * @param path The database file.
 * @param options `readonly` opens without write access; `immutable` also without locks.
 * @returns The connection.
 * @throws {SqliteError} When SQLite cannot open the file.
 */
export function openNodeSqlite(
  path: string,
  options: SqliteDriverOptions = {},
): SqliteConnection {
  const db = options.immutable
    ? translated(() => new DatabaseSync(immutableUri(path), { readOnly: true }))
    : translated(() => new DatabaseSync(path, { readOnly: options.readonly ?? false }));
  return new NodeSqliteDriver(db);
}

/** The `file:` URI SQLite reads as "this file never changes": no locks, no -wal, no -shm. */
function immutableUri(path: string): string {
  return `${pathToFileURL(path).href}?immutable=1`;
}
