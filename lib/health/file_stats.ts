/**
 * The database file and its `-wal` and `-shm` companions, measured with
 * `stat(2)` only: opening a descriptor on them would drop this process's
 * locks when closed.
 *
 * @module
 */
import { statSync } from "node:fs";
import { sqliteFilePath } from "../files/real_path.ts";

/** One of the three files. */
export interface FileStat {
  /** Its path. */
  readonly path: string;
  /** Bytes. */
  readonly size: number;
  /** Permission bits (`0o600`). */
  readonly mode: number;
  /** Owner's user id. */
  readonly uid: number;
  /** Owner's group id. */
  readonly gid: number;
}

/**
 * Stats `path`, `path-wal` and `path-shm`.
 *
 * @param path The database file.
 * @returns Those that exist, the database first.
 */
export function databaseFiles(path: string): FileStat[] {
  const found: FileStat[] = [];
  // Beside the file a link leads to: SQLite keeps the sidecars there.
  const real = sqliteFilePath(path);
  for (const file of [path, `${real}-wal`, `${real}-shm`]) {
    try {
      const stat = statSync(file);
      found.push({
        path: file,
        size: stat.size,
        mode: stat.mode & 0o777,
        uid: stat.uid,
        gid: stat.gid,
      });
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
    }
  }
  return found;
}
