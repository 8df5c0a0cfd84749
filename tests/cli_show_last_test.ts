/**
 * `show --last N`: only the end of a transcript (as `tail -n`), with how
 * many messages were left out said above it; hidden rows of a newer Hermes
 * are not counted among the N unless `--all`; with `--follow`, the messages
 * written after it, each printed once; bad values and `--json` refused.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { buildDb, interruptibleIo, type RecordingIo, runCli } from "./_cli_io.ts";
import { copyFixture, rawOpen, waitUntil } from "./_helpers.ts";

/** A file with session `s` of `count` messages, `message 1` to `message N`, a second apart. */
function sessionOf(count: number): Promise<string> {
  return buildDb((db, clock) => {
    db.createSession("s", "cli");
    for (let i = 1; i <= count; i++) {
      clock.now += 1;
      db.appendMessage("s", { role: i % 2 ? "user" : "assistant", content: `message ${i}` });
    }
  });
}

/** The numbers of the `message N` lines printed, in order. */
function numbersIn(out: string): number[] {
  return [...out.matchAll(/^message (\d+)$/gm)].map((match) => Number(match[1]));
}

/** Waits until the output holds `text`. */
async function printed(io: RecordingIo, text: string): Promise<void> {
  await waitUntil(() => io.out.includes(text), JSON.stringify(text));
}

describe("show --last", () => {
  test("prints the last N messages and says how many came before", async () => {
    const path = await sessionOf(5);
    const run = await runCli(["--db", path, "show", "s", "--last", "2"]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(numbersIn(run.out), [4, 5]);
    assert.match(run.out, /\(3 earlier messages not shown: --last 2\)/);
    assert.match(run.out, /5 messages/, "the details still count them all");
  });

  test("more than the session holds prints all of it, without a note", async () => {
    const path = await sessionOf(3);
    const run = await runCli(["--db", path, "show", "s", "--last", "10"]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(numbersIn(run.out), [1, 2, 3]);
    assert.doesNotMatch(run.out, /not shown/);
  });

  test("0 prints none, saying how many there are; an empty session says it has none", async () => {
    const path = await sessionOf(1);
    const none = await runCli(["--db", path, "show", "s", "--last", "0"]);
    assert.equal(none.code, 0, none.err);
    assert.deepEqual(numbersIn(none.out), []);
    assert.match(none.out, /\(1 earlier message not shown: --last 0\)/);
    assert.doesNotMatch(none.out, /no messages/);
    const empty = await buildDb((db) => db.createSession("e", "cli"));
    const run = await runCli(["--db", empty, "show", "e", "--last", "3"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /\(no messages\)/);
  });

  test("hidden rows of a newer Hermes are not among the N, unless --all", async () => {
    const path = copyFixture("hermes-v21.db");
    {
      using raw = await rawOpen(path);
      raw.exec("ALTER TABLE messages ADD COLUMN display_kind TEXT");
      raw.exec(`INSERT INTO sessions (id, source, started_at) VALUES ('h', 'cli', 1777600000)`);
      const insert = raw.prepare(
        `INSERT INTO messages (session_id, role, content, timestamp, display_kind)
         VALUES ('h', 'user', ?, ?, ?)`,
      );
      for (let i = 1; i <= 6; i++) {
        insert.run(`message ${i}`, 1777600000 + i, i >= 5 ? "hidden" : null);
      }
    }
    const shown = await runCli(["--db", path, "show", "h", "--last", "2"]);
    assert.equal(shown.code, 0, shown.err);
    assert.deepEqual(numbersIn(shown.out), [3, 4]);
    assert.match(shown.out, /\(2 earlier messages not shown: --last 2\)/);
    const all = await runCli(["--db", path, "show", "h", "--last", "2", "--all"]);
    assert.equal(all.code, 0, all.err);
    assert.deepEqual(numbersIn(all.out), [5, 6]);
    assert.match(all.out, /\(4 earlier messages not shown: --last 2\)/);
  });

  test("a bad count and --json are usage errors naming them", async () => {
    const path = await sessionOf(2);
    for (const value of ["-1", "two", "1.5"]) {
      const run = await runCli(["--db", path, "show", "s", "--last", value]);
      assert.equal(run.code, 2, `${value}: ${run.out}`);
      assert.match(
        run.err,
        new RegExp(
          `--last must be a whole number of at least 0, got .*${value.replace(".", "\\.")}`,
        ),
      );
    }
    const json = await runCli(["--db", path, "show", "s", "--last", "1", "--json"]);
    assert.equal(json.code, 2);
    assert.match(json.err, /--last/);
  });

  test("with --follow, the messages written after it are printed once each", {
    timeout: 30_000,
  }, async () => {
    const path = await sessionOf(6);
    const io = interruptibleIo();
    const run = main(["--db", path, "show", "s", "--last", "1", "--follow=0.05"], io);
    await printed(io, "message 6");
    const db = await SessionDB.open({ path });
    try {
      db.appendMessage("s", { role: "user", content: "message 7" });
      await printed(io, "message 7");
      db.appendMessage("s", { role: "assistant", content: "message 8" });
      await printed(io, "message 8");
    } finally {
      db.close();
    }
    io.interrupt();
    assert.equal(await run, 0);
    assert.deepEqual(numbersIn(io.out), [6, 7, 8], io.out);
    assert.match(io.out, /\(5 earlier messages not shown: --last 1\)/);
  });

  test("with --follow, a transcript rewritten is printed again as its last N", {
    timeout: 30_000,
  }, async () => {
    const path = await sessionOf(6);
    const io = interruptibleIo();
    const run = main(["--db", path, "show", "s", "--last", "2", "--follow=0.05"], io);
    await printed(io, "message 6");
    const db = await SessionDB.open({ path });
    try {
      db.replaceMessages("s", [
        { role: "user", content: "message 1" },
        { role: "assistant", content: "message 2" },
        { role: "user", content: "message 3" },
      ]);
      await printed(io, "its last messages again");
      await printed(io, "message 3");
    } finally {
      db.close();
    }
    io.interrupt();
    assert.equal(await run, 0);
    assert.deepEqual(numbersIn(io.out), [5, 6, 2, 3], io.out);
  });
});
