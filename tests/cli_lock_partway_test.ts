/**
 * `delete` with several ids and `prune` when another process takes the
 * write lock part-way and keeps it past `HERMES_STATE_LOCK_TIMEOUT`: the
 * run stops there and says on standard error what was done, what was not,
 * and what to run once the lock is free (exit 1); `--json` says the same.
 * The lock is taken at a set point of the run (after the first delete, at
 * the end of the first prune step), never after a timed wait.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, recordingIo, runCli, withDb } from "./_cli_io.ts";
import { tempDbPath, waitedAnyTime } from "./_helpers.ts";
import { copyFileSync } from "node:fs";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { LockHolder } from "./_write_lock_holder.ts";

const ENV = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };

/** A file of ended sessions `s0`…`s{count-1}`, one message each, a day apart, oldest first. */
async function endedSessions(count: number, now: number): Promise<string> {
  return await buildDb((db, clock) => {
    for (let i = 0; i < count; i++) {
      clock.now = now - (count + 100 - i) * 86400;
      db.createSession(`s${i}`, "cli");
      db.appendMessage(`s${i}`, { role: "user", content: `message ${i}` });
      db.endSession(`s${i}`, "cli_close");
    }
  }, { start: now - (count + 200) * 86400 });
}

let sixHundred: Promise<string> | undefined;

/** A copy of one file of 600 such sessions (built once: a prune takes three steps of it). */
async function sixHundredSessions(): Promise<string> {
  sixHundred ??= endedSessions(600, NOW);
  const path = tempDbPath();
  copyFileSync(await sixHundred, path);
  return path;
}

async function present(path: string, ids: readonly string[]): Promise<string[]> {
  return await withDb(path, (db) => ids.filter((id) => db.getSession(id) !== undefined));
}

/**
 * Runs `fn` while every delete of the store, once it has deleted `after`,
 * has `holder` take the lock: the next delete meets it.
 */
async function lockingAfterDeleting<T>(
  after: string,
  holder: LockHolder,
  fn: () => Promise<T>,
): Promise<T> {
  const original = SessionDB.prototype.deleteSession;
  SessionDB.prototype.deleteSession = function (this: SessionDB, ...args) {
    const deleted = original.apply(this, args);
    if (args[0] === after) holder.take();
    return deleted;
  };
  try {
    return await fn();
  } finally {
    SessionDB.prototype.deleteSession = original;
    holder.release();
  }
}

const NOW = 1_800_000_000;

describe("delete stopped part-way by a lock", () => {
  test("says which sessions were deleted, which not, and the command for the rest", async () => {
    const path = await endedSessions(3, NOW);
    const holder = await LockHolder.on(path);
    const run = await lockingAfterDeleting(
      "s0",
      holder,
      () => runCli(["--db", path, "delete", "--yes", "s0", "s1", "s2"], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    assert.equal(run.out, "Deleted session 's0'.\n");
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: deleted 's0', then stopped: database is locked by another process ` +
        `(waited 0 s): ${path}; not deleted: 's1', 's2' (once it is free: hermes-state --db ` +
        `${path} delete s1 s2)\n`,
    );
    assert.deepEqual(await present(path, ["s0", "s1", "s2"]), ["s1", "s2"]);
    // The command it names deletes the rest.
    const rest = run.err.match(/once it is free: hermes-state (.*)\)\n$/)![1].split(" ");
    const again = await runCli([...rest, "--yes"]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(await present(path, ["s0", "s1", "s2"]), []);
  });

  test("--json lists the sessions not deleted too", async () => {
    const path = await endedSessions(3, NOW);
    const holder = await LockHolder.on(path);
    const run = await lockingAfterDeleting(
      "s1",
      holder,
      () => runCli(["--db", path, "--json", "delete", "-y", "s0", "s1", "s2"], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    assert.deepEqual(JSON.parse(run.out), {
      deleted: ["s0", "s1"],
      not_found: [],
      ambiguous: [],
      not_deleted: ["s2"],
    });
    assert.match(run.err, /^hermes-state: deleted 's0', 's1', then stopped: database is locked/);
  });

  test("a lock met before the first delete: nothing was deleted, the same delete again", async () => {
    const path = await endedSessions(2, NOW);
    const holder = await LockHolder.on(path);
    holder.take();
    let run;
    try {
      run = await runCli(["--db", path, "delete", "-y", "s0", "s1"], { env: ENV });
    } finally {
      holder.release();
    }
    assert.equal(run.code, 1, run.err);
    assert.equal(run.out, "");
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: nothing was deleted: database is locked by another process (waited 0 s): ` +
        `${path} (once it is free, run the same delete again)\n`,
    );
    assert.deepEqual(await present(path, ["s0", "s1"]), ["s0", "s1"]);
  });
});

describe("prune stopped part-way by a lock", () => {
  /**
   * Runs `prune --yes` (and `extra`) on a terminal, so that each step's end
   * is drawn on standard error: the holder takes the lock at the first.
   */
  async function pruneLockedAfterFirstStep(path: string, extra: readonly string[] = []) {
    const holder = await LockHolder.on(path);
    const io = recordingIo({ now: NOW, env: ENV, stderrIsTerminal: true });
    const write = io.stderr;
    io.stderr = (text) => {
      write(text);
      if (text.endsWith(" done")) holder.take();
    };
    try {
      const code = await main(["--db", path, ...extra, "prune", "--yes"], io);
      return { code, out: io.out, err: io.err };
    } finally {
      holder.release();
    }
  }

  test("says how many sessions went, each whole, and that the same prune finishes", async () => {
    const path = await sixHundredSessions();
    const run = await pruneLockedAfterFirstStep(path);
    assert.equal(run.code, 1, run.err);
    assert.equal(run.out, "", "no 'Pruned' line: the error says what was done");
    const lastLine = run.err.slice(run.err.lastIndexOf("\x1b[K") + 3);
    const stopped = new RegExp(
      `^hermes-state: pruned ([\\d,]+) of 600 sessions, each whole with its messages, then ` +
        `stopped: database is locked by another process \\(waited \\d+ s\\): ${path}; once it is ` +
        `free, the same prune again finishes\\n$`,
    ).exec(lastLine);
    assert.ok(stopped !== null, JSON.stringify(run.err));
    const pruned = Number(stopped[1].replaceAll(",", ""));
    assert.ok(pruned > 0 && pruned < 600, run.err);
    // What it said went, and no more: the oldest first, each with its messages.
    const left = await withDb(path, (db) => ({
      sessions: db.sessionCount(),
      messages: db.messageCount(),
      oldestLeft: db.getSession(`s${pruned}`)?.id,
    }));
    assert.deepEqual(left, {
      sessions: 600 - pruned,
      messages: 600 - pruned,
      oldestLeft: `s${pruned}`,
    });
    const again = await runCli(["--db", path, "prune", "--yes"], { now: NOW });
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, `Pruned ${600 - pruned} sessions.\n`);
  });

  test("--json prints {pruned, not_pruned}", async () => {
    const path = await sixHundredSessions();
    const run = await pruneLockedAfterFirstStep(path, ["--json"]);
    assert.equal(run.code, 1, run.err);
    const json = JSON.parse(run.out);
    const left = await withDb(path, (db) => db.sessionCount());
    assert.deepEqual(json, { pruned: 600 - left, not_pruned: left });
    assert.ok(left > 0 && left < 600, run.out);
    assert.match(run.err, /hermes-state: pruned [\d,]+ of 600 sessions, each whole/);
  });

  test("a lock met before the first step, --ghosts too: nothing was pruned", async () => {
    const path = await buildDb((db, clock) => {
      clock.now = NOW - 300 * 86400;
      db.createSession("old", "cli");
      db.endSession("old", "cli_close");
      db.createSession("ghost", "tui");
      db.endSession("ghost", "cli_close");
    });
    for (const argv of [["prune", "--yes"], ["prune", "--ghosts", "--yes"]]) {
      const holder = await LockHolder.on(path);
      holder.take();
      let run;
      try {
        run = await runCli(["--db", path, "--json", ...argv], { now: NOW, env: ENV });
      } finally {
        holder.release();
      }
      assert.equal(run.code, 1, run.err);
      assert.equal(
        waitedAnyTime(run.err),
        `hermes-state: nothing was pruned: database is locked by another process (waited 0 s): ` +
          `${path} (once it is free, run the same prune again)\n`,
      );
      assert.deepEqual(JSON.parse(run.out), { pruned: 0, not_pruned: argv.length === 2 ? 2 : 1 });
    }
    assert.deepEqual(await present(path, ["old", "ghost"]), ["old", "ghost"]);
  });
});
