import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, FIXTURE_NOW, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { displayWidth } from "../lib/render/width.ts";

describe("list", () => {
  test("list prints titles, previews, activity, source and id, tool sessions hidden", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "list", "--limit", "100"], { env: { COLUMNS: "200" } });
    assert.equal(run.code, 0);
    const lines = run.out.trimEnd().split("\n");
    assert.match(lines[0], /^Title +Preview +Last Active +Source +ID$/);
    assert.match(lines[1], /^─+$/);
    assert.doesNotMatch(run.out, new RegExp(V11.toolPaperclip));
    // The live session's last message was an hour before "now".
    const live = lines.find((line) => line.endsWith(V11.live));
    assert.ok(live);
    assert.match(live, /^— +Live session: .+ {2}1h ago +cli +20260429_090322_3762ca$/u);
    // A compression chain shows as its tip, not its root.
    assert.ok(
      lines.some((line) => line.endsWith(V11.compressionTip) && line.startsWith("my project #3")),
    );
    assert.ok(!lines.some((line) => line.endsWith(V11.compressionRoot)));
    const expected = await withDb(
      path,
      (db) => db.listSessionsRich({ excludeSources: ["tool"], limit: 100 }).length,
    );
    assert.equal(lines.length, expected + 3);
    assert.equal(lines.at(-1), `${expected} sessions`);
  });

  test("list fits 80 columns and keeps every id whole and aligned", async () => {
    const path = v11Copy();
    for (const options of [{ env: { COLUMNS: "80" } }, { columns: 80, isTerminal: true }]) {
      const run = await runCli(["--db", path, "list", "--limit", "100"], options);
      // deno-lint-ignore no-control-regex
      const lines = run.out.replace(/\x1b\[[0-9;]*m/g, "").trimEnd().split("\n");
      const ids = await withDb(
        path,
        (db) => db.listSessionsRich({ excludeSources: ["tool"], limit: 100 }).map((s) => s.id),
      );
      const widest = Math.max(...ids.map((id) => id.length));
      for (const line of lines) assert.ok(displayWidth(line) <= 80 - 24 + widest, line);
      const column = lines[0].indexOf("ID");
      for (const id of ids) {
        const line = lines.find((l) => l.endsWith(id));
        assert.ok(line, id);
        assert.equal(displayWidth(line.slice(0, line.length - id.length)), column, line);
      }
    }
  });

  test("list sizes the source column to its content: a long source never pushes the id", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "a-very-long-source-name-indeed");
      db.createSession("s2", "cli");
      db.appendMessage("s1", { role: "user", content: "hello" });
    });
    const run = await runCli(["--db", path, "list"], { env: { COLUMNS: "80" } });
    const lines = run.out.trimEnd().split("\n");
    const at = (id: string) => lines.find((l) => l.endsWith(id))!.lastIndexOf(id);
    assert.equal(at("s1"), at("s2"));
    assert.match(run.out, /a-very-long…/);
  });

  test("list ends with how many sessions it shows of how many there are", async () => {
    const path = v11Copy();
    const total = await withDb(path, (db) => db.listedSessionCount({ excludeSources: ["tool"] }));
    const first = await runCli(["--db", path, "list", "--limit", "20"]);
    assert.ok(first.out.endsWith(`\n20 of ${total} sessions\n`), first.out.slice(-40));
    const second = await runCli(["--db", path, "list", "--limit", "5", "--offset", "20"]);
    assert.ok(second.out.endsWith(`\n21–25 of ${total} sessions\n`));
    const beyond = await runCli(["--db", path, "list", "--offset", "1000"]);
    assert.equal(beyond.out, `No sessions past the first ${total} sessions.\n`);
  });

  test("list gives a usage error for an empty --source, a --limit below 1 or a bad --order", async () => {
    for (
      const args of [
        ["--source="],
        ["--source", ""],
        ["--limit", "-1"],
        ["--limit", "0"],
        ["--order", "newest"],
      ]
    ) {
      const run = await runCli(["--db", v11Copy(), "list", ...args]);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.err, /^hermes-state list: .+\nTry: hermes-state list --help\n$/);
    }
  });

  test("list --since and --until keep the sessions started in the range", async () => {
    const path = v11Copy();
    const json = async (...args: string[]) =>
      JSON.parse(
        (await runCli(["--db", path, "--json", "list", "--limit", "100", ...args])).out,
      ) as {
        started_at: number;
      }[];
    const all = await json();
    const cut = all[Math.floor(all.length / 2)].started_at;
    const since = await json("--since", String(Math.ceil(cut)));
    const until = await json("--until", String(Math.ceil(cut)));
    assert.equal(since.length + until.length, all.length);
    assert.ok(since.every((s) => s.started_at >= Math.ceil(cut)));
    assert.ok(until.every((s) => s.started_at < Math.ceil(cut)));
    const bad = await runCli(["--db", path, "list", "--since", "soon"]);
    assert.equal(bad.code, 2);
  });

  test("list --source tool shows the tool sessions it hides by default", async () => {
    const run = await runCli(["--db", v11Copy(), "list", "--source", "tool"]);
    assert.equal(run.code, 0);
    assert.match(run.out, new RegExp(V11.toolPaperclip));
    assert.equal(run.out.trimEnd().split("\n").length, 2 + 2 + 1);
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

  test("list leaves the title column out when no session has a title", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "telegram");
      db.appendMessage("s1", { role: "user", content: "line one\nline two of a question" });
    });
    const run = await runCli(["--db", path, "list"], { now: FIXTURE_NOW });
    const lines = run.out.split("\n");
    assert.equal(lines[0], "Preview                          Last Active  Source    ID");
    assert.equal(lines[1], "─".repeat(58));
    assert.equal(lines[2], "line one line two of a question  2h ago       telegram  s1");
    assert.equal(lines[3], "1 session");
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
