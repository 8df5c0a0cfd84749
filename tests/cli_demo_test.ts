import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { runCli, withDb } from "./_cli_io.ts";

describe("demo", () => {
  test("demo PATH builds a varied database and shows list and search on it", async () => {
    const path = join(tempDir(), "demo.db");
    const run = await runCli(["demo", path]);
    assert.equal(run.code, 0, run.err);
    assert.ok(run.out.startsWith(`Demo database: ${path}\n\n$ hermes-state list\nTitle `));
    assert.match(run.out, /\n\$ hermes-state search docker --limit 3\n1\. /);
    assert.match(run.out, />>>docker<<</);
    assert.match(run.out, /\nTry next:\n {2}hermes-state --db \S+ show /);
    const facts = await withDb(path, (db) => {
      const sessions = db.searchSessions({ limit: 100 });
      const tip = sessions.find((s) => s.title === "Refactor the auth middleware #3");
      return {
        sources: [...new Set(sessions.map((s) => s.source))].sort(),
        chain: tip ? db.getAncestors(tip.id).map((s) => s.end_reason) : [],
        cjk: db.searchMessages("记忆").length,
        toolCalls: sessions.reduce((n, s) => n + s.tool_call_count, 0),
        titled: sessions.filter((s) => s.title).length,
      };
    });
    assert.deepEqual(facts.sources, ["acp", "cli", "cron", "discord", "telegram", "tool", "tui"]);
    assert.deepEqual(facts.chain, [null, "compression", "compression"]);
    assert.ok(facts.cjk > 0);
    assert.ok(facts.toolCalls >= 5);
    assert.ok(facts.titled >= 8);
  });

  test("demo without PATH writes to a new temporary folder", async () => {
    const run = await runCli(["demo", "--json"]);
    assert.equal(run.code, 0, run.err);
    const report = JSON.parse(run.out);
    try {
      assert.ok(existsSync(report.path));
      assert.equal(report.sessions, 12);
      assert.ok(report.messages > 30);
    } finally {
      rmSync(dirname(report.path), { recursive: true, force: true });
    }
  });

  test("demo refuses a PATH that exists", async () => {
    const path = join(tempDir(), "taken.db");
    writeFileSync(path, "mine");
    const run = await runCli(["demo", path]);
    assert.equal(run.code, 1);
    assert.match(run.err, /already exists: the demo writes a new file\n$/);
  });
});
