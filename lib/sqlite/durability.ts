/**
 * Settings and checks of the linked SQLite that keep commits durable and
 * the WAL bounded: the SQLite version (a WAL-reset bug before 3.51.3
 * corrupts databases under concurrent use), `fullfsync` on macOS (where
 * `synchronous=FULL` is not a full fsync, so Python Hermes sets it too),
 * and `journal_size_limit` (the WAL shrinks back when it is reset).
 *
 * @module
 */
import { statSync } from "node:fs";
import process from "node:process";
import type { SqliteDriver } from "./driver/types.ts";
import { loadDriver } from "./driver/load.ts";
import { sqliteFilePath } from "../files/real_path.ts";

/** The first SQLite without the WAL-reset corruption bug. */
export const SAFE_SQLITE_VERSION = "3.51.3";

/** Bytes the WAL is truncated to when SQLite resets it after a checkpoint (64 MiB). */
export const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * Below this size a `-wal` is left for passive checkpoints to reuse (about
 * SQLite's own auto-checkpoint size, 1,000 pages of 4 KiB): emptying it
 * costs a sync, which a short command should not pay for a small WAL.
 */
export const WAL_TRUNCATE_BYTES = 4 * 1024 * 1024;

/**
 * The size of the `-wal` beside `path`, by `stat` (never a descriptor on a
 * live database's files); 0 when there is none.
 *
 * @param path The database file.
 * @returns Bytes.
 */
export function walBytes(path: string): number {
  if (path === ":memory:") return 0;
  try {
    return statSync(`${sqliteFilePath(path)}-wal`).size;
  } catch {
    return 0;
  }
}

function parts(version: string): number[] {
  return version.split(".").map((part) => Number.parseInt(part, 10) || 0);
}

/**
 * True when `version` is older than `than`, comparing dotted numbers.
 *
 * @param version A version such as `3.45.1`.
 * @param than The version to compare with.
 * @returns Whether `version` is older.
 */
export function olderThan(version: string, than: string): boolean {
  const a = parts(version);
  const b = parts(than);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * The warning for a linked SQLite older than {@linkcode SAFE_SQLITE_VERSION},
 * or `null` when it is recent enough.
 *
 * @param version What `sqlite_version()` answers.
 * @returns The warning text.
 *
 * @example
 * ```ts
 * import { sqliteVersionWarning } from "./durability.ts";
 * console.assert(sqliteVersionWarning("3.54.1") === null);
 * console.assert(sqliteVersionWarning("3.45.1")?.startsWith("SQLite 3.45.1 is older than 3.51.3"));
 * ```
 */
export function sqliteVersionWarning(version: string): string | null {
  if (!olderThan(version, SAFE_SQLITE_VERSION)) return null;
  return `SQLite ${version} is older than ${SAFE_SQLITE_VERSION}, whose WAL-reset bug can ` +
    "corrupt a database written by several processes at once; use a runtime that links a " +
    "newer SQLite (as Deno 2.9, Bun 1.4 and Node 24.22 do)";
}

/**
 * The pragmas run on every writable open, after `journal_mode=WAL`.
 *
 * @param platform The operating system (`process.platform`).
 * @returns The statements, in order.
 */
export function durabilityPragmas(platform: string = process.platform): string[] {
  const pragmas = [`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`];
  if (platform === "darwin") {
    // macOS fsync() does not reach the platter; F_FULLFSYNC does.
    pragmas.push("PRAGMA fullfsync = ON", "PRAGMA checkpoint_fullfsync = ON");
  }
  return pragmas;
}

/**
 * The version of the SQLite the runtime links, asked of an in-memory
 * database (no file is opened).
 *
 * @param openDriver The driver opener; the running runtime's by default.
 * @returns What `sqlite_version()` answers.
 */
export async function linkedSqliteVersion(openDriver?: SqliteDriver): Promise<string> {
  const connect = openDriver ?? await loadDriver();
  const db = connect(":memory:"); // no file: no descriptor on a database
  try {
    return String(db.prepare("SELECT sqlite_version() AS v").get()?.v ?? "");
  } finally {
    db.close();
  }
}
