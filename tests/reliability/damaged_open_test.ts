import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { OpenError } from "../../lib/core/errors.ts";
import { assertNotDamaged } from "../../lib/sqlite/damaged_file.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import type { SqliteDriver } from "../../lib/sqlite/driver/types.ts";
import { tempDbPath } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";

function sha256(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Hashes of the file and its two sidecars (read only while no connection of ours is open). */
function hashes(path: string): (string | undefined)[] {
  return [path, `${path}-wal`, `${path}-shm`].map(sha256);
}

/**
 * A Python writer commits into the WAL and dies without closing (a gateway
 * killed mid-run): the latest commits exist only in the -wal.
 */
function walOnlyCommits(path: string): void {
  const script = [
    "import sqlite3, sys, os",
    "c = sqlite3.connect(sys.argv[1])",
    "c.execute('PRAGMA journal_mode=WAL')",
    "c.execute('CREATE TABLE IF NOT EXISTS t (x)')",
    "c.commit()",
    "c.execute('PRAGMA wal_checkpoint(TRUNCATE)')",
    "c.execute(\"INSERT INTO t VALUES ('only in the wal')\")",
    "c.commit()",
    "os._exit(0)",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  assert.ok(statSync(`${path}-wal`).size > 0);
}

/** Zeroes the 100-byte database header (no connection of this process holds the file). */
function zeroHeader(path: string): void {
  const fd = openSync(path, "r+");
  writeSync(fd, new Uint8Array(100), 0, 100, 0);
  closeSync(fd);
}

function isRecoverHint(error: unknown): boolean {
  assert.ok(error instanceof OpenError, String(error));
  assert.match(error.message, /file is not a database/);
  // The command as it can be pasted: the file, and a new one beside it.
  assert.match(
    error.message,
    /run hermes-state recover (\S+)\.db \1-recovered\.db to salvage what it holds/,
  );
  return true;
}

test("SessionDB.open() leaves a file with a zeroed header and its live -wal exactly as they were, and names recover", async () => {
  const path = tempDbPath();
  walOnlyCommits(path);
  zeroHeader(path);
  const [file, wal] = hashes(path);
  await assert.rejects(SessionDB.open({ path }), isRecoverHint);
  await assert.rejects(SessionDB.open({ path, readonly: true }), isRecoverHint);
  await assert.rejects(SessionDB.open({ path }), isRecoverHint);
  const after = hashes(path);
  assert.equal(after[0], file, "the damaged file was changed");
  assert.equal(after[1], wal, "the -wal (the latest commits) was changed or deleted");
  // SQLite's first opener re-initialises the -shm (it holds no data); it is kept.
  assert.ok(after[2] !== undefined, "the -shm was deleted");
});

test("SessionDB.open() changes none of the three files while another process holds the damaged file open", async () => {
  const path = tempDbPath();
  walOnlyCommits(path);
  // Python reads the file, then keeps its connection open (no transaction) until told to stop.
  const holder = spawn("python3", [
    "-c",
    "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.execute('SELECT count(*) FROM t').fetchall()\nprint('open', flush=True)\nsys.stdin.read()",
    path,
  ], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
  zeroHeader(path);
  try {
    const before = hashes(path);
    await assert.rejects(SessionDB.open({ path }), isRecoverHint);
    await assert.rejects(SessionDB.open({ path, readonly: true }), isRecoverHint);
    assert.deepEqual(hashes(path), before);
  } finally {
    holder.stdin!.end();
    await new Promise((resolve) => holder.once("exit", resolve));
  }
});

test("SessionDB.open() refuses a 0-byte file whose -wal holds commits, and deletes nothing", async () => {
  const path = tempDbPath();
  walOnlyCommits(path);
  writeFileSync(path, "");
  const [, wal] = hashes(path);
  for (const readonly of [false, true]) {
    await assert.rejects(SessionDB.open({ path, readonly }), (error) => {
      assert.ok(error instanceof OpenError);
      assert.match(error.message, /the file is empty but its -wal holds \d+ bytes of commits/);
      assert.match(error.message, /hermes-state recover/);
      return true;
    });
  }
  assert.equal(statSync(path).size, 0);
  assert.equal(sha256(`${path}-wal`), wal);
});

test("SessionDB.open() initialises a 0-byte file without sidecars as a new store, and a read-only open refuses it", async () => {
  const path = tempDbPath();
  writeFileSync(path, "");
  await assert.rejects(SessionDB.open({ path, readonly: true }), /not a Hermes state\.db/);
  assert.equal(statSync(path).size, 0);
  using db = await SessionDB.open({ path });
  assert.equal(db.inspect().schemaVersion, 11);
});

test("SessionDB.open() opens a sound file whose latest commits are only in the -wal, and keeps them", async () => {
  const path = tempDbPath();
  using first = await SessionDB.open({ path });
  first.createSession("s1", "cli");
  first.close();
  const script = [
    "import sqlite3, sys, os",
    "c = sqlite3.connect(sys.argv[1])",
    "c.execute(\"INSERT INTO state_meta (key, value) VALUES ('k', 'in the wal')\")",
    "c.commit()",
    "os._exit(0)",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  using db = await SessionDB.open({ path });
  assert.equal(db.getMeta("k"), "in the wal");
});

test("a read command refuses a 0-byte file and leaves it empty; import makes it a new store", async () => {
  const path = tempDbPath();
  writeFileSync(path, "");
  for (const command of [["list"], ["search", "docker"], ["info"], ["stats"]]) {
    const run = await runCli(["--db", path, ...command]);
    assert.equal(run.code, 1, command.join(" "));
    assert.match(run.err, /not a Hermes state\.db/);
    assert.equal(statSync(path).size, 0, `${command.join(" ")} changed the file`);
  }
  const input = `${path}.jsonl`;
  writeFileSync(
    input,
    JSON.stringify({ id: "s1", source: "cli", started_at: 1, messages: [] }) + "\n",
  );
  const run = await runCli(["--db", path, "import", input]);
  assert.equal(run.code, 0, run.err);
  assert.ok(statSync(path).size > 0);
});

test("assertNotDamaged() reads the file through a second connection only beside a -wal that holds commits", async () => {
  const openDriver = await loadDriver();
  const opened: string[] = [];
  const counting: SqliteDriver = (path, options) => {
    opened.push(path);
    return openDriver(path, options);
  };
  const clean = tempDbPath();
  (await SessionDB.open({ path: clean })).close();
  assert.ok(!existsSync(`${clean}-wal`));
  assertNotDamaged(clean, counting, { probe: true });
  assert.deepEqual(opened, [], "no -wal: nothing a failing writable open could lose");
  const live = tempDbPath();
  walOnlyCommits(live);
  assertNotDamaged(live, counting, { probe: true });
  // The probe, and the reads that compare the -wal with the file (foreign_wal.ts).
  assert.ok(opened.length > 0 && opened.every((path) => path === live), String(opened));
  zeroHeader(live);
  assert.throws(() => assertNotDamaged(live, counting, { probe: true }), isRecoverHint);
});

test("the recover hint names a -wal only where there is one", async () => {
  const alone = tempDbPath();
  writeFileSync(alone, "not a database, only text\n".repeat(200));
  await assert.rejects(SessionDB.open({ path: alone, readonly: true }), (error) => {
    assert.ok(isRecoverHint(error));
    assert.match((error as Error).message, /nothing was changed \(the file is as it was\)/);
    assert.doesNotMatch((error as Error).message, /-wal/);
    return true;
  });
  const withWal = tempDbPath();
  walOnlyCommits(withWal);
  zeroHeader(withWal);
  await assert.rejects(SessionDB.open({ path: withWal }), (error) => {
    assert.ok(isRecoverHint(error));
    assert.match(
      (error as Error).message,
      /nothing was changed \(the file and its -wal are as they were\)/,
    );
    return true;
  });
});
