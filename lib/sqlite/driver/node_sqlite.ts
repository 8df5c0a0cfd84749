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
import { iterateRows } from "./_iterate.ts";
import { NUL_MASK, nulSafeQuery, nulSafeRow, plainRow } from "./_nul_safe.ts";

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

/**
 * True when this runtime's statement iterator ends quietly on an error met
 * mid-way (Deno 2.9) instead of throwing it: an export would then stop
 * early and look complete.
 */
function iteratorHidesErrors(db: DatabaseSync): boolean {
  const failing = db.prepare(
    "SELECT CASE WHEN value = 2 THEN abs(-9223372036854775807 - 1) ELSE value END AS v " +
      "FROM (SELECT 1 AS value UNION ALL SELECT 2)",
  );
  try {
    for (const _row of failing.iterate()) { /* read until the error */ }
    return true;
  } catch {
    return false;
  }
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

/** What a statement needs to know of its runtime. */
interface RuntimeTraits {
  /** The runtime's iterator ends quietly on an error: read the rows whole instead. */
  readonly iteratorHidesErrors: boolean;
}

class NodeSqliteStatement implements SqliteStatement {
  readonly #stmt: NodeStatement;
  readonly #toRow: ToRow;
  readonly #traits: RuntimeTraits;

  constructor(stmt: NodeStatement, toRow: ToRow, traits: RuntimeTraits) {
    this.#stmt = stmt;
    this.#toRow = toRow;
    this.#traits = traits;
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

  iterate(...params: readonly SqlValue[]): IterableIterator<SqlRow> {
    if (this.#traits.iteratorHidesErrors) return this.#rowsRead(params);
    return this.#iterateOrRead(params);
  }

  /** The rows read whole, then given one by one (an error is thrown, not hidden). */
  *#rowsRead(params: readonly SqlValue[]): IterableIterator<SqlRow> {
    yield* this.all(...params);
  }

  /**
   * The runtime's iterator; when it meets an integer beyond 2^53, the rows
   * not yet given are read again whole (the statement from the start, the
   * rows already given skipped).
   */
  *#iterateOrRead(params: readonly SqlValue[]): IterableIterator<SqlRow> {
    let given = 0;
    try {
      for (
        const row of iterateRows(
          () => this.#stmt.iterate(...(params as SqlValue[])) as Iterator<unknown>,
          this.#toRow,
        )
      ) {
        given++;
        yield row;
      }
    } catch (error) {
      if (!isIntegerTooLarge(error)) throw error;
      yield* this.all(...params).slice(given);
    }
  }
}

class NodeSqliteDriver implements SqliteConnection {
  readonly kind = "node:sqlite" as const;
  readonly #db: DatabaseSync;
  /** Probed on the first `prepare`: probing reads the file, so it must come after the busy timeout. */
  #nulUnsafe: boolean | undefined;
  /** Probed with the first statement, as `#nulUnsafe`. */
  #iteratorHidesErrors: boolean | undefined;
  #open = true;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  exec(sql: string): void {
    translated(() => this.#db.exec(sql));
  }

  #traits(): RuntimeTraits {
    this.#iteratorHidesErrors ??= translated(() => iteratorHidesErrors(this.#db));
    return { iteratorHidesErrors: this.#iteratorHidesErrors };
  }

  prepare(sql: string): SqliteStatement {
    const stmt = translated(() => this.#db.prepare(sql));
    const columns = (stmt.columns() as NodeColumn[]).map((c) => c.name);
    if (columns.length === 0) return new NodeSqliteStatement(stmt, spreadRow, this.#traits());
    this.#nulUnsafe ??= translated(() => cutsTextAtNul(this.#db));
    if (this.#nulUnsafe) return this.#nulSafe(sql, stmt, columns);
    if (new Set(columns).size === columns.length && returnArrays(stmt)) {
      return new NodeSqliteStatement(
        stmt,
        (values) => plainRow(values as SqlValue[], columns),
        this.#traits(),
      );
    }
    return new NodeSqliteStatement(stmt, spreadRow, this.#traits());
  }

  /** The statement wrapped so that text holding U+0000 reads back whole. */
  #nulSafe(sql: string, stmt: NodeStatement, columns: readonly string[]): SqliteStatement {
    const safeSql = nulSafeQuery(sql, columns);
    if (safeSql === undefined) return new NodeSqliteStatement(stmt, spreadRow, this.#traits());
    let safe: NodeStatement;
    try {
      safe = this.#db.prepare(safeSql);
    } catch {
      // Not a plain query (a PRAGMA, say): it cannot return stored text.
      return new NodeSqliteStatement(stmt, spreadRow, this.#traits());
    }
    const toValues = returnArrays(safe)
      ? (row: unknown) => row as SqlValue[]
      : (row: unknown) => [...columns, NUL_MASK].map((name) => (row as SqlRow)[name]);
    return new NodeSqliteStatement(
      safe,
      (row) => nulSafeRow(toValues(row), columns),
      this.#traits(),
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
