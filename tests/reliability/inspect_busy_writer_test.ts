/**
 * `info --full` (the store's `inspect`; `doctor` runs the same check) on a
 * file a writer commits to every few milliseconds, in WAL mode (Hermes) and
 * in rollback-journal mode (an older Hermes). FTS5 keeps an index's
 * structure from one transaction to the next, and the integrity pragma's
 * FTS5 part used it unrefreshed: after any commit since the last read it
 * reported damage ("fts5: checksum mismatch", "corruption found reading
 * blob") on a sound file. And the inspection's statements run in one read,
 * so in rollback-journal mode a commit cannot come between two of them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openStore } from "../../mod.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { Worker } from "./_runtimes.ts";

/** Commits a message every few milliseconds until killed; says `writing` after the first. */
const PYTHON_WRITER = `
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=30)
session = db.execute("SELECT id FROM sessions LIMIT 1").fetchone()[0]
n = 0
while True:
    with db:
        db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
                   (session, "hello %d from an older Hermes" % n, time.time()))
        db.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session,))
    if n == 0:
        print("writing", flush=True)
    n += 1
    time.sleep(0.003)
`;

for (const mode of ["wal", "delete"]) {
  test(`inspect of a ${mode}-mode file beside a busy Python writer answers, and finds no false damage`, async () => {
    const path = copyFixture("hermes-v11.db");
    const raw = await rawOpen(path);
    raw.exec(`PRAGMA journal_mode = ${mode}`);
    raw.close();
    // Python's sqlite3 as Hermes writes: a deferred transaction per message, a few ms apart.
    const writer = new Worker(
      "deno" as never,
      spawn("python3", ["-c", PYTHON_WRITER, path], { stdio: ["ignore", "pipe", "pipe"] }),
    );
    try {
      await writer.waitFor((line) => line === "writing", "its first commit");
      // Given up on after 4 s (the default is 15 s): it answers in well under a second.
      await using store = await openStore(path, { readonly: true, retry: { timeoutMs: 4000 } });
      for (let round = 0; round < 3; round++) {
        const info = await store.inspect({ searchIndexes: true });
        assert.equal(info.journalMode, mode);
        // FTS5 read the index as another commit left it, not as it was when last read.
        assert.deepEqual(info.damage, []);
      }
      // The writer went on meanwhile (it waited for each check, within its timeout).
      assert.equal(writer.stderr, "");
    } finally {
      writer.kill("SIGTERM");
      await writer.exited;
    }
  });
}
