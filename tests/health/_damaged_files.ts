/**
 * Damaged files shared by the tests of `doctor`, `backup` and `recover`:
 * files whose `-wal` holds the only copy of commits, built with real SQLite
 * (Python's `sqlite3`, a writer that dies without closing), and fixture
 * copies with bytes of a page overwritten (seeded, so every run and runtime
 * damages them alike).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture, runPython, tempDir } from "../_helpers.ts";
import { mulberry32 } from "../_random.ts";

/** Hashes of the file and its `-wal` (undefined when missing). */
export function fileAndWal(path: string): (string | undefined)[] {
  return [path, `${path}-wal`].map((file) =>
    existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : undefined
  );
}

/**
 * A Python writer runs `sql` on `path` in WAL mode and dies without
 * closing: the commit lives only in its `-wal`.
 *
 * @param path The database file.
 * @param sql One statement.
 */
export function liveWalOf(path: string, sql: string): void {
  runPython(
    [
      "import sqlite3, sys, os",
      "c = sqlite3.connect(sys.argv[1])",
      "c.execute('PRAGMA journal_mode=WAL')",
      "c.execute('PRAGMA wal_autocheckpoint=0')",
      "c.execute(sys.argv[2])",
      "c.commit()",
      "os._exit(0)",
    ],
    path,
    sql,
  );
  assert.ok(statSync(`${path}-wal`).size > 0, "the writer left no -wal");
}

/**
 * A copy of `hermes-v11.db` beside the live `-wal` of another, smaller
 * Hermes file (a restore that copied the wrong `-wal`): a checkpoint would
 * write the small file's pages over this one and cut it to their size.
 */
export async function fileWithForeignWal(): Promise<string> {
  const other = join(tempDir(), "other.db");
  (await SessionDB.open({ path: other })).close();
  liveWalOf(other, "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)");
  const path = copyFixture("hermes-v11.db");
  copyFileSync(`${other}-wal`, `${path}-wal`);
  return path;
}

/**
 * A 0-byte state.db whose `-wal` holds every commit of `hermes-v11.db`'s
 * 42 sessions and 197 messages (the main file lost, the WAL intact).
 */
export function emptyFileWithWal(): string {
  const full = copyFixture("hermes-v11.db");
  // VACUUM in WAL mode writes every page of the file into the WAL, never checkpointed.
  liveWalOf(full, "VACUUM");
  const dir = tempDir();
  const path = join(dir, "state.db");
  writeFileSync(path, "");
  copyFileSync(`${full}-wal`, `${path}-wal`);
  return path;
}

/**
 * A copy of `hermes-v11.db` whose latest commits (every message rewritten)
 * live only in its `-wal`, cut to half its size (a disk that lost the end
 * of the file): SQLite reads the schema through the `-wal`, and a
 * checkpoint would write into the cut file and delete the `-wal`.
 */
export function truncatedFileWithWal(): string {
  const path = copyFixture("hermes-v11.db");
  liveWalOf(path, "UPDATE messages SET content = content || ''");
  truncateSync(path, Math.floor(statSync(path).size / 2));
  return path;
}

/**
 * Leaves a crashed writer's hot rollback journal beside `path`: Python's
 * sqlite3 switches the file to rollback mode, changes every message in a
 * transaction too big for its cache (so pages reach the file) and exits
 * without committing.
 *
 * @param path The database file.
 */
export function hotJournalOf(path: string): void {
  runPython([
    "import os, sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)",
    "c.execute('PRAGMA journal_mode=DELETE')",
    "c.execute('PRAGMA cache_size=1')",
    "c.execute('BEGIN')",
    "c.execute(\"UPDATE messages SET content = content || 'x'\")",
    "os._exit(0)",
  ], path);
  assert.ok(statSync(`${path}-journal`).size > 0, "the writer left no journal");
}

/**
 * `path`'s own `-wal` replaced by a copy of the live `-wal` of `other`
 * (a restore that copied the wrong one).
 *
 * @param path The database file.
 * @param other A file whose `-wal` holds commits.
 */
export function besideWalOf(path: string, other: string): void {
  copyFileSync(`${other}-wal`, `${path}-wal`);
}

/** What overwrites the damaged bytes: seeded random bytes, or one byte repeated. */
export type Fill = "random" | 0x00 | 0xee | 0xff;

/**
 * A copy of a fixture with `length` bytes of page `page` (4096-byte pages)
 * overwritten from `offset` on.
 *
 * @param fixture The fixture's name.
 * @param damage The page, the offset in it, the length, and what to write.
 * @returns The damaged copy.
 */
export function overwrittenCopy(
  fixture: string,
  damage: { page: number; offset: number; length: number; fill: Fill },
): string {
  const path = copyFixture(fixture);
  const random = mulberry32(20261204 + damage.page);
  const bytes = new Uint8Array(damage.length).map(() =>
    damage.fill === "random" ? Math.floor(random() * 256) : damage.fill as number
  );
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, (damage.page - 1) * 4096 + damage.offset);
  } finally {
    closeSync(fd);
  }
  return path;
}
