import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import process from "node:process";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { backupDatabase } from "../../lib/health/backup.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture, runPython, tempDir } from "../_helpers.ts";
import {
  crashedWithThreeWalCommits,
  emptyFileWithWal,
  fileAndWal,
  flipFrameByte,
  frameOfSecondCommit,
  indexOutOfStep,
  liveWalOf,
} from "./_damaged_files.ts";
import { runCli } from "../_cli_io.ts";
import { startWorker, workerRuntimes } from "../reliability/_runtimes.ts";
import { isRoot } from "../reliability/_unprivileged.ts";

/** Counts rows with Python's sqlite3 (the copy must open in Python). */
function pythonCounts(path: string): [number, number] {
  const stdout = runPython([
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1])",
    "print(c.execute('SELECT count(*) FROM sessions').fetchone()[0], c.execute('SELECT count(*) FROM messages').fetchone()[0])",
  ], path);
  const [sessions, messages] = stdout.trim().split(" ").map(Number);
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

  test("a writer that commits and dies during a backup keeps its -wal: the backup's close does not fold it into the file", async () => {
    const source = copyFixture("hermes-v11.db");
    const before = readFileSync(source);
    let wrote = false;
    await backupDatabase(source, join(tempDir(), "backup.db"), {
      onProgress: (phase) => {
        if (phase !== "copying" || wrote) return;
        wrote = true;
        liveWalOf(source, "INSERT INTO state_meta (key, value) VALUES ('during_backup', 'x')");
      },
    });
    assert.equal(wrote, true);
    // A read never writes the file: the writer's commit is still its -wal's alone.
    assert.deepEqual(readFileSync(source), before);
    assert.equal(statSync(`${source}-wal`).size > 0, true);
    assert.deepEqual(pythonCounts(source), [42, 197]);
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
    // A folder as the source is said as such (SQLite said "unable to open database file").
    const folder = tempDir();
    await assert.rejects(backupDatabase(folder, join(tempDir(), "b.db")), {
      name: "OpenError",
      message: `Cannot open database "${folder}": it is a folder`,
    });
  });

  test("backupDatabase() refuses a 0-byte file whose -wal holds commits, and keeps the -wal", async () => {
    const source = emptyFileWithWal();
    const before = fileAndWal(source);
    const dest = join(tempDir(), "backup.db");
    await assert.rejects(backupDatabase(source, dest), {
      name: "OpenError",
      message: /the file is empty but its -wal holds \d+ bytes of commits/,
    });
    assert.deepEqual(fileAndWal(source), before, "the file or its -wal changed");
    assert.equal(existsSync(dest), false);
  });

  test("backupDatabase() of a damaged file says so and how to salvage it with recover, and writes nothing", async () => {
    const source = copyFixture("hermes-v11.db");
    const size = statSync(source).size;
    const fd = openSync(source, "r+");
    try {
      // Every page after the schema's, overwritten: the tables' b-trees are gone.
      const junk = new Uint8Array(size - 4096).fill(0xa5);
      writeSync(fd, junk, 0, junk.length, 4096);
    } finally {
      closeSync(fd);
    }
    const dest = join(tempDir(), "backup.db");
    await assert.rejects(backupDatabase(source, dest), (error: Error) => {
      assert.equal(error.name, "OpenError");
      assert.match(error.message, /malformed|not a database/);
      assert.match(
        error.message,
        new RegExp(
          `run hermes-state recover ${source} ${source.replace(/\.db$/, "-recovered.db")} to`,
        ),
      );
      return true;
    });
    assert.equal(existsSync(dest), false);
  });

  test("backupDatabase() with force removes the replaced file's -wal and -shm, so the copy reads as written", async () => {
    const source = copyFixture("hermes-v11.db");
    const dest = join(tempDir(), "backup.db");
    (await SessionDB.open({ path: dest })).close();
    liveWalOf(dest, "INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1)");
    assert.ok(existsSync(`${dest}-shm`));
    const result = await backupDatabase(source, dest, { force: true });
    assert.equal(result.sessions, 42);
    assert.equal(existsSync(`${dest}-wal`) || existsSync(`${dest}-shm`), false);
    assert.deepEqual(pythonCounts(dest), [42, 197]);
  });

  test("backupDatabase() removes the temporary files a killed backup left, and not a running one's", async () => {
    const source = copyFixture("hermes-v11.db");
    const dir = tempDir();
    const dead = spawnSync("true").pid!;
    const stale = [".backup.db.DEAD.copy", ".backup.db.DEAD.copy-journal", ".backup.db.DEAD.gz"]
      .map((name) => join(dir, name.replace("DEAD", String(dead))));
    const running = join(dir, `.backup.db.${process.ppid}.copy`);
    for (const file of [...stale, running]) writeFileSync(file, "left behind");
    await backupDatabase(source, join(dir, "backup.db"));
    assert.deepEqual(stale.filter((file) => existsSync(file)), []);
    assert.equal(existsSync(running), true, "a running process's file was removed");
    assert.deepEqual(readdirSync(dir).sort(), [`.backup.db.${process.ppid}.copy`, "backup.db"]);
  });

  test("backupDatabase() on a full disk names the destination, not the source", {
    skip: smallDiskSkip(),
  }, async () => {
    const source = copyFixture("hermes-v11.db");
    const dir = join(tempDir(), "small");
    mkdirSync(dir);
    const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]);
    assert.equal(mount.status, 0, String(mount.stderr));
    try {
      // Room for less than the 412 KiB copy.
      writeFileSync(join(dir, "filler"), new Uint8Array(800 * 1024));
      const dest = join(dir, "backup.db");
      await assert.rejects(backupDatabase(source, dest), {
        name: "BackupError",
        message: `Cannot back up to ${dest}: the disk is full`,
      });
      assert.deepEqual(readdirSync(dir), ["filler"]);
    } finally {
      spawnSync("umount", ["-l", dir]);
    }
  });
});

/** Why a tmpfs cannot be mounted here, or false (root on Linux; never skipped under CI=true). */
function smallDiskSkip(): string | false {
  if (process.platform !== "linux" || !isRoot()) {
    return process.env.CI === "true" ? false : "mounting a tmpfs needs root on Linux";
  }
  return false;
}

describe("a backup of a file whose -wal holds commits past a frame that fails its checksum", () => {
  test("is written, says the commits SQLite reads none of are not in it and names recover, exit 1", async () => {
    const path = crashedWithThreeWalCommits();
    const wal = `${path}-wal`;
    flipFrameByte(wal, frameOfSecondCommit(wal, false));
    const walBefore = readFileSync(wal);
    const dest = join(tempDir(), "backup.db");
    const result = await backupDatabase(path, dest);
    assert.deepEqual(result.walCommitsLeftOut, {
      frame: frameOfSecondCommit(wal, false),
      commits: 2,
    });
    const run = await runCli(["--db", path, "backup", join(tempDir(), "cli.db")]);
    // Before: "verified", exit 0, and not a word of the 2 commits left out.
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      /^hermes-state backup: the copy lacks 2 commits of the -wal: its frame \d+ fails its checksum, and SQLite reads nothing after it; hermes-state recover .+ salvages them/,
    );
    assert.deepEqual(readFileSync(wal), walBefore, "the -wal is left as it was");
  });

  test("a sound -wal leaves nothing out", async () => {
    const result = await backupDatabase(crashedWithThreeWalCommits(), join(tempDir(), "b.db"));
    assert.equal(result.walCommitsLeftOut, null);
  });
});

describe("a backup whose copy fails its integrity check", () => {
  test("says in one line that the file is damaged (not the copy) and names recover, writes nothing", async () => {
    const source = copyFixture("hermes-v11.db");
    // An index SQLite kept a message out of: only the integrity check of the copy sees it.
    indexOutOfStep(
      source,
      "idx_messages_session",
      "CREATE INDEX idx_messages_session ON messages(session_id, timestamp) WHERE 0",
      `INSERT INTO messages (session_id, role, content, timestamp)
       VALUES ('20251221_090000_9738df', 'user', 'late', 9e9)`,
    );
    const dest = join(tempDir(), "backup.db");
    await assert.rejects(backupDatabase(source, dest), (error: Error) => {
      assert.equal(error.name, "BackupError");
      // Before: "the copy fails its integrity check: …", up to ten lines, no way out named.
      assert.match(
        error.message,
        /^Cannot back up .+: its copy fails the integrity check \((wrong # of entries|row \d+ missing from index)[^\n]*\): the file itself is damaged, and no backup was written; nothing was changed \(the file is as it was\); run hermes-state recover [^\n]+$/,
      );
      return true;
    });
    assert.equal(existsSync(dest), false);
  });
});
