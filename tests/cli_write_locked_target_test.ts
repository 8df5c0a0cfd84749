/**
 * `import` and `copy` into a file another process keeps locked: the first
 * write that gives up after `HERMES_STATE_LOCK_TIMEOUT` stops the run with
 * one line naming that file, instead of waiting as long again for every
 * later line or session, and nothing of the refused one is written.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { PassThrough } from "node:stream";
import { recordingIo, runCli, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";

/** A file of `count` sessions, one message each, and its export. */
async function sourceWithSessions(count: number): Promise<{ path: string; jsonl: string }> {
  const path = tempDbPath();
  await withDb(path, (db) => {
    for (let i = 0; i < count; i++) {
      db.createSession(`s${i}`, "cli");
      db.appendMessage(`s${i}`, { role: "user", content: `message ${i}` });
    }
  });
  const run = await runCli(["--db", path, "export"]);
  assert.equal(run.code, 0, run.err);
  return { path, jsonl: run.out };
}

/** An existing target whose write lock another connection holds while `fn` runs. */
async function whileLocked<T>(target: string, fn: () => Promise<T>): Promise<T> {
  const holder = await rawOpen(target);
  holder.exec("BEGIN IMMEDIATE");
  holder.exec("INSERT INTO state_meta (key, value) VALUES ('held', 'yes')");
  try {
    return await fn();
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
}

async function sessionCount(path: string): Promise<number> {
  return await withDb(path, (db) => db.sessionCount());
}

const ENV = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };

describe("a write command whose target stays locked", () => {
  test("import stops at the first line the lock refuses once it has begun, with one line", async () => {
    const { jsonl } = await sourceWithSessions(5);
    const lines = jsonl.trimEnd().split("\n");
    const target = tempDbPath();
    await withDb(target, (db) => db.createSession("present", "cli"));
    // The first line goes in; then another process takes the lock and keeps it.
    const input = new PassThrough();
    const io = recordingIo({ env: ENV });
    io.stdin = () => input;
    input.write(lines[0] + "\n");
    const running = main(["--db", target, "import", "-"], io);
    const reader = await rawOpen(target, true);
    const count = () => Number(reader.prepare("SELECT count(*) AS n FROM sessions").get()?.n);
    while (count() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    reader.close();
    const code = await whileLocked(target, () => {
      input.end(lines.slice(1).join("\n") + "\n");
      return running;
    });
    assert.equal(code, 1);
    assert.equal(io.out, "");
    assert.equal(
      io.err,
      `hermes-state: Cannot import line 2: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; the same import again goes on)\n`,
    );
    assert.equal(await sessionCount(target), 2);
    const again = await runCli(["--db", target, "import", "-"], { stdin: jsonl });
    assert.equal(again.code, 0, again.err);
    assert.equal(await sessionCount(target), 6);
  });

  test("copy into a DEST another process keeps locked names DEST, not --db", async () => {
    const { path: source } = await sourceWithSessions(5);
    const target = tempDbPath();
    await withDb(target, (db) => db.createSession("present", "cli"));
    const run = await whileLocked(target, () => runCli(["copy", source, target], { env: ENV }));
    assert.equal(run.code, 1);
    assert.equal(run.out, "");
    assert.equal(
      run.err,
      `hermes-state: nothing was copied: database is locked by another process (waited 0 s): ` +
        `${target} (once it is free, run the same copy again)\n`,
    );
    assert.equal(await sessionCount(target), 1);
    const again = await runCli(["copy", source, target]);
    assert.equal(again.code, 0, again.err);
    assert.equal(await sessionCount(target), 6);
  });

  test("copy names SRC or DEST when either is held whole, never the default --db", async () => {
    const { path: source } = await sourceWithSessions(2);
    const target = tempDbPath();
    await withDb(target, (db) => db.createSession("present", "cli"));
    for (const [held, other] of [[source, target], [target, source]]) {
      const holder = await rawOpen(held);
      holder.exec("PRAGMA locking_mode = EXCLUSIVE");
      holder.exec("BEGIN EXCLUSIVE");
      try {
        const argv = held === source ? ["copy", held, other] : ["copy", other, held];
        const run = await runCli(argv, { env: ENV });
        assert.equal(run.code, 1);
        assert.match(
          run.err,
          new RegExp(`^hermes-state: .*locked by another process.*: ${held}[ \\n]`),
          run.err,
        );
      } finally {
        holder.exec("ROLLBACK");
        holder.close();
      }
    }
  });
});
