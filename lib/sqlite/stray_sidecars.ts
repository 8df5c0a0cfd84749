/**
 * The race SQLite's read-only mode can lose beside another user's file. A
 * reader opens such a file read-only only while its owner's `-wal` is there
 * (`read_access.ts`); when the owner's last connection closes between that
 * look and the reader's first read, it deletes its `-wal` and `-shm`, and
 * the reader's SQLite makes new ones, of the reader's user. The owner's
 * Hermes can then not write them ("attempt to write a readonly database"),
 * nor, in a sticky folder such as `/tmp`, delete them. So after each such
 * open the reader looks, and takes back what it made.
 *
 * Only files that nothing but this reader could have made are taken back:
 * both belong to this process's user while the database does not (a
 * root-run SQLite gives them to the database's owner), and the `-wal` is
 * empty (a read-only connection writes nothing; no other user can write
 * into a file of this user's 0644 `-wal`).
 *
 * @module
 */
import { lstatSync, rmSync, statSync } from "node:fs";
import process from "node:process";
import { sqliteFilePath } from "../files/real_path.ts";

function ownerOf(path: string): number | undefined {
  try {
    return lstatSync(path).uid;
  } catch {
    return undefined;
  }
}

/**
 * The `-wal` and `-shm` that a read-only connection of this process's made
 * beside another user's file (see the module's description): remove them
 * once that connection is closed.
 *
 * @param given The database path, or a link to it.
 * @returns Their paths; empty when there are none.
 */
export function straySidecars(given: string): string[] {
  const me = process.getuid?.();
  if (me === undefined || given === ":memory:") return [];
  const path = sqliteFilePath(given);
  const owner = ownerOf(path);
  if (owner === undefined || owner === me) return [];
  const wal = `${path}-wal`;
  const mine = [wal, `${path}-shm`].filter((file) => ownerOf(file) === me);
  if (mine.includes(wal) && statSync(wal).size !== 0) return [];
  return mine;
}

/**
 * Removes what {@linkcode straySidecars} found.
 *
 * @param files Their paths.
 */
export function removeStraySidecars(files: readonly string[]): void {
  for (const file of files) rmSync(file, { force: true });
}
