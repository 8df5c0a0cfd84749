/**
 * Where SQLite keeps a database's files. SQLite follows symbolic links
 * (of the file and of its folders) and keeps the `-wal`, `-shm` and
 * `-journal` beside the file they lead to, not beside the link; every check
 * on those sidecars must look there, or a link to a file with a live `-wal`
 * looks like a quiet file.
 *
 * @module
 */
import { realpathSync } from "node:fs";

/**
 * The real path of a database path, links resolved; the path itself when it
 * does not exist (yet) or cannot be resolved, or is `":memory:"`.
 *
 * @param path A database path as the user gave it.
 * @returns The path whose sidecars SQLite uses.
 */
export function sqliteFilePath(path: string): string {
  if (path === ":memory:" || path === "") return path;
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
