import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatDateTime } from "../lib/render/format.ts";
import { buildDb, FIXTURE_NOW, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";

async function toolDb(): Promise<string> {
  return await buildDb((db, clock) => {
    db.createSession("t1", "cli", { model: "m1", systemPrompt: "Be brief." });
    db.setSessionTitle("t1", "tool demo");
    db.appendMessage("t1", { role: "user", content: "list the files" });
    clock.now += 10;
    db.appendMessage("t1", {
      role: "assistant",
      content: null,
      toolCalls: [{
        id: "c1",
        type: "function",
        function: { name: "terminal", arguments: '{"command": "ls"}' },
      }],
      finishReason: "tool_calls",
      reasoning: "The user wants a listing.",
    });
    clock.now += 1;
    const lines = Array.from({ length: 30 }, (_, i) => `file-${i + 1}.txt`).join("\n");
    db.appendMessage("t1", {
      role: "tool",
      toolName: "terminal",
      toolCallId: "c1",
      content: `${lines}\u0000end`,
    });
    clock.now += 5;
    db.appendMessage("t1", {
      role: "assistant",
      content: "30 files.\u001b[31m",
      finishReason: "stop",
    });
  });
}

describe("show", () => {
  test("show prints the details and a transcript with tool calls and results", async () => {
    const path = await toolDb();
    const run = await runCli(["--db", path, "show", "t1"]);
    assert.equal(run.code, 0);
    const out = run.out;
    assert.match(out, /^ID {8}t1\nTitle {5}tool demo\nSource {4}cli\nModel {5}m1\n/);
    assert.match(out, /\nEnded {5}— \(open\)\n/);
    assert.match(out, /\nMessages {2}4 messages · 1 tool call · 0 API calls\n/);
    assert.match(out, /\nSystem {4}9 characters \(--system shows it\)\n/);
    assert.ok(out.includes(`── user · ${formatDateTime(FIXTURE_NOW - 7200)} `));
    assert.ok(out.includes("── assistant · "));
    assert.ok(out.includes('→ terminal {"command":"ls"}\n'));
    assert.ok(out.includes("── tool · terminal · "));
    // Long tool results are folded; control characters are made visible.
    assert.ok(out.includes("file-10.txt\n… 20 more lines (--full shows everything)\n"));
    assert.ok(!out.includes("file-11.txt"));
    assert.ok(out.includes("30 files.␛[31m"));
    assert.ok(out.includes("┊ (reasoning hidden: --reasoning shows it)"));
    assert.ok(!out.includes("The user wants a listing."));
  });

  test("show --full, --reasoning and --system show what is folded or hidden", async () => {
    const path = await toolDb();
    const run = await runCli(["--db", path, "show", "t1", "--full", "--reasoning", "--system"]);
    assert.ok(run.out.includes("file-30.txt␀end"));
    assert.ok(run.out.includes("┊ The user wants a listing."));
    assert.ok(run.out.includes("System prompt\nBe brief.\n"));
  });

  test("show finds a session by unique id prefix and by title", async () => {
    const path = v11Copy();
    const byPrefix = await runCli(["--db", path, "show", "20260425_0900"]);
    assert.equal(byPrefix.code, 1, "an ambiguous prefix is not a match");
    const unique = await runCli(["--db", path, "show", "20260425_090019"]);
    assert.equal(unique.code, 0);
    assert.match(unique.out, new RegExp(`^ID +${V11.compressionTip}\n`));
    const byTitle = await runCli(["--db", path, "show", "my", "project", "#2"]);
    assert.match(byTitle.out, new RegExp(`^ID +${V11.compressionMid}\n`));
    assert.match(byTitle.out, new RegExp(`\nContinued in +${V11.compressionTip} `));
    assert.match(byTitle.out, new RegExp(`\nParent +${V11.compressionRoot}\n`));
  });

  test("show resolves titles exactly as docs/cli.md says: exact is case-sensitive, #N is not", async () => {
    const path = v11Copy();
    const idOf = async (title: string) => {
      const run = await runCli(["--db", path, "--json", "show", title]);
      return run.code === 0 ? JSON.parse(run.out).id : null;
    };
    assert.equal(await idOf("my project"), V11.compressionRoot, "the exact title first");
    assert.equal(await idOf("my project #2"), V11.compressionMid);
    assert.equal(await idOf("MY PROJECT"), V11.compressionTip, "the newest #N, ASCII case ignored");
    assert.equal(await idOf("My Project #2"), null, "the exact step is case-sensitive");
    assert.equal(await idOf("Resume Me"), null);
  });

  test("show names the sessions an ambiguous id prefix matches, up to ten", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "show", "20260425_0900"]);
    assert.equal(run.code, 1);
    const lines = run.err.trimEnd().split("\n");
    assert.match(
      lines[0],
      /^hermes-state: Session '20260425_0900' is ambiguous: matches (\d+) sessions/,
    );
    const count = Number(/matches (\d+)/.exec(lines[0])![1]);
    assert.ok(count >= 2);
    assert.ok(
      lines.slice(1).every((l) => /^ {2}(20260425_0900\S*|… and \d+ more)$/.test(l)),
      run.err,
    );
    assert.ok(lines.includes(`  ${V11.compressionTip}`));
    const many = await runCli(["--db", path, "show", "2026"]);
    const listed = many.err.trimEnd().split("\n").slice(1);
    assert.equal(listed.length, 11, "ten ids and a count of the rest");
    assert.match(listed[10], /^ {2}… and \d+ more$/);
  });

  test("an empty session argument is a usage error: not the only session, nor a list of them all", async () => {
    const one = await buildDb((db) => db.createSession("only-one", "cli"));
    for (const path of [one, v11Copy()]) {
      for (
        const command of [["show", ""], ["lineage", "  "], ["rename", "", "a title"]]
      ) {
        const run = await runCli(["--db", path, ...command]);
        assert.equal(run.code, 2, `${command.join(" ")}: ${run.err}`);
        assert.equal(
          run.err,
          `hermes-state ${command[0]}: the session argument is empty (${
            JSON.stringify(command[1])
          }): give an id, a unique id prefix or a title\nTry: hermes-state ${command[0]} --help\n`,
        );
        assert.equal(run.out, "");
      }
    }
  });

  test("an empty session argument is a usage error before the store is looked for", async () => {
    const missing = join(tempDir(), "none.db");
    for (
      const command of [
        ["show", ""],
        ["lineage", " "],
        ["rename", "", "a title"],
        ["delete", "-y", "x", ""],
      ]
    ) {
      const run = await runCli(["--db", missing, ...command]);
      assert.equal(run.code, 2, `${command.join(" ")}: ${run.err}`);
      assert.match(
        run.err,
        new RegExp(`^hermes-state ${command[0]}: the session argument is empty`),
      );
    }
    // A session argument that is not blank still meets the missing file.
    const named = await runCli(["--db", missing, "show", "x"]);
    assert.equal(named.code, 1);
    assert.match(named.err, /^hermes-state: No database at /);
  });

  test("show says estimated once and gives the cost in the one format", async () => {
    const run = await runCli(["--db", v11Copy(), "show", V11.kitchenSink]);
    const cost = run.out.split("\n").find((line) => line.startsWith("Cost"));
    assert.equal(cost, "Cost      $0.29 estimated");
  });

  test("show exits 1 with one line for an unknown session", async () => {
    const run = await runCli(["--db", v11Copy(), "show", "nope"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      "hermes-state: Session 'nope' not found (give an id, a unique id prefix or a title)\n",
    );
  });

  test("show --json prints exportSession of the session", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "show", V11.kitchenSink, "--json"]);
    const expected = await withDb(path, (db) => db.exportSession(V11.kitchenSink));
    assert.deepEqual(JSON.parse(run.out), JSON.parse(JSON.stringify(expected)));
  });

  test("show renders multimodal content and every fixture session without failing", async () => {
    const path = v11Copy();
    const ids = await withDb(path, (db) => db.searchSessions({ limit: 1000 }).map((s) => s.id));
    for (const id of ids) {
      const run = await runCli(["--db", path, "show", id]);
      assert.equal(run.code, 0, `${id}: ${run.err}`);
    }
    const sink = await runCli(["--db", path, "show", V11.kitchenSink]);
    assert.match(sink.out, /\[image_url: /);
  });
});
