/**
 * What a file is, by its first bytes: an SQLite database (so that `export`
 * never writes over one), or a JSON Lines file (an export given as `--db`,
 * which the open refused as not a database).
 *
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";

/** The first 16 bytes of every SQLite 3 database file. */
const MAGIC = "SQLite format 3\u0000";

/** How much of a file {@linkcode looksLikeJsonLines} reads. */
const JSON_START = 64;

/** The first `length` bytes of `path` (fewer when it is shorter); `undefined` when unreadable. */
function fileStart(path: string, length: number): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const head = new Uint8Array(length);
    return head.subarray(0, readSync(fd, head, 0, length, 0));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

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
  const head = fileStart(path, MAGIC.length);
  return head?.length === MAGIC.length && new TextDecoder().decode(head) === MAGIC;
}

/**
 * True when `path` starts as a JSON Lines export does: a `{` after optional
 * white space (a byte-order mark too). Call only on a file SQLite refused to
 * open as a database: no connection of this process holds it, so closing
 * the descriptor drops no lock.
 *
 * @param path An existing or missing path.
 * @returns Whether it looks like JSON Lines (false when missing or unreadable).
 *
 * @example
 * ```ts
 * import { looksLikeJsonLines } from "./sqlite_header.ts";
 * console.assert(looksLikeJsonLines("/nonexistent.jsonl") === false);
 * ```
 */
export function looksLikeJsonLines(path: string): boolean {
  const head = fileStart(path, JSON_START);
  if (head === undefined) return false;
  return /^\uFEFF?\s*\{/.test(new TextDecoder().decode(head));
}
