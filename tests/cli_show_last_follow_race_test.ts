/**
 * `show --last N --follow` started while another process goes on writing
 * the session (a running gateway): the transcript printed before the
 * follow is the last N messages, whatever was written meanwhile. A message
 * written between its reads was left out of the N (printed later by the
 * follow), so `--last 3` printed two, or one, and the one before them was
 * counted among the "earlier messages not shown".
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { main } from "../lib/cli/main.ts";
import { buildDb, type RecordingIo, recordingIo } from "./_cli_io.ts";
import { rawOpen } from "./_helpers.ts";

/** A Python writer appending `message N` rows to session `s` as fast as it can, one write each. */
const WRITER = [
  "import sqlite3, sys, time",
  "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)",
  "i = 11",
  "while True:",
  "    c.execute('BEGIN IMMEDIATE')",
  '    c.execute("INSERT INTO messages (session_id, role, content, timestamp)' +
  " VALUES ('s', 'user', ?, ?)\", ('message %d' % i, time.time()))",
  "    c.execute(\"UPDATE sessions SET message_count = message_count + 1 WHERE id = 's'\")",
  "    c.execute('COMMIT')",
  "    i += 1",
];

/** The numbers of the `message N` lines printed, in order. */
function numbersIn(out: string): number[] {
  return [...out.matchAll(/^message (\d+)$/gm)].map((match) => Number(match[1]));
}

/**
 * A recording Io whose Ctrl-C comes the moment the command listens for it: a follow stops
 * before its first pause, having printed its start (a Ctrl-C sent during the pause, as a
 * person's is, is noticed only at its next tenth of a second).
 */
function stoppedOnceListening(): RecordingIo {
  const io = recordingIo();
  io.onInterrupt = (listener) => {
    listener("SIGINT");
    return () => {};
  };
  return io;
}

let path: string;
let writer: ChildProcess;

before(async () => {
  path = await buildDb((db, clock) => {
    db.createSession("s", "cli");
    for (let i = 1; i <= 10; i++) {
      clock.now += 1;
      db.appendMessage("s", { role: "user", content: `message ${i}` });
    }
  });
  writer = spawn("python3", ["-c", WRITER.join("\n"), path], { stdio: "ignore" });
  // The runs take milliseconds each: they start once the writer is writing.
  using db = await rawOpen(path, true);
  const written = db.prepare("SELECT count(*) AS n FROM messages WHERE session_id = 's'");
  const started = Date.now();
  while (Number(written.get()!.n) < 20) {
    assert.ok(Date.now() - started < 30_000, "the writer wrote nothing in 30 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
});

after(() => {
  writer.kill();
});

describe("show --last N --follow while the session is written", () => {
  test("prints the last N messages each time, none twice", { timeout: 120_000 }, async () => {
    const firsts: number[] = [];
    for (let run = 0; run < 60; run++) {
      const io = stoppedOnceListening();
      // A follow that does not look again during the test: what is printed is the start alone.
      const done = main(["--db", path, "show", "s", "--last", "3", "--follow=600"], io);
      assert.equal(await done, 0, io.err);
      const numbers = numbersIn(io.out);
      assert.equal(numbers.length, 3, `run ${run}: ${numbers.join(", ")}`);
      assert.deepEqual(numbers, [numbers[0], numbers[0] + 1, numbers[0] + 2], `run ${run}`);
      const note = io.out.match(/\(([\d,]+) earlier messages not shown/);
      assert.equal(Number(note?.[1].replaceAll(",", "")), numbers[0] - 1, `run ${run}`);
      firsts.push(numbers[0]);
    }
    // The writer went on writing while the runs ran: they saw the session grow.
    assert.ok(new Set(firsts).size > 10, `the runs saw ${new Set(firsts).size} ends of it`);
  });
});
