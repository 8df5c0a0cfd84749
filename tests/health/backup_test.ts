import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { backupDatabase } from "../../lib/health/backup.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture, tempDir } from "../_helpers.ts";
import { startWorker, workerRuntimes } from "../reliability/_runtimes.ts";

/** Counts rows with Python's sqlite3 (the copy must open in Python). */
function pythonCounts(path: string): [number, number] {
  const script = [
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1])",
    "print(c.execute('SELECT count(*) FROM sessions').fetchone()[0], c.execute('SELECT count(*) FROM messages').fetchone()[0])",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const [sessions, messages] = run.stdout.trim().split(" ").map(Number);
  return [sessions, messages];
}

describe("backupDatabase()", () => {
  test("backupDatabase() copies hermes-v11.db, verified, mode 0600, and Python opens the copy", async () => {
    const source = copyFixture("hermes-v11.db");
    const dest = join(tempDir(), "backup.db");
    const result = await backupDatabase(source, dest);
    assert.equal(result.sessions, 42);
    assert.equal(result.messages, 197);
    assert.equal(result.compressed, false);
    assert.equal(result.bytes, statSync(dest).size);
    assert.equal(statSync(dest).mode & 0o777, 0o600);
    assert.deepEqual(pythonCounts(dest), [42, 197]);
    assert.equal(existsSync(`${source}-wal`) || existsSync(`${source}-shm`), false);
    using copy = await SessionDB.open({ path: dest, readonly: true });
    assert.equal(copy.searchMessages("docker").length > 0, true);
    // Table by table: the search indexes' own checks did not run.
    assert.equal(result.searchIndexesChecked, false);
    assert.deepEqual(result.ftsWarnings, []);
  });

  test("backupDatabase() with full runs the search indexes' own checks: hermes-v11.db's SQLite 3.40 trigram condition is a warning", async () => {
    const source = copyFixture("hermes-v11.db");
    const result = await backupDatabase(source, join(tempDir(), "backup.db"), { full: true });
    assert.equal(result.searchIndexesChecked, true);
    assert.equal(result.messages, 197);
    assert.equal(result.ftsWarnings.length, 1, result.ftsWarnings.join("\n"));
    assert.match(result.ftsWarnings[0], /messages_fts_trigram/);
  });

  test("backupDatabase() makes a consistent copy while another process appends", async () => {
    const dir = tempDir();
    const source = join(dir, "state.db");
    (await SessionDB.open({ path: source })).close();
    const [runtime] = workerRuntimes(["deno", "bun"]);
    const writer = startWorker(runtime, "_writer.ts", [JSON.stringify({
      path: source,
      name: "bk",
      own: "backup_own",
      count: 0,
      seed: 7,
    })]);
    try {
      await writer.waitFor((line) => line.startsWith("ack"), "a first append");
      const results = [];
      for (let i = 0; i < 3; i++) {
        results.push(await backupDatabase(source, join(dir, `copy${i}.db`)));
      }
      for (const [i, result] of results.entries()) {
        // Consistent: the counters of the copy match its rows.
        using copy = await SessionDB.open({ path: join(dir, `copy${i}.db`), readonly: true });
        assert.equal(copy.getSession("backup_own")!.message_count, result.messages);
        assert.equal(copy.messageCount(), result.messages);
      }
      assert.ok(results[2].messages >= results[0].messages);
    } finally {
      writer.kill("SIGKILL");
      await writer.exited;
    }
  });

  test("backupDatabase() writes gzip with compress, which unpacks to a sound database", async () => {
    const source = copyFixture("hermes-v11.db");
    const dir = tempDir();
    const result = await backupDatabase(source, join(dir, "backup.db.gz"), { compress: true });
    assert.equal(result.compressed, true);
    assert.equal(statSync(join(dir, "backup.db.gz")).mode & 0o777, 0o600);
    const unpacked = join(dir, "unpacked.db");
    writeFileSync(unpacked, gunzipSync(readFileSync(join(dir, "backup.db.gz"))));
    assert.deepEqual(pythonCounts(unpacked), [42, 197]);
  });

  test("backupDatabase() refuses the source and its sidecars, and an existing file unless force", async () => {
    const source = copyFixture("hermes-v11.db");
    await assert.rejects(backupDatabase(source, source), {
      name: "BackupError",
      message: /is the database itself/,
    });
    await assert.rejects(backupDatabase(source, `${source}-wal`), { name: "BackupError" });
    const dest = join(tempDir(), "existing.db");
    writeFileSync(dest, "keep me");
    await assert.rejects(backupDatabase(source, dest), {
      message: /already exists \(give --force/,
    });
    assert.equal(readFileSync(dest, "utf8"), "keep me");
    assert.equal((await backupDatabase(source, dest, { force: true })).sessions, 42);
    await assert.rejects(backupDatabase(join(tempDir(), "none.db"), dest), { name: "OpenError" });
  });
});
