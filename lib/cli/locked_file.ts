/**
 * What a command that writes many sessions (`import`, `copy`, `delete`,
 * `prune`) says when a file stays locked by another process past
 * `HERMES_STATE_LOCK_TIMEOUT`: the file named (not `--db`, which `copy` does
 * not use), and the run stopped there, since every later write would wait as
 * long and fail alike; each command adds what it had done by then.
 *
 * @module
 */
import { WriteBusyError } from "../sqlite/write_busy_error.ts";

/**
 * A wait for another process's lock given up on, as {@linkcode lockGivenUp}
 * tells it: the one name of it the commands use (they reach the SQLite
 * layer only through this file).
 */
export type LockGivenUp = WriteBusyError;

/**
 * Whether `error` is a wait for another process's lock given up on
 * (`HERMES_STATE_LOCK_TIMEOUT` spent).
 *
 * @param error Any error.
 * @returns True for such a wait.
 */
export function lockGivenUp(error: unknown): error is WriteBusyError {
  return error instanceof WriteBusyError;
}

/**
 * The words for a file another process kept locked, as every command says
 * them: `database is locked by another process (waited N s): PATH`.
 *
 * @param error The error of the write (or read) that gave up.
 * @param path The file it waited for.
 * @returns One clause for the user.
 *
 * @example
 * ```ts ignore
 * lockedReason(error, "/tmp/state.db"); // "database is locked by another process (waited 15 s): /tmp/state.db"
 * ```
 */
export function lockedReason(error: WriteBusyError, path: string): string {
  const waited = error.waitedMs === undefined
    ? ""
    : ` (waited ${Math.round(error.waitedMs / 1000)} s)`;
  return `database is locked by another process${waited}: ${path}`;
}
