/**
 * Sizes of a database file and its `-wal` and `-shm` companions.
 *
 * @module
 */
import { statSync } from "node:fs";
import { CommandError } from "./usage_error.ts";

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
  const wal = sizeOf(`${path}-wal`);
  const shm = sizeOf(`${path}-shm`);
  return { db, wal, shm, total: db + wal + shm };
}
