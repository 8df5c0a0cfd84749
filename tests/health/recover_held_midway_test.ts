/**
 * `recover` on a rollback-journal SRC that another process (Python's
 * sqlite3, as a writer writing its pages) takes whole between two of its
 * reads, after the open: the read that met the lock waits as the open
 * waits, up to `HERMES_STATE_LOCK_TIMEOUT`, and is tried again. Never let
 * go, the CLI names SRC and the wait, exits 1 and leaves no DEST (nor a
 * temporary file), SRC's bytes as they were; let go at the next try, DEST
 * holds what a recover of the file no one holds gives. It said only
 * "database is locked" after a second, whatever the timeout. The file is
 * taken and let go at set reads (a hook on the driver's `prepare`), never
 * after a timed wait.
 */
import { afterEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { buildDb, runCli } from "../_cli_io.ts";
import { rawOpen, tempDir } from "../_helpers.ts";
import { toRollbackJournal, WholeFileHolder } from "../_held_whole_child.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import type { SqliteConnection, SqliteStatement } from "../../lib/sqlite/driver/types.ts";

/** Gives up at once: the lock line follows the first tries. */
const GIVE_UP = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };
/** A wait no test reaches: the holder lets go at recover's next try. */
const WAIT_LONG = { HERMES_STATE_LOCK_TIMEOUT: "120" };

/** Recover's read of the messages table by rowid ranges (the same words before the fix). */
const MESSAGES_RANGE_READ = "FROM messages WHERE rowid BETWEEN";

/** A rollback-journal state.db of three sessions (one a child) and four messages. */
async function stateDb(): Promise<string> {
  const path = await buildDb((db) => {
    db.createSession("s1", "cli", { model: "m1" });
    db.appendMessage("s1", { role: "user", content: "hello held world" });
    db.appendMessage("s1", { role: "assistant", content: "an answer" });
    db.createSession("s2", "cli", { parentSessionId: "s1" });
    db.appendMessage("s2", { role: "user", content: "a second question" });
    db.createSession("s3", "telegram");
    db.appendMessage("s3", { role: "user", content: "from telegram" });
  });
  await toRollbackJournal(path);
  return path;
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/**
 * Runs `fn` while every try of a read whose SQL holds `words` (each call of
 * its statement's `all`) is counted, `onTry(n)` called before try `n` (1
 * for the first).
 */
async function onEachTry<T>(
  words: string,
  onTry: (n: number) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const probe = (await loadDriver())(":memory:");
  const proto = Object.getPrototypeOf(probe) as SqliteConnection;
  probe.close();
  const original = proto.prepare;
  let tries = 0;
  proto.prepare = function (this: SqliteConnection, sql: string): SqliteStatement {
    const statement = original.call(this, sql);
    if (!sql.includes(words)) return statement;
    const all = statement.all;
    statement.all = function (this: SqliteStatement, ...params) {
      onTry(++tries);
      return all.apply(this, [...params]);
    };
    return statement;
  };
  try {
    return await fn();
  } finally {
    proto.prepare = original;
  }
}

/** Every row of the three tables DEST holds, in order. */
async function rowsOf(path: string): Promise<unknown[]> {
  const db = await rawOpen(path, true);
  try {
    return [
      db.prepare("SELECT * FROM sessions ORDER BY id").all(),
      db.prepare("SELECT * FROM messages ORDER BY id").all(),
      db.prepare("SELECT * FROM state_meta ORDER BY key").all(),
      db.prepare("SELECT * FROM sqlite_sequence ORDER BY name").all(),
    ];
  } finally {
    db.close();
  }
}

let holder: WholeFileHolder | undefined;
afterEach(async () => {
  await holder?.stop();
  holder = undefined;
});

describe("recover with SRC taken whole at its read of a table", () => {
  test("never let go: the lock line naming SRC, exit 1, no DEST, SRC as it was", async () => {
    const source = await stateDb();
    const dest = join(dirname(source), "new.db");
    const before = sha256(source);
    holder = await WholeFileHolder.start(source, "journal");
    const run = await onEachTry(
      MESSAGES_RANGE_READ,
      (n) => n === 1 && holder!.take(),
      () => runCli(["recover", source, dest], { env: GIVE_UP }),
    );
    assert.equal(
      run.err.replace(/\(waited \d+ s\)/, "(waited N s)"),
      `hermes-state: database is locked by another process (waited N s): ${source}\n`,
    );
    assert.equal(run.code, 1);
    assert.equal(run.out, "");
    await holder.stop();
    holder = undefined;
    assert.equal(existsSync(dest), false);
    // Nor a temporary file beside it.
    assert.deepEqual(
      readdirSync(dirname(dest)).filter((name) => name.includes(basename(dest))),
      [],
    );
    assert.equal(sha256(source), before);
  });

  test("let go at the next try: the DEST a recover of SRC no one holds makes", async () => {
    const source = await stateDb();
    const unheldDest = join(tempDir(), "unheld.db");
    const unheld = await runCli(["recover", source, unheldDest]);
    assert.equal(unheld.code, 0, unheld.err);
    const before = sha256(source);
    const dest = join(dirname(source), "new.db");
    holder = await WholeFileHolder.start(source, "journal");
    let tries = 0;
    const run = await onEachTry(MESSAGES_RANGE_READ, (n) => {
      tries = n;
      if (n === 1) holder!.take();
      // The try after the one that met the held file: let go (rolled back) first.
      if (n === 2) holder!.release();
    }, () => runCli(["recover", source, dest], { env: WAIT_LONG }));
    assert.equal(run.err, "");
    assert.equal(run.code, 0);
    assert.equal(run.out, unheld.out.replaceAll(unheldDest, dest));
    // The read that met the lock was tried again, once.
    assert.equal(tries, 2);
    assert.deepEqual(await rowsOf(dest), await rowsOf(unheldDest));
    assert.equal(sha256(source), before);
  });
});
