/**
 * What a connection opened `"immutable"` cannot see for itself: whether the
 * file changed since. SQLite trusts such a connection's cached pages and
 * takes no lock, so once another process writes (a Hermes of the file's
 * owner) it answers from stale pages, or from a mix of old and new ones
 * that it reports as a malformed file. A read-only store opened that way
 * compares this state before each call and opens the file again when it
 * moved (`store_slot.ts`); `backup`, `doctor`, `info`'s check and `sync`'s
 * snapshot compare it after their work too, and start again. Any other
 * read-only store is watched by the file's identity and the times of its
 * own pages only (`fileWritten`).
 *
 * @module
 */
import { lstatSync, statSync } from "node:fs";
import { sqliteFilePath } from "../files/real_path.ts";
import { delay } from "../core/delay.ts";

/** Whether something is at `path` (a link counts, as SQLite would open it), asking `lstat` only. */
export function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A `-wal`'s inode, size and modification time (it grows, or starts over, with each commit). */
function sidecarState(path: string): string {
  try {
    const stat = lstatSync(path);
    return `${stat.ino}/${stat.size}/${stat.mtimeMs}`;
  } catch {
    return "none";
  }
}

/**
 * The state of a database file as `stat` sees it: which file it is (device
 * and inode, so a file replaced by a rename differs), its size, its
 * modification and change times, the same of its `-wal`, and whether a
 * `-journal` is beside it (a writer needs one of them). Equal states mean
 * no writer touched the file in between. Asks only `stat`, never a descriptor (closing
 * one would drop this process's locks on the file).
 *
 * @param given The database path, or a link to it (the sidecars are looked
 *   for beside the file it leads to, as SQLite keeps them).
 * @returns An opaque text to compare; `"missing"` when the file cannot be
 *   found.
 */
export function fileState(given: string): string {
  const path = sqliteFilePath(given);
  let file: string;
  try {
    const stat = statSync(path);
    file = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return "missing";
  }
  return `${file}:${sidecarState(`${path}-wal`)}:${present(`${path}-journal`)}`;
}

/**
 * Which file a database path leads to now, and when its own pages were last
 * written: the device, inode, size, modification and change times of the
 * file it names or links to (not of its `-wal`). A file put in its place (a
 * restore by `mv`, a rotation), a link pointed elsewhere, a file copied over
 * it (`cp`, `cp -p` too) and a checkpoint change it; a commit to the `-wal`
 * does not. One `stat`: cheap enough to ask often.
 *
 * @param given The database path, or a link to it.
 * @returns An opaque text to compare; `"missing"` when the file cannot be
 *   found.
 */
export function fileWritten(given: string): string {
  try {
    const { dev, ino, size, mtimeMs, ctimeMs } = statSync(given);
    return `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`;
  } catch {
    return "missing";
  }
}

/**
 * The pauses between the tries of a read that a file read without locks
 * must make whole while its owner's Hermes does not write (`backup`,
 * `doctor`, `info`): one try, then one more after each pause (a burst of
 * writes is waited out, a steady stream is given up on).
 */
export const UNLOCKED_RETRY_PAUSES_MS: readonly number[] = [250, 500, 1000, 2000];

/**
 * Runs `attempt`, a read that gives `undefined` when the file moved while it
 * ran, until it answers: once, then once more after each pause of
 * {@linkcode UNLOCKED_RETRY_PAUSES_MS} (for the asynchronous commands;
 * `StoreSlot.steady` is the synchronous twin).
 *
 * @param attempt One try.
 * @param pause Waits between two tries (a caller may also stop there, or make
 *   the next try ready); a plain wait by default.
 * @returns The first answer; `undefined` when the file moved during every try.
 */
export async function untilUnmoved<T>(
  attempt: () => T | undefined,
  pause: (ms: number) => Promise<void> = delay,
): Promise<T | undefined> {
  let answer = attempt();
  for (const ms of UNLOCKED_RETRY_PAUSES_MS) {
    if (answer !== undefined) break;
    await pause(ms);
    answer = attempt();
  }
  return answer;
}

/**
 * Why a read without locks was given up on, after every try.
 *
 * @param what What ran, plural (`"copies"`, `"checks"`, `"reads"`).
 * @returns The reason, lower case.
 */
export function changedEachTimeReason(what: string): string {
  const tries = UNLOCKED_RETRY_PAUSES_MS.length + 1;
  return `it changed during each of ${tries} ${what} (it is read without the locks that hold it still, as this user may not write it or its -shm); try again when its Hermes is idle`;
}
