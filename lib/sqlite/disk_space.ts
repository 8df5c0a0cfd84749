/**
 * Telling a full disk from other I/O errors. SQLite reports a write on a
 * full disk as `SQLITE_FULL`, but an open that cannot grow the `-wal` or
 * `-shm` as a plain "disk I/O error"; the free space of the device says
 * which it was.
 *
 * @module
 */
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { SqliteError } from "./driver/sqlite_error.ts";
import { StorageError } from "../core/storage_error.ts";

/** SQLITE_IOERR and SQLITE_FULL. */
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;

/** Below this many free bytes, SQLite cannot add a page to the WAL (or write a -shm). */
const NEARLY_FULL_BYTES = 64 * 1024;

/**
 * True when the device holding `path` has (nearly) no space left for an
 * unprivileged writer. Never throws: an unknown answer is `false`.
 *
 * @param path A file or folder on the device.
 * @returns Whether the device is full.
 */
export function deviceFull(path: string): boolean {
  try {
    const stats = statfsSync(dirname(path));
    return Number(stats.bavail) * Number(stats.bsize) < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/**
 * True when `error` failed a write because the disk holding `path` is full:
 * a storage error of kind `full` (`SQLITE_FULL`, or PostgreSQL's disk-full
 * class), or an I/O error while the device has no space left.
 *
 * @param error Anything thrown.
 * @param path The database file.
 * @returns Whether the disk is full.
 */
export function isDiskFull(error: unknown, path: string): boolean {
  if (error instanceof StorageError && error.kind === "full") return true;
  if (!(error instanceof SqliteError)) {
    return (error as { code?: unknown })?.code === "ENOSPC";
  }
  if (error.code === SQLITE_FULL) return true;
  return error.code === SQLITE_IOERR && path !== ":memory:" && deviceFull(path);
}

/**
 * The words for a full disk.
 *
 * @param path The database file.
 * @returns `no space left on the device holding PATH`.
 */
export function diskFullReason(path: string): string {
  return `no space left on the device holding ${path}`;
}
