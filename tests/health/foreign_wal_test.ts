/**
 * A `-wal` of another database beside a file: refused at every open (the
 * read commands, `doctor`) with the path and `recover` named, and the
 * file's own `-wal` never taken for one.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { foreignWalReason } from "../../lib/sqlite/foreign_wal.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { copyFixture, runPython, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { besideWalOf, fileAndWal, liveWalOf, truncatedFileWithWal } from "./_damaged_files.ts";

/** A Python writer appends `count` messages to a copy of the v11 fixture, one commit each, checkpointing every `every` pages, and dies. */
function busyWal(count: number, every: number): string {
  const path = copyFixture("hermes-v11.db");
  runPython(
    [
      "import sqlite3, sys, os",
      "c = sqlite3.connect(sys.argv[1])",
      "c.execute('PRAGMA journal_mode=WAL')",
      `c.execute('PRAGMA wal_autocheckpoint=${every}')`,
      `for i in range(${count}):`,
      "    c.execute(\"INSERT INTO messages (session_id, role, content, timestamp) SELECT id, 'user', hex(randomblob(900)), 1 FROM sessions LIMIT 1\")",
      "    c.commit()",
      "os._exit(0)",
    ],
    path,
  );
  return path;
}

describe("foreignWalReason()", () => {
  test("foreignWalReason() takes no file's own live -wal for another's", async () => {
    const open = await loadDriver();
    const grown = copyFixture("hermes-v11.db");
    liveWalOf(
      grown,
      "INSERT INTO sessions (id, source, started_at, title) VALUES ('x', 'cli', 1, hex(zeroblob(6000)))",
    );
    const rewritten = copyFixture("hermes-v11.db");
    liveWalOf(rewritten, "UPDATE messages SET content = content || ''");
    const altered = copyFixture("hermes-v11.db");
    liveWalOf(altered, "ALTER TABLE sessions ADD COLUMN extra TEXT");
    for (const path of [grown, rewritten, altered, busyWal(300, 50), busyWal(200, 0)]) {
      assert.equal(foreignWalReason(path, open), undefined, path);
    }
  });

  test("foreignWalReason() names another database's -wal: other page size, other size, older schema", async () => {
    const open = await loadDriver();
    // The -wal of a copy of v11 beside a larger file (its only commit does not write page 1).
    const small = copyFixture("hermes-v11.db");
    liveWalOf(small, "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)");
    const big = busyWal(300, 0);
    runPython([
      "import sqlite3, sys",
      "sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')",
    ], big);
    besideWalOf(big, small);
    assert.match(
      foreignWalReason(big, open) ?? "",
      /belongs to another database.*commits are of a database of 103 pages, the file has \d+/,
    );
    // Another page size.
    const other = join(tempDir(), "other.db");
    runPython([
      "import sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "c.execute('PRAGMA page_size=8192')",
      "c.execute('CREATE TABLE t (x)')",
      "c.commit()",
    ], other);
    liveWalOf(other, "INSERT INTO t VALUES (1)");
    const v11 = copyFixture("hermes-v11.db");
    besideWalOf(v11, other);
    assert.match(foreignWalReason(v11, open) ?? "", /pages are 8192 bytes long, the file's 4096/);
    // An older copy's -wal (it grows the file, so page 1 is in its first commit) beside a file whose schema moved on.
    const old = copyFixture("hermes-v11.db");
    liveWalOf(
      old,
      "INSERT INTO sessions (id, source, started_at, title) VALUES ('x', 'cli', 1, hex(zeroblob(6000)))",
    );
    const moved = copyFixture("hermes-v11.db");
    runPython([
      "import sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "c.execute('ALTER TABLE sessions ADD COLUMN extra TEXT')",
      "c.commit()",
      "c.close()",
    ], moved);
    besideWalOf(moved, old);
    assert.match(
      foreignWalReason(moved, open) ?? "",
      /schema \(version \d+\) is older than the file's/,
    );
  });

  test("foreignWalReason() leaves a cut file's own -wal to the other checks", async () => {
    assert.equal(foreignWalReason(truncatedFileWithWal(), await loadDriver()), undefined);
  });
});

describe("opening a file beside another database's -wal", () => {
  test("the read commands, doctor and SessionDB.open() refuse it, name the path and recover, and change nothing", async () => {
    const small = copyFixture("hermes-v11.db");
    liveWalOf(small, "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)");
    const path = busyWal(300, 0);
    runPython([
      "import sqlite3, sys",
      "sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')",
    ], path);
    besideWalOf(path, small);
    const before = fileAndWal(path);
    const named = new RegExp(
      `${path}-wal\\) belongs to another database.*hermes-state recover ${path} ${
        path.replace(/\.db$/, "-recovered.db")
      }`,
    );
    for (
      const command of [["list"], ["search", "docker"], ["stats"], ["doctor"], ["doctor", "--fix"]]
    ) {
      const run = await runCli(["--db", path, ...command]);
      assert.equal(run.code, 1, command.join(" "));
      assert.match(run.err, named, command.join(" "));
      assert.doesNotMatch(run.err, /malformed/);
    }
    await assert.rejects(SessionDB.open({ path, readonly: true }), {
      name: "OpenError",
      message: named,
    });
    await assert.rejects(SessionDB.open({ path }), { name: "OpenError", message: named });
    await assert.rejects(doctor(path), { name: "OpenError", message: named });
    assert.deepEqual(fileAndWal(path), before, "the file or its -wal changed");
  });
});
