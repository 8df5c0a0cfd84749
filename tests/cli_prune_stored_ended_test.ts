import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { insertRows } from "./_raw_rows.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** A store with two old ended sessions: one whose `ended_at` another writer stored as text. */
async function storeWithTextEnd(): Promise<string> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  await insertRows(path, [
    { id: "s_text", started_at: 1_000_000, ended_at: 1_000_100, end_reason: "cli_close" },
    { id: "s_number", started_at: 1_000_200, ended_at: 1_000_300, end_reason: "cli_close" },
  ]);
  using raw = await rawOpen(path);
  raw.prepare("UPDATE sessions SET ended_at = ? WHERE id = ?").run("2026-01-02 bad", "s_text");
  return path;
}

describe("prune --dry-run --json shows the times the file holds", () => {
  test("an ended_at stored as text is shown as that text, as list --json shows it", async () => {
    const path = await storeWithTextEnd();
    const run = await runCli(["--db", path, "--json", "prune", "--dry-run", "--older-than", "1"]);
    assert.equal(run.code, 0, run.err);
    const report = JSON.parse(run.out);
    assert.equal(report.would_prune, 2);
    const ended = Object.fromEntries(
      report.sessions.map((s: { id: string; ended_at: unknown }) => [s.id, s.ended_at]),
    );
    assert.deepEqual(ended, { s_text: "2026-01-02 bad", s_number: 1_000_300 });
    const list = await runCli(["--db", path, "--json", "list", "--all"]);
    const listed = JSON.parse(list.out);
    const rows: { id: string; ended_at: unknown }[] = Array.isArray(listed)
      ? listed
      : listed.sessions;
    assert.equal(rows.find((s) => s.id === "s_text")?.ended_at, ended.s_text);
  });
});

describe("pruneCandidates() gives the times the file holds", () => {
  test("an ended_at stored as text comes back as that text, not NaN, as getSession() gives it", async () => {
    const path = await storeWithTextEnd();
    const db = await SessionDB.open({ path, readonly: true });
    try {
      const candidates = db.pruneCandidates({ olderThanDays: 1 });
      const byId = Object.fromEntries(candidates.map((c) => [c.id, c]));
      assert.equal(byId.s_text.ended_at as unknown, "2026-01-02 bad");
      assert.equal(byId.s_text.ended_at as unknown, db.getSession("s_text")?.ended_at);
      assert.equal(byId.s_number.ended_at, 1_000_300);
      assert.equal(byId.s_text.started_at, 1_000_000);
    } finally {
      db.close();
    }
  });
});
