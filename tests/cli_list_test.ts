import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, FIXTURE_NOW, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";

describe("list", () => {
  test("list prints the titled layout of hermes sessions list, tool sessions hidden", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "list", "--limit", "100"]);
    assert.equal(run.code, 0);
    const lines = run.out.trimEnd().split("\n");
    assert.equal(
      lines[0],
      `${"Title".padEnd(32)} ${"Preview".padEnd(40)} ${"Last Active".padEnd(13)} ID`,
    );
    assert.equal(lines[1], "─".repeat(110));
    assert.doesNotMatch(run.out, new RegExp(V11.toolPaperclip));
    // The live session's last message was an hour before "now".
    const live = lines.find((line) => line.endsWith(V11.live));
    assert.ok(live);
    assert.match(live, /^— {31} .{40} 1h ago {7} 20260429_090322_3762ca$/u);
    // A compression chain shows as its tip, not its root.
    assert.ok(
      lines.some((line) => line.endsWith(V11.compressionTip) && line.startsWith("my project #3")),
    );
    assert.ok(!lines.some((line) => line.endsWith(V11.compressionRoot)));
    const expected = await withDb(
      path,
      (db) => db.listSessionsRich({ excludeSources: ["tool"], limit: 100 }).length,
    );
    assert.equal(lines.length, expected + 2);
  });

  test("list --source tool shows the tool sessions it hides by default", async () => {
    const run = await runCli(["--db", v11Copy(), "list", "--source", "tool"]);
    assert.equal(run.code, 0);
    assert.match(run.out, new RegExp(V11.toolPaperclip));
    assert.equal(run.out.trimEnd().split("\n").length, 2 + 2);
  });

  test("list --all includes child sessions", async () => {
    const path = v11Copy();
    const plain = await runCli(["--db", path, "list", "--limit", "100"]);
    const all = await runCli(["--db", path, "list", "--limit", "100", "--all"]);
    assert.doesNotMatch(plain.out, new RegExp(V11.delegateChild));
    assert.match(all.out, new RegExp(V11.delegateChild));
  });

  test("list --json prints what listSessionsRich returns", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "list", "--limit", "5", "--offset", "2"]);
    const expected = await withDb(
      path,
      (db) => db.listSessionsRich({ excludeSources: ["tool"], limit: 5, offset: 2 }),
    );
    assert.deepEqual(JSON.parse(run.out), JSON.parse(JSON.stringify(expected)));
  });

  test("list --order last-active puts the most recently active session first", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "list", "--order", "last-active"]);
    const rows = JSON.parse(run.out) as { last_active: number }[];
    const expected = await withDb(
      path,
      (db) =>
        db.listSessionsRich({ excludeSources: ["tool"], orderByLastActive: true }).map((r) => r.id),
    );
    assert.deepEqual(rows.map((r) => (r as unknown as { id: string }).id), expected);
    const bad = await runCli(["--db", path, "list", "--order", "newest"]);
    assert.equal(bad.code, 2);
  });

  test("list prints the untitled layout with sources when no session has a title", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "telegram");
      db.appendMessage("s1", { role: "user", content: "line one\nline two of a question" });
    });
    const run = await runCli(["--db", path, "list"], { now: FIXTURE_NOW });
    const lines = run.out.split("\n");
    assert.equal(
      lines[0],
      `${"Preview".padEnd(50)} ${"Last Active".padEnd(13)} ${"Src".padEnd(6)} ID`,
    );
    assert.equal(lines[1], "─".repeat(95));
    assert.equal(
      lines[2],
      `${"line one line two of a question".padEnd(50)} ${"2h ago".padEnd(13)} telegram s1`,
    );
  });

  test("list says so when there is nothing to show", async () => {
    const path = await buildDb(() => {});
    const run = await runCli(["--db", path, "list"]);
    assert.equal(run.code, 0);
    assert.equal(run.out, "No sessions found.\n");
    assert.equal((await runCli(["--db", path, "list", "--json"])).out, "[]\n");
  });
});

describe("list with hostile text", () => {
  test("list shows control characters of a preview as symbols", async () => {
    const path = await buildDb((db) => {
      db.createSession("evil", "cli");
      db.appendMessage("evil", { role: "user", content: "\u001b[2Jcleared?" });
    });
    const run = await runCli(["--db", path, "list"]);
    assert.ok(run.out.includes("␛[2Jcleared?"));
    assert.ok(!run.out.includes("\u001b"));
  });
});
