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
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
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

/**
 * Leaves `index` out of step with its table, every page sound: Python's
 * sqlite3 gives the index another definition (`writable_schema`), runs
 * `sql` on a new connection (so SQLite keeps the index by that definition),
 * then puts its own text back. Run with `WHERE 0` the index misses what
 * `sql` changed; run without `UNIQUE` it takes two entries alike.
 *
 * @param path The database file.
 * @param index The index.
 * @param meanwhile The definition used while `sql` runs.
 * @param sql The statements run meanwhile.
 */
export function indexOutOfStep(path: string, index: string, meanwhile: string, sql: string): void {
  runPython(
    [
      "import sqlite3, sys",
      "path, index, meanwhile, sql = sys.argv[1:5]",
      "def edit(text):",
      "    c = sqlite3.connect(path, isolation_level=None)",
      "    c.execute('PRAGMA writable_schema = ON')",
      "    c.execute('UPDATE sqlite_master SET sql = ? WHERE type = ? AND name = ?', (text, 'index', index))",
      "    c.close()",
      "c = sqlite3.connect(path)",
      "own = c.execute('SELECT sql FROM sqlite_master WHERE name = ?', (index,)).fetchone()[0]",
      "c.close()",
      "edit(meanwhile)",
      "c = sqlite3.connect(path, isolation_level=None)",
      "c.executescript(sql)",
      "c.close()",
      "edit(own)",
    ],
    path,
    index,
    meanwhile,
    sql,
  );
}

/**
 * A copy of the v11 fixture as a crashed writer left it: three commits of five messages each
 * only in its `-wal` (copied while the writer still held the file open).
 */
export function crashedWithThreeWalCommits(): string {
  const live = copyFixture("hermes-v11.db");
  const path = join(dirname(live), "crashed", "state.db");
  mkdirSync(dirname(path));
  runPython(
    [
      "import shutil, sqlite3, sys",
      "live, path = sys.argv[1], sys.argv[2]",
      "c = sqlite3.connect(live, isolation_level=None)",
      "c.execute('PRAGMA wal_autocheckpoint = 0')",
      "sid = c.execute('SELECT id FROM sessions ORDER BY id LIMIT 1').fetchone()[0]",
      "for i in range(3):",
      "    c.execute('BEGIN')",
      "    for j in range(5):",
      "        c.execute(\"INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 1.0)\", (sid, 'wal %d %d ' % (i, j) + 'x' * 3000))",
      "    c.execute('COMMIT')",
      "shutil.copyfile(live, path)",
      "shutil.copyfile(live + '-wal', path + '-wal')",
    ],
    live,
    path,
  );
  return path;
}

/** Flips one byte of the page the `-wal`'s frame `frame` (1 for the first) carries. */
export function flipFrameByte(walPath: string, frame: number): void {
  const fd = openSync(walPath, "r+");
  try {
    const header = new Uint8Array(32);
    readSync(fd, header, 0, 32, 0);
    const pageSize = new DataView(header.buffer).getUint32(8);
    const at = 32 + (frame - 1) * (24 + pageSize) + 24 + 100;
    const byte = new Uint8Array(1);
    readSync(fd, byte, 0, 1, at);
    writeSync(fd, new Uint8Array([byte[0] ^ 0xff]), 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

/** Each frame of a `-wal`: the page it carries and whether it ends a commit. */
export function walFrames(walPath: string): { page: number; commit: boolean }[] {
  const wal = readFileSync(walPath);
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const frameSize = 24 + view.getUint32(8);
  const frames: { page: number; commit: boolean }[] = [];
  for (let at = 32; at + frameSize <= wal.length; at += frameSize) {
    frames.push({ page: view.getUint32(at), commit: view.getUint32(at + 4) > 0 });
  }
  return frames;
}

/**
 * The first frame (1 for the first) of the second commit of a `-wal` whose
 * page a later frame carries again (`again`), or that none does.
 */
export function frameOfSecondCommit(walPath: string, again: boolean): number {
  const frames = walFrames(walPath);
  const firstCommit = frames.findIndex((f) => f.commit);
  const secondCommit = frames.findIndex((f, i) => i > firstCommit && f.commit);
  for (let i = firstCommit + 1; i < secondCommit; i++) {
    const later = frames.slice(i + 1).some((f) => f.page === frames[i].page);
    if (later === again) return i + 1;
  }
  throw new Error(
    `no frame of the second commit whose page is ${again ? "" : "not "}written again`,
  );
}
