/**
 * The runtime's own SQLite module with no adapter at all (`node:sqlite` on
 * Deno and Node, `bun:sqlite` on Bun), so the benchmark can show what
 * `lib/driver` costs. Only the benchmark uses this file.
 *
 * Beware: on Deno 2.9, `node:sqlite` cuts returned text at U+0000, so
 * multimodal content reads back truncated here; timings stay meaningful.
 *
 * @module
 */
import type { SqlRow, SqlValue } from "../lib/sqlite/driver/types.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";

/** The statement subset the raw floor calls. */
export interface RawStatement {
  run(...params: SqlValue[]): unknown;
  get(...params: SqlValue[]): SqlRow | undefined | null;
  all(...params: SqlValue[]): SqlRow[];
  iterate(...params: SqlValue[]): IterableIterator<SqlRow>;
}

/** The connection subset the raw floor calls; `SqliteConnection` satisfies it too. */
export interface RawConnection {
  exec(sql: string): void;
  prepare(sql: string): RawStatement;
  close(): void;
}

type NativeOpen = (path: string, readonly: boolean) => RawConnection;

let opener: NativeOpen | undefined;

/**
 * Loads the runtime's SQLite module.
 *
 * @returns A function opening unwrapped connections.
 */
export async function loadNative(): Promise<NativeOpen> {
  if (opener !== undefined) return opener;
  if (runtimeName() === "bun") {
    const specifier = "bun:" + "sqlite";
    const { Database } = await import(specifier) as {
      Database: new (path: string, options: object) => RawConnection;
    };
    opener = (path, readonly) =>
      new Database(path, readonly ? { readonly: true } : { create: true, strict: true });
  } else {
    const { DatabaseSync } = await import("node:sqlite");
    opener = (path, readonly) =>
      new DatabaseSync(path, { readOnly: readonly }) as unknown as RawConnection;
  }
  return opener;
}
