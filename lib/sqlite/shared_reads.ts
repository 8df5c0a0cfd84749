/**
 * The files this thread reads through a `"shared"` connection (see
 * `read_access.ts`), counted by device and inode. The first such read of a
 * WAL file makes its `-wal` and `-shm`; a second read opened while it is
 * still open finds them there. Were it SQLite's read-only mode, and closed
 * last, nothing could remove them (a read-only connection never deletes a
 * `-wal`), and a command that only read would leave two files behind. So a
 * second read of a file counted here goes `"shared"` too, and whichever
 * closes last removes what the first made, as a single one does.
 *
 * The count is per thread: a worker thread keeps its own, and reads a file
 * its parent made a `-wal` of in SQLite's read-only mode, so it must close
 * before its parent does (the search pool of `serve` does).
 *
 * @module
 */
import { statSync } from "node:fs";

/** Open `"shared"` connections, by the `dev:ino` of their file. */
const openShared = new Map<string, number>();

/** The file's `dev:ino` (a link is followed), or `undefined` when it is not there. */
function fileKey(path: string): string | undefined {
  if (path === ":memory:" || path === "") return undefined;
  try {
    const { dev, ino } = statSync(path, { bigint: true });
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}

/**
 * Counts a `"shared"` connection just opened on `path` until the function
 * returned is called (a second call does nothing).
 *
 * @param path The database file the connection opened, or a link to it.
 * @returns Call it when the connection closes.
 */
export function holdSharedRead(path: string): () => void {
  const key = fileKey(path);
  if (key === undefined) return () => {};
  openShared.set(key, (openShared.get(key) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (openShared.get(key) ?? 1) - 1;
    if (left > 0) openShared.set(key, left);
    else openShared.delete(key);
  };
}

/**
 * Whether this thread has a `"shared"` connection open on the file at
 * `path` (the same file: one put in its place since is another).
 *
 * @param path The database file, or a link to it.
 * @returns True while one is open.
 */
export function readsShared(path: string): boolean {
  const key = fileKey(path);
  return key !== undefined && openShared.has(key);
}
