/**
 * Adapter over `node:sqlite` (`DatabaseSync`), used on Deno and Node.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type {
  OpenDriverOptions,
  RunResult,
  SqliteDriver,
  SqliteStatement,
  SqlRow,
  SqlValue,
} from "./types.ts";
import { translated } from "./_to_sqlite_error.ts";
import { nulSafeQuery, restoreNulText } from "./_nul_safe.ts";

type NodeStatement = ReturnType<DatabaseSync["prepare"]>;
type NodeColumn = { name: string };

/** True when this runtime's `node:sqlite` cuts returned text at U+0000 (Deno 2.9). */
function cutsTextAtNul(db: DatabaseSync): boolean {
  const row = db.prepare("SELECT 'a' || char(0) || 'b' AS probe").get() as
    | { probe: string }
    | undefined;
  return row?.probe !== "a\u0000b";
}

class NodeSqliteStatement implements SqliteStatement {
  readonly #stmt: NodeStatement;
  readonly #nulColumns: readonly string[] | undefined;

  constructor(stmt: NodeStatement, nulColumns: readonly string[] | undefined) {
    this.#stmt = stmt;
    this.#nulColumns = nulColumns;
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
    const row = translated(() => this.#stmt.get(...(params as SqlValue[])));
    return row === undefined ? undefined : this.#row(row as SqlRow);
  }

  all(...params: readonly SqlValue[]): SqlRow[] {
    const rows = translated(() => this.#stmt.all(...(params as SqlValue[])));
    return (rows as SqlRow[]).map((row) => this.#row(row));
  }

  *iterate(...params: readonly SqlValue[]): IterableIterator<SqlRow> {
    const iterator = translated(() => this.#stmt.iterate(...(params as SqlValue[]))) as Iterator<
      SqlRow
    >;
    let done = false;
    try {
      while (true) {
        const next = translated(() => iterator.next());
        if (next.done) {
          done = true;
          return;
        }
        yield this.#row(next.value);
      }
    } finally {
      // Stopped early: reset the native statement so it releases its read snapshot.
      if (!done) iterator.return?.();
    }
  }

  #row(row: SqlRow): SqlRow {
    // node:sqlite rows have a null prototype; give callers ordinary objects.
    const plain: SqlRow = { ...row };
    return this.#nulColumns ? restoreNulText(plain, this.#nulColumns) : plain;
  }
}

class NodeSqliteDriver implements SqliteDriver {
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
    this.#nulUnsafe ??= translated(() => cutsTextAtNul(this.#db));
    if (!this.#nulUnsafe) return new NodeSqliteStatement(stmt, undefined);
    const columns = (stmt.columns() as NodeColumn[]).map((c) => c.name);
    if (columns.length === 0) return new NodeSqliteStatement(stmt, undefined);
    const safeSql = nulSafeQuery(sql, columns);
    if (safeSql === undefined) return new NodeSqliteStatement(stmt, undefined);
    try {
      return new NodeSqliteStatement(this.#db.prepare(safeSql), columns);
    } catch {
      // Not a plain query (a PRAGMA, say): it cannot return stored text.
      return new NodeSqliteStatement(stmt, undefined);
    }
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
 * @param options `readonly` opens without write access.
 * @returns The connection.
 * @throws {SqliteError} When SQLite cannot open the file.
 */
export function openNodeSqlite(
  path: string,
  options: OpenDriverOptions = {},
): SqliteDriver {
  const db = translated(() => new DatabaseSync(path, { readOnly: options.readonly ?? false }));
  return new NodeSqliteDriver(db);
}
