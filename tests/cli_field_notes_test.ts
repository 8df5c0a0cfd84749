/**
 * What exploratory use of the CLI found in less-travelled situations: a
 * title or preview with a newline or a tab stored by another writer, ids
 * and roles with control characters in the lines of `rename`, `delete`,
 * `show` and `search`, a `--since` of more digits than a number holds,
 * SQLite's `:memory:` given as a store, an absurd cost, and a session with
 * tens of thousands of children.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDb, runCli, V11, v11Copy } from "./_cli_io.ts";
import { rawOpen, tempDir } from "./_helpers.ts";
import { formatCost } from "../lib/render/format.ts";
import { buildLineageTree } from "../lib/render/lineage_tree.ts";
import type { SessionRow } from "../lib/core/types.ts";

/** An id as a hostile writer may store it: a colour, a bell and a bidi override. */
const HOSTILE_ID = "x\u001b[31mRED\u0007\u202e";

/** Every raw control character or bidi override in `text` (our colours are off: not a terminal). */
function rawControls(text: string): string[] {
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  return [...text.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g)]
    .map((m) => m[0]);
}

describe("field notes: stored text on one line, marks for controls", () => {
  test("list keeps a title and a preview with a newline or a tab on its own row", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "cli");
      db.appendMessage("s1", { role: "user", content: "first\tsecond\nthird" });
      db.createSession("s2", "cli");
      db.appendMessage("s2", { role: "user", content: "plain" });
    });
    {
      // As an import or another writer may store it (setSessionTitle cleans its own).
      using raw = await rawOpen(path);
      raw.prepare("UPDATE sessions SET title = ? WHERE id = ?").run("line one\nline\ttwo", "s1");
    }
    const run = await runCli(["--db", path, "list"], { env: { COLUMNS: "100" } });
    assert.equal(run.code, 0, run.err);
    const lines = run.out.trimEnd().split("\n");
    // Header, rule, two rows, the count: nothing else.
    assert.equal(lines.length, 5, run.out);
    assert.ok(!run.out.includes("\t"), run.out);
    const row = lines.find((line) => line.includes("s1"));
    assert.ok(row?.startsWith("line one line two"), run.out);
    assert.ok(row?.includes("first second third"), run.out);
    // The ids stay in one column.
    const at = lines.filter((line) => /\bs[12]$/.test(line)).map((line) => line.length);
    assert.equal(new Set(at).size, 1, run.out);
  });

  test("rename, delete and show print a stored id's control characters as marks", async () => {
    const path = await buildDb((db) => {
      db.createSession(HOSTILE_ID, "cli");
      db.appendMessage(HOSTILE_ID, { role: "user", content: "hello" });
      db.endSession(HOSTILE_ID, "compression");
      db.createSession(`${HOSTILE_ID}2`, "cli", { parentSessionId: HOSTILE_ID });
      db.appendMessage(`${HOSTILE_ID}2`, { role: "user", content: "more" });
    }, { start: 1777000000 });
    const runs = [
      ["show", HOSTILE_ID],
      ["rename", HOSTILE_ID, "A title"],
      ["rename", "--clear", HOSTILE_ID],
      ["delete", "--yes", HOSTILE_ID],
      ["delete", "--yes", `${HOSTILE_ID}2`],
    ];
    for (const argv of runs) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 0, `${argv.join(" ")}: ${run.err}`);
      assert.deepEqual(
        rawControls(run.out + run.err),
        [],
        `${argv[0]}: ${JSON.stringify(run.out)}`,
      );
      assert.ok(run.out.includes("x␛[31mRED␇⟨U+202E⟩"), `${argv[0]}: ${run.out}`);
    }
  });

  test("search shows a neighbouring message's role with control characters as marks", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "cli");
      db.appendMessage("s1", { role: "user", content: "before" });
      db.appendMessage("s1", { role: "user", content: "find the zebra" });
    });
    {
      using raw = await rawOpen(path);
      raw.prepare("UPDATE messages SET role = ? WHERE content = 'before'").run("us\u001b[31mer");
    }
    const run = await runCli(["--db", path, "search", "zebra"]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(rawControls(run.out), [], JSON.stringify(run.out));
    assert.ok(run.out.includes("us␛[31mer: before"), run.out);
  });
});

describe("field notes: arguments", () => {
  test("a --since or --until of more digits than a number holds is a usage error", async () => {
    const path = v11Copy();
    const huge = "9".repeat(400);
    const runs = [
      ["list", "--since", huge],
      ["list", "--until", `${huge}d`],
      ["search", "docker", "--since", huge],
      ["export", "--since", `${huge}y`],
    ];
    for (const argv of runs) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 2, `${argv.join(" ")}: ${run.err}`);
      assert.match(run.err, /--(since|until) must be a date/, run.err);
      assert.doesNotMatch(run.err, /unexpected error/, run.err);
    }
  });

  test(":memory: as --db or a store argument is a usage error, not a store that keeps nothing", async () => {
    const dir = tempDir();
    const lines = join(dir, "in.jsonl");
    writeFileSync(
      lines,
      JSON.stringify({
        id: "s1",
        source: "cli",
        started_at: 1777000000,
        messages: [{ role: "user", content: "hi", timestamp: 1777000001 }],
      }) + "\n",
    );
    const path = v11Copy();
    const runs = [
      ["--db", ":memory:", "import", lines],
      ["--db", "sqlite::memory:", "list"],
      ["copy", path, ":memory:"],
      ["copy", ":memory:", join(dir, "out.db")],
      ["--db", path, "backup", ":memory:"],
      ["recover", path, ":memory:"],
    ];
    for (const argv of runs) {
      const run = await runCli(argv);
      assert.equal(run.code, 2, `${argv.join(" ")}: ${run.out}${run.err}`);
      assert.match(run.err, /SQLite's in-memory database/, run.err);
      assert.equal(run.out, "", argv.join(" "));
    }
    // A file of that name is given as one.
    const file = join(dir, ":memory:");
    const kept = await runCli(["--db", file, "import", lines]);
    assert.equal(kept.code, 0, kept.err);
    const listed = await runCli(["--db", file, "list"]);
    assert.match(listed.out, /\bs1\n/);
  });

  test("--db sqlite: with no path is a usage error, not a database at an empty name", async () => {
    for (const db of ["sqlite:", "sqlite:  "]) {
      const run = await runCli(["--db", db, "list"]);
      assert.equal(run.code, 2, run.err);
      assert.match(
        run.err,
        /^hermes-state list: --db "sqlite: *" names no file: give sqlite:PATH\n/,
      );
    }
  });
});

describe("field notes: absurd values and sizes", () => {
  test("formatCost() of 1e21 dollars and more has no '.undefined'", () => {
    assert.equal(formatCost(1e300), "$1e+300");
    assert.equal(formatCost(-1e21), "-$1e+21");
    assert.equal(formatCost(1e20), "$100,000,000,000,000,000,000.00");
  });

  test("show and stats of a session whose cost is absurd print it without '.undefined'", async () => {
    const path = v11Copy();
    {
      using raw = await rawOpen(path);
      raw.prepare("UPDATE sessions SET actual_cost_usd = 1e300 WHERE id = ?").run(V11.live);
    }
    for (const argv of [["show", V11.live], ["stats"]]) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 0, run.err);
      assert.ok(!run.out.includes("undefined"), run.out);
      assert.ok(run.out.includes("$1e+300 actual"), run.out);
    }
  });

  test("stats and usage add up token counts past 2^63 instead of failing with 'integer overflow'", async () => {
    const path = v11Copy();
    {
      using raw = await rawOpen(path);
      raw.exec("UPDATE sessions SET input_tokens = 4611686018427387904 WHERE rowid <= 3");
    }
    for (const argv of [["stats"], ["stats", "--json"], ["usage", "--since", "all"]]) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 0, `${argv.join(" ")}: ${run.err}`);
      assert.equal(run.err, "");
    }
    const stats = JSON.parse((await runCli(["--db", path, "stats", "--json"])).out);
    assert.ok(JSON.stringify(stats).includes("13835058055"), "the three sessions' tokens, summed");
  });

  // The tree used to copy a session's list of children for each child it added: 60,000 children
  // took 15 s in it (19.7 s for `lineage`), 1.2 s since. Speed is for benchmarks, not tests: this
  // checks the tree such a family makes.
  test("buildLineageTree() of a session with 50,000 children keeps every child, in order", () => {
    const row = (id: string, parent: string | null, at: number) =>
      ({
        id,
        parent_session_id: parent,
        started_at: at,
        ended_at: null,
        end_reason: null,
        title: null,
        source: "cli",
        message_count: 0,
      }) as unknown as SessionRow;
    const rows = [row("root", null, 0)];
    for (let i = 0; i < 50_000; i++) rows.push(row(`kid${i}`, "root", i + 1));
    const tree = buildLineageTree(rows);
    assert.equal(tree?.children.length, 50_000);
    assert.deepEqual(tree?.children.map((kid) => kid.id), rows.slice(1).map((r) => r.id));
  });
});
