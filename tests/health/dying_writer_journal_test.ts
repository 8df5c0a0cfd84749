/**
 * The health kit's reads never change the file they read, when the file is
 * in rollback-journal mode (a Python Hermes file set to
 * `journal_mode=DELETE`, an old copy) and a writer dies in the middle of a
 * transaction, leaving a hot `-journal`: before the read opens it, or while
 * the read is open. A read-write connection would play that journal back
 * into the file (and delete it); each test compares the bytes of the file
 * and its `-journal` before and after.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import type {
  SqliteConnection,
  SqliteDriver,
  SqliteStatement,
} from "../../lib/sqlite/driver/types.ts";
import { SqliteError } from "../../lib/sqlite/driver/sqlite_error.ts";
import { chooseReadAccess, openForReading } from "../../lib/sqlite/read_access.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { backupDatabase } from "../../lib/health/backup.ts";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { runCli } from "../_cli_io.ts";
import { copyFixture, rawOpen, tempDir } from "../_helpers.ts";
import { hotJournalOf } from "./_damaged_files.ts";

/** sha256 of every file in the folder of `path`. */
function folderHashes(path: string): Record<string, string> {
  const dir = join(path, "..");
  return Object.fromEntries(
    readdirSync(dir).sort().map((name) => [
      name,
      createHash("sha256").update(readFileSync(join(dir, name))).digest("hex"),
    ]),
  );
}

/** A copy of the v11 fixture, switched to rollback-journal mode, alone in its folder. */
async function rollbackJournalCopy(): Promise<string> {
  const path = copyFixture("hermes-v11.db");
  using raw = await rawOpen(path);
  assert.equal(raw.prepare("PRAGMA journal_mode = DELETE").get()?.journal_mode, "delete");
  return path;
}

/**
 * The driver, its connections wrapped so that a writer dies mid-transaction
 * on `path` (`hotJournalOf`) just before the `nth` statement this process
 * prepares on the file: the read is open, between two of its statements.
 * `left()` gives the hashes of the folder as the writer left it.
 */
function writerDiesDuringRead(
  openDriver: SqliteDriver,
  path: string,
  nth: number,
): { openDriver: SqliteDriver; left: () => Record<string, string> | undefined } {
  let prepared = 0;
  let left: Record<string, string> | undefined;
  const wrapped: SqliteDriver = (file, options) => {
    const db = openDriver(file, options);
    const prepare = (sql: string): SqliteStatement => {
      if (file === path && ++prepared === nth && left === undefined) {
        hotJournalOf(path);
        left = folderHashes(path);
      }
      return db.prepare(sql);
    };
    const connection: SqliteConnection = {
      get kind() {
        return db.kind;
      },
      exec: (sql) => db.exec(sql),
      prepare,
      close: () => db.close(),
      [Symbol.dispose]: () => db.close(),
    };
    return connection;
  };
  return { openDriver: wrapped, left: () => left };
}

const JOURNAL_ADVICE = /left its rollback journal .*doctor --fix/;

describe("a writer that dies while the health kit reads a rollback-journal file", () => {
  test("openForReading() opens a rollback-journal file read-only: the next read after a writer died plays nothing back", async () => {
    const path = await rollbackJournalCopy();
    const openDriver = await loadDriver();
    assert.equal(chooseReadAccess(path), "shared");
    const db = openForReading(openDriver, path, chooseReadAccess(path));
    try {
      assert.ok(Number(db.prepare("SELECT count(*) AS n FROM messages").get()?.n) > 0);
      hotJournalOf(path);
      const before = folderHashes(path);
      assert.throws(
        () => db.prepare("SELECT count(*) AS n FROM messages").get(),
        (error) => error instanceof SqliteError && error.code === 8,
      );
      assert.deepEqual(folderHashes(path), before, "the read played the writer's journal back");
    } finally {
      db.close();
    }
    assert.ok(existsSync(`${path}-journal`));
  });

  test('openForReading() keeps a WAL file\'s "shared" connection, which leaves no -wal behind', async () => {
    const path = copyFixture("hermes-v11.db");
    const before = folderHashes(path);
    const openDriver = await loadDriver();
    const db = openForReading(openDriver, path, chooseReadAccess(path));
    try {
      assert.ok(Number(db.prepare("SELECT count(*) AS n FROM sessions").get()?.n) > 0);
    } finally {
      db.close();
    }
    assert.deepEqual(folderHashes(path), before);
  });

  test("doctor() leaves the file and the journal as the writer left them, and names the journal", async () => {
    const path = await rollbackJournalCopy();
    const dying = writerDiesDuringRead(await loadDriver(), path, 3);
    await assert.rejects(doctor(path, { openDriver: dying.openDriver }), JOURNAL_ADVICE);
    const left = dying.left();
    assert.ok(left !== undefined, "the writer never ran");
    assert.deepEqual(folderHashes(path), left, "the checks played the writer's journal back");
  });

  test("backupDatabase() leaves the file and the journal as the writer left them, and names the journal", async () => {
    const path = await rollbackJournalCopy();
    const dest = join(tempDir(), "copy.db");
    const openDriver = await loadDriver();
    let before: Record<string, string> | undefined;
    await assert.rejects(
      backupDatabase(path, dest, {
        openDriver,
        onProgress: (stage) => {
          if (stage !== "copying" || before !== undefined) return;
          hotJournalOf(path);
          before = folderHashes(path);
        },
      }),
      JOURNAL_ADVICE,
    );
    assert.ok(before !== undefined, "the writer never ran");
    assert.deepEqual(folderHashes(path), before, "the copy played the writer's journal back");
    assert.ok(!existsSync(dest));
  });

  test("recoverDatabase() leaves the file and the journal as the writer left them, and names the journal", async () => {
    const path = await rollbackJournalCopy();
    const dest = join(tempDir(), "new.db");
    const dying = writerDiesDuringRead(await loadDriver(), path, 2);
    await assert.rejects(
      recoverDatabase(path, dest, { openDriver: dying.openDriver }),
      JOURNAL_ADVICE,
    );
    const left = dying.left();
    assert.ok(left !== undefined, "the writer never ran");
    assert.deepEqual(folderHashes(path), left, "the read played the writer's journal back");
  });
});

describe("a writer that died before the health kit reads its rollback-journal file", () => {
  test("doctor, backup and recover say one line naming the journal, and leave the file and the journal as they were", async () => {
    const path = await rollbackJournalCopy();
    hotJournalOf(path);
    const before = folderHashes(path);
    for (
      const args of [
        ["--db", path, "doctor"],
        ["--db", path, "doctor", "--full"],
        ["--db", path, "backup", join(tempDir(), "b.db")],
        ["recover", path, join(tempDir(), "r.db")],
      ]
    ) {
      const run = await runCli(args);
      assert.equal(run.code, 1, args.join(" "));
      assert.match(run.err, new RegExp(`Cannot open database "${path}": .*left its rollback`));
      assert.match(run.err, JOURNAL_ADVICE);
      assert.equal(run.err.trim().split("\n").length, 1, run.err);
      assert.deepEqual(folderHashes(path), before, args.join(" "));
    }
  });
});
