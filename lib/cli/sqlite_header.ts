/**
 * Whether a file is an SQLite database, by its 16-byte header, so that
 * `export` never writes over one.
 *
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";

/** The first 16 bytes of every SQLite 3 database file. */
const MAGIC = "SQLite format 3\u0000";

/**
 * True when `path` is a file that starts with the SQLite header. Call only
 * after {@linkcode isDatabaseFile} ruled out the database this process has
 * open: closing a descriptor drops the process's locks on that file.
 *
 * @param path An existing or missing path.
 * @returns Whether it is an SQLite database (false when missing or unreadable).
 *
 * @example
 * ```ts
 * import { isSqliteFile } from "./sqlite_header.ts";
 * console.assert(isSqliteFile("/nonexistent.db") === false);
 * ```
 */
export function isSqliteFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    const head = new Uint8Array(MAGIC.length);
    const read = readSync(fd, head, 0, head.length, 0);
    return read === MAGIC.length && new TextDecoder().decode(head) === MAGIC;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
