/**
 * Sizes of a database file and its `-wal` and `-shm` companions, or of a
 * PostgreSQL store's tables.
 *
 * @module
 */
import { statSync } from "node:fs";
import type { SessionStore } from "../core/session_store.ts";
import { isPostgresTarget } from "../open_store.ts";
import { formatBytes } from "../render/format.ts";
import { CommandError } from "./usage_error.ts";
import { sqliteFilePath } from "../files/real_path.ts";

/** Byte sizes; a missing companion counts 0. */
export interface FileSizes {
  /** The main file. */
  db: number;
  /** The write-ahead log. */
  wal: number;
  /** The shared-memory index. */
  shm: number;
  /** All three. */
  total: number;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return 0;
    const reason = (error as Error).message;
    throw new CommandError(`Cannot measure ${path}: ${reason}`, { cause: error });
  }
}

/**
 * Measures the database file and its companions.
 *
 * @param path The database path.
 * @returns The sizes in bytes.
 * @throws {CommandError} When a file exists but cannot be measured.
 *
 * @example
 * ```ts
 * import { fileSizes } from "./files.ts";
 * console.assert(fileSizes("/nonexistent.db").total === 0);
 * ```
 */
export function fileSizes(path: string): FileSizes {
  const db = sizeOf(path);
  const real = sqliteFilePath(path);
  const wal = sizeOf(`${real}-wal`);
  const shm = sizeOf(`${real}-shm`);
  return { db, wal, shm, total: db + wal + shm };
}

/**
 * The size of the file at `path` as a status line shows it (`3.0 GiB`), or
 * `undefined` when it cannot be measured (a status line then goes without).
 *
 * @param path A file.
 * @returns The size, formatted.
 *
 * @example
 * ```ts
 * import { shownFileSize } from "./files.ts";
 * console.assert(shownFileSize("/nonexistent.db") === undefined);
 * ```
 */
export function shownFileSize(path: string): string | undefined {
  try {
    return formatBytes(statSync(path).size);
  } catch {
    return undefined;
  }
}

/**
 * What a PostgreSQL store takes on the server: its schema's tables with
 * their indexes and TOAST (`pg_total_relation_size`), from `inspect`.
 *
 * @param store An open store.
 * @returns The bytes, or `null` when the store is a file (measure it with {@linkcode fileSizes}).
 */
export async function serverBytes(store: SessionStore): Promise<number | null> {
  if (!isPostgresTarget(store.target)) return null;
  const info = await store.inspect({ integrity: false });
  return info.pageCount * info.pageSize;
}

/**
 * How a store's size reads: the file and its companions, or, without
 * `files` (a PostgreSQL store), the server's `bytes`.
 *
 * @param files The file's sizes, or `null`.
 * @param bytes The server's bytes (read when `files` is `null`).
 * @returns E.g. `1.2 MiB (1.1 MiB file, 96 KiB WAL, 32 KiB SHM)`.
 */
export function sizeText(files: FileSizes | null, bytes: number): string {
  if (files === null) return `${formatBytes(bytes)} (tables and indexes on the server)`;
  return `${formatBytes(files.total)} (${formatBytes(files.db)} file, ${
    formatBytes(files.wal)
  } WAL, ${formatBytes(files.shm)} SHM)`;
}
