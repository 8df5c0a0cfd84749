/**
 * Whether a path the user gave is the database itself or one of its
 * sidecars, found with `stat` only: opening a descriptor on a database this
 * process has open would drop its locks when closed.
 *
 * @module
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { sqliteFilePath } from "./real_path.ts";

/**
 * The files SQLite keeps for a database: the file, its WAL, its shared
 * memory, its journal; beside the file a link leads to (where SQLite keeps
 * them) as well as beside the link.
 */
export function databaseFiles(dbPath: string): string[] {
  const real = sqliteFilePath(dbPath);
  const sidecars = (path: string) => [`${path}-wal`, `${path}-shm`, `${path}-journal`];
  return [
    dbPath,
    ...sidecars(dbPath),
    ...(real === dbPath ? [] : [real, ...sidecars(real)]),
  ];
}

/**
 * The identity of a file (device and inode), or `undefined` when there is
 * no such file: two paths name the same file when their identities match.
 *
 * @param path A path.
 * @returns `dev:ino`, or `undefined`.
 */
export function fileIdentity(path: string): string | undefined {
  try {
    const stat = statSync(path);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * True when `candidate` names the database at `dbPath` or one of its
 * sidecars: the same path, or the same file through another name (a link,
 * `..`, a symlink).
 *
 * @param candidate The path the user gave.
 * @param dbPath The database path.
 * @returns Whether writing or reading `candidate` would touch the database.
 */
export function isDatabaseFile(candidate: string, dbPath: string): boolean {
  const wanted = resolve(candidate);
  const id = fileIdentity(candidate);
  return databaseFiles(dbPath).some((file) =>
    resolve(file) === wanted || (id !== undefined && fileIdentity(file) === id)
  );
}
