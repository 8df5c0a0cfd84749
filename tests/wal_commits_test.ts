/**
 * `readWalCommits()` reads a `-wal` it read before from where that read
 * stopped, and reads it whole again once SQLite starts it over.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, copyFileSync, openSync, readSync, writeSync } from "node:fs";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";
import { FRAME_HEADER, readWalCommits, WAL_HEADER } from "../lib/sqlite/wal_commits.ts";
import { tempDbPath } from "./_helpers.ts";

/** A WAL database whose writer stays open and never checkpoints by itself. */
async function heldWriter(): Promise<{ path: string; db: SqliteConnection }> {
  const path = tempDbPath();
  const db = (await loadDriver())(path);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (x)");
  return { path, db };
}

function commit(db: SqliteConnection, times: number): void {
  for (let i = 0; i < times; i++) db.prepare("INSERT INTO t VALUES (randomblob(3000))").run();
}

/** The commits of a copy of the `-wal`, read by a path never read before. */
function coldRead(walPath: string) {
  const copy = `${walPath}.cold-${Math.random()}`;
  copyFileSync(walPath, copy);
  return readWalCommits(copy);
}

/** Flips one byte of the first frame's page: a read from the start stops there. */
function damageFirstFrame(walPath: string): void {
  const fd = openSync(walPath, "r+");
  try {
    const at = WAL_HEADER + FRAME_HEADER + 100;
    const byte = new Uint8Array(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] ^= 0xff;
    writeSync(fd, byte, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

test("readWalCommits() of a grown -wal reads on from its last commit, and answers as a whole read does", async () => {
  const { path, db } = await heldWriter();
  try {
    const wal = `${path}-wal`;
    commit(db, 5);
    const first = readWalCommits(wal)!;
    assert.equal(first.commits.length, 6, "the CREATE TABLE and five inserts");
    commit(db, 4);
    const grown = readWalCommits(wal)!;
    assert.deepEqual(grown, coldRead(wal));
    assert.equal(grown.commits.length, 10);
    // Frames read before are not read again: a byte changed in one (which SQLite never
    // does to a committed frame) goes unseen by the resumed read, not by a whole one.
    damageFirstFrame(wal);
    commit(db, 1);
    assert.equal(readWalCommits(wal)!.commits.length, 11);
    assert.equal(coldRead(wal)!.commits.length, 0);
  } finally {
    db.close();
  }
});

test("readWalCommits() reads a -wal that SQLite started over (new salts) from its start", async () => {
  const { path, db } = await heldWriter();
  try {
    const wal = `${path}-wal`;
    commit(db, 6);
    const before = readWalCommits(wal)!;
    assert.equal(before.commits.length, 7);
    db.exec("PRAGMA wal_checkpoint(RESTART)");
    commit(db, 2);
    const restarted = readWalCommits(wal)!;
    assert.notDeepEqual(restarted.salts, before.salts);
    assert.equal(restarted.commits.length, 2, "only the commits after the restart");
    assert.deepEqual(restarted, coldRead(wal));
  } finally {
    db.close();
  }
});
