/**
 * `show --follow`: new messages printed as another connection writes them,
 * the end of the session and its resumption said, a compression followed
 * into its continuation, a rewritten transcript shown again, a deleted
 * session ending the run; Ctrl-C stops it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, rmSync } from "node:fs";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import {
  type InterruptibleIo,
  interruptibleIo,
  type RecordingIo,
  runCli,
  V11,
  v11Copy,
} from "./_cli_io.ts";
import { copyFixture, rawOpen, waitUntil } from "./_helpers.ts";

/** Runs `main(argv)` with an Io whose Ctrl-C the test sends. */
function following(argv: string[]): { io: InterruptibleIo; run: Promise<number> } {
  const io = interruptibleIo();
  return { io, run: main(argv, io) };
}

/** Waits until the output holds `text`. */
async function printed(io: RecordingIo, text: string): Promise<void> {
  await waitUntil(() => io.out.includes(text), JSON.stringify(text));
}

/** `show --follow` of the live session of a v11 copy, once its transcript is printed, and a backup. */
async function followingWithBackup() {
  const path = v11Copy();
  const backup = `${path}.backup`;
  copyFileSync(path, backup);
  const { io, run } = following(["--db", path, "show", V11.live, "--follow=0.05"]);
  await printed(io, "Run B is faster");
  return { path, backup, io, run };
}

/** Appends a message to the live session, as a gateway would, and waits until it is printed. */
async function appendedAndPrinted(path: string, io: RecordingIo, content: string): Promise<void> {
  {
    using db = await SessionDB.open({ path });
    db.appendMessage(V11.live, { role: "user", content });
  }
  await printed(io, content);
}

describe("show --follow", () => {
  test(
    "prints new messages as they come, says the end, and follows a compression into its continuation",
    {
      timeout: 30_000,
    },
    async () => {
      const path = v11Copy();
      const { io, run } = following(["--db", path, "show", V11.live, "--follow=0.05"]);
      await printed(io, "Run B is faster");
      const db = await SessionDB.open({ path });
      try {
        db.appendMessage(V11.live, { role: "user", content: "are you still there?" });
        await printed(io, "are you still there?");
        db.appendMessage(V11.live, { role: "assistant", content: "Yes, following along." });
        await printed(io, "Yes, following along.");
        db.endSession(V11.live, "compression");
        db.createSession("continued_1", "cli", { parentSessionId: V11.live });
        db.appendMessage("continued_1", {
          role: "user",
          content: "[CONTEXT COMPACTION] the summary",
        });
        await printed(io, "the summary");
        db.appendMessage("continued_1", { role: "assistant", content: "in the new session" });
        await printed(io, "in the new session");
        db.deleteSession("continued_1");
      } finally {
        db.close();
      }
      assert.equal(await run, 0, "a deleted session ends the run");
      const out = io.out;
      const order = [
        "Run B is faster",
        "are you still there?",
        "Yes, following along.",
        "── ended ",
        "· compression ──",
        "── continued in continued_1 ──",
        "[CONTEXT COMPACTION] the summary",
        "in the new session",
        "── session continued_1 was deleted ──",
      ].map((text) => out.indexOf(text));
      assert.ok(order.every((at) => at >= 0), out);
      assert.deepEqual([...order].sort((a, b) => a - b), order, out);
      assert.equal(out.split("are you still there?").length, 2, "each message printed once");
      assert.match(
        out,
        /\n\n── user · [^\n]+\nare you still there\?\n/,
        "a blank line before each",
      );
    },
  );

  test(
    "shows a rewritten transcript again, says when the session ends and is resumed; Ctrl-C stops it",
    {
      timeout: 30_000,
    },
    async () => {
      const path = v11Copy();
      const { io, run } = following([
        "--db",
        path,
        "show",
        V11.live,
        "--follow=0.05",
      ]);
      await printed(io, "Run B is faster");
      const db = await SessionDB.open({ path });
      try {
        db.replaceMessages(V11.live, [
          { role: "user", content: "the first question, kept" },
          { role: "assistant", content: "a shorter answer" },
        ]);
        await printed(io, "a shorter answer");
        db.endSession(V11.live, "user_exit");
        await printed(io, "· user_exit ──");
        db.reopenSession(V11.live);
        await printed(io, "── resumed ──");
        db.appendMessage(V11.live, { role: "user", content: "back again" });
        await printed(io, "back again");
      } finally {
        db.close();
      }
      assert.ok(io.listening, "--follow listens for Ctrl-C");
      io.interrupt();
      assert.equal(await run, 0);
      assert.ok(!io.listening, "it stopped listening");
      assert.match(
        io.out,
        /── the transcript changed \(messages taken back or rewritten\); all of it again ──\n\n── user[^\n]+\nthe first question, kept\n/,
      );
      assert.equal(io.out.split("a shorter answer").length, 2, "the rewrite printed once");
    },
  );

  test(
    "a newer Hermes's rewind (rows taken back in place, no count moved) shows the transcript again",
    {
      timeout: 30_000,
    },
    async () => {
      const path = copyFixture("hermes-v21.db");
      const id = "20260501_090000_live01";
      const { io, run } = following(["--db", path, "show", id, "--follow=0.05"]);
      await printed(io, "12 tables migrated");
      {
        // As that Hermes does: the last answer taken back, then a new one appended and counted.
        using raw = await rawOpen(path);
        raw.exec(`UPDATE messages SET active = 0 WHERE id = 4;
        INSERT INTO messages (session_id, role, content, timestamp, active, compacted)
          VALUES ('${id}', 'assistant', 'the migration is still running', 1777630000, 1, 0);
        UPDATE sessions SET message_count = message_count + 1 WHERE id = '${id}'`);
      }
      await printed(io, "the migration is still running");
      io.interrupt();
      assert.equal(await run, 0);
      const again = io.out.split("── the transcript changed (messages taken back or rewritten)");
      assert.equal(again.length, 2, io.out);
      assert.doesNotMatch(
        again[1],
        /12 tables migrated/,
        "the message taken back is not shown again",
      );
      assert.match(again[1], /Deploy the chat service[\s\S]+the migration is still running/);
    },
  );

  test("after a backup is restored over the file, the messages written then are printed", {
    timeout: 30_000,
  }, async () => {
    // Their ids are those of the messages lost with the restore, which the newest id shown kept
    // back: nothing was printed until the ids passed it.
    const { path, backup, io, run } = await followingWithBackup();
    {
      using db = await SessionDB.open({ path });
      for (const n of [1, 2, 3]) db.appendMessage(V11.live, { role: "user", content: `lost ${n}` });
    }
    await printed(io, "lost 3");
    copyFileSync(backup, path);
    for (const sidecar of ["-wal", "-shm"]) rmSync(`${path}${sidecar}`, { force: true });
    await printed(io, "── the transcript changed");
    await appendedAndPrinted(path, io, "after the restore");
    io.interrupt();
    assert.equal(await run, 0);
  });

  test("a file gone for a moment (a restore by rm, then cp) is said once, and followed again", {
    timeout: 30_000,
  }, async () => {
    // The run ended with "Cannot open database …: no such file", exit 1.
    const { path, backup, io, run } = await followingWithBackup();
    for (const file of ["", "-wal", "-shm"]) rmSync(`${path}${file}`, { force: true });
    await printed(io, "no such file");
    await new Promise((resolve) => setTimeout(resolve, 200));
    copyFileSync(backup, path);
    await printed(io, "── the file can be read again ──");
    await appendedAndPrinted(path, io, "after the file came back");
    io.interrupt();
    assert.equal(await run, 0);
    // Said once while it lasts; a look meanwhile read on from the file taken away, as if back.
    assert.equal(io.out.split("no such file").length, 2, io.out);
    assert.equal(io.out.split("── the file can be read again ──").length, 2, io.out);
  });

  test("a continuation that ends is said to end, as the session it continues", {
    timeout: 30_000,
  }, async () => {
    const path = v11Copy();
    const { io, run } = following(["--db", path, "show", V11.live, "--follow=0.05"]);
    await printed(io, "Run B is faster");
    {
      using db = await SessionDB.open({ path });
      db.endSession(V11.live, "compression");
      db.createSession("continued_2", "cli", { parentSessionId: V11.live });
      db.appendMessage("continued_2", { role: "user", content: "the summary, then goodbye" });
      db.endSession("continued_2", "cli_close");
    }
    await printed(io, "· cli_close ──");
    io.interrupt();
    assert.equal(await run, 0);
    assert.ok(io.out.indexOf("── continued in continued_2 ──") < io.out.indexOf("· cli_close ──"));
  });

  test("a compression chain is followed one session at a time, none skipped", {
    timeout: 30_000,
  }, async () => {
    const { io, run } = following([
      "--db",
      v11Copy(),
      "show",
      V11.compressionRoot,
      "--follow=0.05",
    ]);
    await printed(io, `── continued in ${V11.compressionTip} ──`);
    io.interrupt();
    assert.equal(await run, 0);
    const mid = io.out.indexOf(`── continued in ${V11.compressionMid} ──`);
    const tip = io.out.indexOf(`── continued in ${V11.compressionTip} ──`);
    assert.ok(mid > 0 && tip > mid, io.out);
    assert.ok(
      io.out.slice(mid, tip).includes("\n── user · "),
      "the middle session's transcript between the two",
    );
  });

  test("--follow takes a positive number of seconds, and prints text only", async () => {
    const path = v11Copy();
    for (
      const [args, message] of [
        [["--follow=0"], /--follow must be a positive number of seconds, got "0"/],
        [["--follow=soon"], /--follow must be a positive number of seconds, got "soon"/],
        [["--follow", "--json"], /--follow prints text/],
      ] as const
    ) {
      const run = await runCli(["--db", path, "show", V11.live, ...args]);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.err, message);
      assert.equal(run.out, "");
    }
    // The seconds after a space are read as part of the session's name: the error says how.
    const spaced = await runCli(["--db", path, "show", V11.live, "--follow", "5"]);
    assert.equal(spaced.code, 1);
    assert.equal(
      spaced.err,
      `hermes-state: Session '${V11.live} 5' not found (give an id, a unique id prefix or a title); ` +
        "for a pause of 5 s, write --follow=5\n",
    );
    // So are the seconds written before the session, as `tail -f`'s and `watch -n`'s users do.
    const before = await runCli(["--db", path, "show", "--follow", "5", V11.live]);
    assert.equal(before.code, 1);
    assert.equal(
      before.err,
      `hermes-state: Session '5 ${V11.live}' not found (give an id, a unique id prefix or a title); ` +
        "for a pause of 5 s, write --follow=5\n",
    );
  });
});
