// Counts the CLI prints in prose carry thousands separators, as import and prune print them.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildDb, runCli } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";

/** A file of 1,000 sessions, one message each. */
function thousandSessions(): Promise<string> {
  return buildDb((db, clock) => {
    for (let i = 0; i < 1000; i++) {
      const id = `s${String(i).padStart(4, "0")}`;
      db.createSession(id, "cli");
      db.appendMessage(id, { role: "user", content: `message ${i}` });
      clock.now += 1;
    }
  });
}

describe("counts in prose", () => {
  test("export and copy print 1,000, their --json the plain number", async () => {
    const path = await thousandSessions();
    const dir = tempDir();
    const exported = await runCli(["--db", path, "export", join(dir, "all.jsonl")]);
    assert.equal(exported.code, 0, exported.err);
    assert.equal(exported.out, `Exported 1,000 sessions to ${join(dir, "all.jsonl")}\n`);
    const json = await runCli(["--db", path, "--json", "export", join(dir, "again.jsonl")]);
    assert.equal(JSON.parse(json.out).exported, 1000);
    const copied = await runCli(["copy", path, join(dir, "copy.db")]);
    assert.equal(copied.code, 0, copied.err);
    assert.match(
      copied.out,
      /^Copied 1,000 sessions, skipped 0 already present \(1,000 messages written\)/,
    );
    const again = await runCli(["copy", path, join(dir, "copy.db")]);
    assert.match(again.out, /skipped 1,000 already present \(0 messages written\)/);
  });
});
