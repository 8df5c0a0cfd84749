/**
 * `show` of the root of a compression chain of 10,000 sessions. The tip is
 * found by walks of 100 continuations, 100 walks at most; the 100th ended on
 * the live end of a chain of 9,999 continuations, and `show` said
 * `Continued in s9999 (the chain goes on past it)`, of a session with no
 * continuation. It asks once more now before saying the chain goes on.
 * And an end of the chain that has ended (closed by the user, not
 * compressed) was called "the live end".
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { openStore } from "../lib/open_store.ts";

/** A file holding the compression chain s0 → s1 → … → s`last`, written straight in SQL. */
async function chainFile(last: number): Promise<string> {
  const path = tempDbPath();
  {
    await using store = await openStore(path);
    await store.createSession("other", "cli");
  }
  using raw = await rawOpen(path);
  raw.exec("BEGIN");
  const insert = raw.prepare(
    "INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id) " +
      "VALUES (?, 'cli', ?, ?, ?, ?)",
  );
  for (let i = 0; i <= last; i++) {
    const at = 1_767_000_000 + i;
    const ended = i < last ? [at + 0.5, "compression"] : [null, null];
    insert.run(`s${i}`, at, ...ended, i === 0 ? null : `s${i - 1}`);
  }
  raw.exec("COMMIT");
  return path;
}

/** The `Continued in` line `show s0` prints on the file. */
async function continuedIn(path: string): Promise<string | undefined> {
  const run = await runCli(["--db", path, "show", "s0", "--last", "0"]);
  assert.equal(run.code, 0, run.err);
  return run.out.split("\n").find((line) => line.startsWith("Continued in"));
}

describe("show of a chain as long as the walks for its tip", () => {
  test("names the live end of 9,999 continuations as the live end", async () => {
    assert.equal(
      await continuedIn(await chainFile(9999)),
      "Continued in  s9999 (the live end of the chain)",
    );
  });

  test("says the chain goes on past the 10,000th", async () => {
    assert.equal(
      await continuedIn(await chainFile(10_001)),
      "Continued in  s10000 (the chain goes on past it)",
    );
  });

  test("calls an end of the chain that has ended so, not live", async () => {
    const path = await chainFile(3);
    {
      using raw = await rawOpen(path);
      raw.exec(
        "UPDATE sessions SET ended_at = 1767000010, end_reason = 'cli_close' WHERE id = 's3'",
      );
    }
    assert.equal(await continuedIn(path), "Continued in  s3 (the end of the chain, ended)");
  });
});
