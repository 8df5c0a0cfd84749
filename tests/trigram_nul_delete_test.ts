/**
 * SQLite up to 3.40 indexed a message holding U+0000 in the trigram table
 * only up to that character; a newer SQLite removes such a row by its whole
 * text, and once the index's totals cannot cover that, FTS5 fails the
 * delete as a malformed file. hermes-v11.db holds four such messages, three
 * of them in one session: with every other session gone, deleting it fails so. The write changes
 * nothing, and its error names the condition and `doctor --fix` (which
 * rebuilds the index), not damage and `recover`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../mod.ts";
import { StorageError } from "../lib/core/storage_error.ts";
import { doctor } from "../lib/health/doctor.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

/** The session of hermes-v11.db with three messages holding U+0000, indexed by SQLite 3.40. */
const NUL_SESSION = "20260422_090717_50093a";

/** A copy of hermes-v11.db left with that session only. */
async function onlyNulSession(): Promise<string> {
  const path = copyFixture("hermes-v11.db");
  using db = await SessionDB.open({ path });
  const ids = db.searchSessions({ limit: 1_000 }).map((row) => String(row.id));
  for (const id of ids.filter((id) => id !== NUL_SESSION)) db.deleteSession(id);
  assert.deepEqual(db.searchSessions({ limit: 1_000 }).map((row) => row.id), [NUL_SESSION]);
  return path;
}

/** Rows of each table that a failed write must leave as they were. */
async function counts(path: string): Promise<number[]> {
  using db = await rawOpen(path, true);
  return ["sessions", "messages", "messages_fts_trigram"].map((table) =>
    Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()!.n)
  );
}

describe("deleting messages the trigram index holds only up to their NUL (SQLite 3.40)", () => {
  test("deleteSession fails naming the condition and doctor --fix, and changes nothing", async () => {
    const path = await onlyNulSession();
    const before = await counts(path);
    {
      using db = await SessionDB.open({ path });
      assert.throws(() => db.deleteSession(NUL_SESSION), (error) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.kind, "other");
        assert.match(
          error.message,
          /^Cannot write: the trigram search index \(messages_fts_trigram\) was written by SQLite 3\.40 or older, which indexed \d+ messages? holding a NUL character only up to it, and SQLite [\d.]+ cannot remove such a message from it; nothing was changed\. Rebuild that index with "hermes-state --db .+ doctor --fix" \(writers may keep running\), then try again/,
        );
        assert.match(String((error.cause as Error).message), /malformed/);
        return true;
      });
    }
    assert.deepEqual(await counts(path), before);
  });

  test("after doctor --fix the same delete succeeds and leaves a sound index", async () => {
    const path = await onlyNulSession();
    const fixed = await doctor(path, { fix: true });
    assert.ok(fixed.repairs.some((repair) => repair.name === "fts:messages_fts_trigram"));
    {
      using db = await SessionDB.open({ path });
      assert.equal(db.deleteSession(NUL_SESSION), true);
    }
    assert.deepEqual(await counts(path), [0, 0, 0]);
    using db = await rawOpen(path);
    db.exec("INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('integrity-check')");
  });

  test("the CLI's delete says the same, not that the file is damaged, and exits 1", async () => {
    const path = await onlyNulSession();
    const before = await counts(path);
    const run = await runCli(["--db", path, "delete", NUL_SESSION, "--yes"]);
    assert.equal(run.code, 1);
    assert.match(run.err, /doctor --fix" \(writers may keep running\), then try again/);
    assert.doesNotMatch(run.err, /is damaged \(|recover/);
    assert.deepEqual(await counts(path), before);
  });
});
