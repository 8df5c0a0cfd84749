/**
 * The temporary files `backup` and `recover` write beside their
 * destination (`.NAME.PID.copy`, `.NAME.PID.gz`, `.NAME.PID.recover`, with
 * SQLite's `-journal`, `-wal` and `-shm`): a run that was killed leaves
 * them behind, and the next run removes those whose process has ended.
 *
 * @module
 */
import { linkSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { setImmediate } from "node:timers";

/** Whether process `pid` still runs (`kill(pid, 0)`: EPERM means it runs as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/** The files SQLite keeps beside a database: its WAL, shared memory and rollback journal. */
const SIDECARS = ["-wal", "-shm", "-journal"] as const;

/**
 * This process's temporary file of kind `suffix` beside `dest`
 * (`.NAME.PID.SUFFIX`, the name {@linkcode removeStaleTemps} looks for).
 *
 * @param dest The destination.
 * @param suffix The kind (`copy`, `gz`, `recover`).
 * @returns The path.
 */
export function tempName(dest: string, suffix: string): string {
  return join(dirname(dest), `.${basename(dest)}.${process.pid}.${suffix}`);
}

/**
 * Removes the `-wal`, `-shm` and `-journal` beside `path` (those of a file
 * being replaced, or of a temporary copy), whichever exist.
 *
 * @param path The database file.
 */
export function removeSidecars(path: string): void {
  for (const sidecar of SIDECARS) rmSync(`${path}${sidecar}`, { force: true });
}

/**
 * Gives the finished file `temp` the name `dest` unless a file took that
 * name since the run began (a hard link, which fails on a name taken, then
 * `temp`'s own name removed): a `dest` that appeared meanwhile is never
 * replaced.
 *
 * @param temp The finished temporary file.
 * @param dest Its name to be.
 * @returns False when `dest` exists (`temp` is left for its caller to remove).
 */
export function linkIntoPlace(temp: string, dest: string): boolean {
  try {
    linkSync(temp, dest);
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") return false;
    throw error;
  }
  rmSync(temp);
  return true;
}

/**
 * Removes `path` and its sidecars, whichever exist.
 *
 * @param path A temporary database file.
 */
export function removeWithSidecars(path: string): void {
  rmSync(path, { force: true });
  removeSidecars(path);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Removes the temporary files beside `dest` that a process no longer
 * running left behind (never this process's, never a running one's).
 *
 * @param dest The destination whose temporary files are looked for.
 * @param suffixes The kinds of temporary file (`copy`, `gz`, `recover`).
 * @returns The files removed.
 */
export function removeStaleTemps(dest: string, suffixes: readonly string[]): string[] {
  const folder = dirname(dest);
  const pattern = new RegExp(
    `^\\.${escape(basename(dest))}\\.(\\d+)\\.(?:${suffixes.map(escape).join("|")})` +
      `(?:${SIDECARS.join("|")})?$`,
  );
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return []; // a missing folder: the caller says so
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || alive(pid)) continue;
    rmSync(join(folder, name), { force: true });
    removed.push(join(folder, name));
  }
  return removed;
}

/**
 * Lets a signal that arrived during a synchronous stage reach its listener,
 * then stops if it asked to: a timer turn, then an immediate one (Node
 * delivers signals in the poll phase, between the two), so the stage that
 * follows never starts after a Ctrl-C.
 *
 * @param signal The stop signal of the run, if any.
 * @throws The signal's reason, when it was aborted.
 */
export async function stopIfAborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return;
  await new Promise((resolve) => setTimeout(resolve, 0));
  await new Promise((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}
