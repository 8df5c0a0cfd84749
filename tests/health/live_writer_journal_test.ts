/**
 * A rollback-journal file (a Python Hermes file set to
 * `journal_mode=DELETE`) with a writer at work: its `-journal` is there
 * for every transaction it runs, and is no dead writer's leftover. `backup`
 * and `recover` refused such a file as "a writer stopped in the middle of a
 * transaction", and `doctor --fix` said it had played that journal back.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../_cli_io.ts";
import { copyFixture, rawOpen, tempDir } from "../_helpers.ts";

/**
 * A python3 writer in the middle of a transaction on `path`, switched to
 * rollback-journal mode: one session retitled, not committed (its journal
 * beside the file, its lock held) until the function returned is called,
 * which rolls it back and waits for the writer to exit.
 */
async function writerAtWork(path: string): Promise<() => Promise<void>> {
  const child: ChildProcess = spawn("python3", [
    "-c",
    [
      "import sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1], isolation_level=None)",
      "c.execute('PRAGMA journal_mode=DELETE')",
      "c.execute('BEGIN IMMEDIATE')",
      "c.execute(\"UPDATE sessions SET title = 'under way' WHERE rowid = 1\")",
      "print('ready', flush=True)",
      "sys.stdin.readline()",
      "c.execute('ROLLBACK')",
      "c.close()",
    ].join("\n"),
    path,
  ], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("ready")) resolve();
    });
    child.on("close", (code) => reject(new Error(`the writer exited with ${code}`)));
  });
  assert.ok(statSync(`${path}-journal`).size > 0, "the writer has no journal");
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    child.stdin!.end("\n");
    await exited;
  };
}

describe("a rollback-journal file with a writer at work", () => {
  test("backup and recover read past a live writer's journal: the last commit, every row", async () => {
    const path = copyFixture("hermes-v11.db");
    const finish = await writerAtWork(path);
    try {
      const backup = join(tempDir(), "b.db");
      const copied = await runCli(["--db", path, "backup", backup]);
      assert.equal(copied.code, 0, copied.err);
      assert.match(copied.out, /42 sessions, 197 messages/);
      const recovered = join(tempDir(), "r.db");
      const run = await runCli(["--json", "recover", path, recovered]);
      assert.equal(run.code, 0, run.err);
      const result = JSON.parse(run.out) as { sessions: number; messages: number };
      assert.deepEqual([result.sessions, result.messages], [42, 197]);
      for (const file of [backup, recovered]) {
        using db = await rawOpen(file, true);
        const titles = db.prepare("SELECT count(*) AS n FROM sessions WHERE title = 'under way'");
        assert.equal(titles.get()?.n, 0, `${file} holds the uncommitted change`);
      }
      assert.ok(existsSync(`${path}-journal`), "the writer's journal was touched");
    } finally {
      await finish();
    }
  });

  test("doctor --fix does not say it played back a live writer's journal", async () => {
    const path = copyFixture("hermes-v11.db");
    const finish = await writerAtWork(path);
    let run;
    try {
      // The writer holds its lock throughout: the repairs wait for it, briefly.
      run = await runCli(["--db", path, "doctor", "--fix"], {
        env: { HERMES_STATE_LOCK_TIMEOUT: "0.5" },
      });
    } finally {
      await finish();
    }
    assert.doesNotMatch(run.out + run.err, /played back/);
    assert.doesNotMatch(run.out + run.err, /left its rollback journal/);
  });
});
