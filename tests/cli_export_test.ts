import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { expected, tempDir } from "./_helpers.ts";
import { buildDb, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";

interface ExpectedFile {
  entries: { ts_call: string; ts_args: unknown[]; result: unknown }[];
}

function parseLines(text: string): unknown[] {
  assert.ok(text.endsWith("\n"));
  return text.slice(0, -1).split("\n").map((line) => JSON.parse(line));
}

describe("export", () => {
  test("export - writes one JSON line per session: exactly what exportAll returns", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "export", "-"]);
    assert.equal(run.code, 0);
    assert.equal(run.err, "");
    const lines = parseLines(run.out);
    const all = await withDb(path, (db) => db.exportAll());
    assert.equal(lines.length, 42);
    assert.deepEqual(lines, JSON.parse(JSON.stringify(all)));
    assert.ok(run.io.drains >= 2, "stdout is drained while streaming");
  });

  test("export - matches, line for line, what hermes sessions export writes (Python)", async () => {
    const file = await expected<ExpectedFile>("export.json");
    const python = file.entries.find((e) => e.ts_call === "exportAll" && e.ts_args.length === 0);
    assert.ok(python);
    const run = await runCli(["--db", v11Copy(), "export"]);
    const lines = parseLines(run.out);
    assert.equal(lines.length, (python.result as unknown[]).length);
    lines.forEach((line, i) =>
      assert.deepEqual(line, (python.result as unknown[])[i], `line ${i + 1}`)
    );
  });

  test("export keeps non-ASCII text as it is, as ensure_ascii=False does", async () => {
    const run = await runCli(["--db", v11Copy(), "export", "--source", "telegram"]);
    assert.ok(run.out.includes("数据库"));
    assert.ok(!run.out.includes("\\u6570"), "数 is not escaped");
  });

  test("export with an empty output argument is a usage error (exit 2)", async () => {
    const path = v11Copy();
    for (const output of ["", " "]) {
      const run = await runCli(["--db", path, "export", output]);
      assert.equal(run.code, 2);
      assert.match(run.err, /the output argument is empty/);
    }
  });

  test("export FILE writes the file whole and reports it", async () => {
    const path = v11Copy();
    const out = join(tempDir(), "backup.jsonl");
    const run = await runCli(["--db", path, "export", out, "--source", "cron"]);
    assert.equal(run.code, 0);
    assert.equal(run.out, `Exported 4 sessions to ${out}\n`);
    const lines = parseLines(readFileSync(out, "utf8")) as { source: string }[];
    assert.deepEqual(lines.map((l) => l.source), ["cron", "cron", "cron", "cron"]);
    assert.deepEqual(readdirSync(dirname(out)), ["backup.jsonl"], "no temporary file is left");
    const json = await runCli(["--db", path, "--json", "export", out, "--session-id", V11.live]);
    assert.deepEqual(JSON.parse(json.out), { exported: 1, output: out, format: "jsonl" });
  });

  test("export --session-id writes exportSession of the session found by prefix", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "export", "--session-id", "20260425_090019"]);
    const lines = parseLines(run.out);
    assert.equal(lines.length, 1);
    const one = await withDb(path, (db) => db.exportSession(V11.compressionTip));
    assert.deepEqual(lines[0], JSON.parse(JSON.stringify(one)));
    const missing = await runCli(["--db", path, "export", "--session-id", "nope"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.out, "");
  });

  test("export takes the format from OUTPUT's name (*.md, *.html, also before .gz) unless --format, and gzips *.gz for import", async () => {
    const db = v11Copy();
    const dir = tempDir();
    const jsonl = (await runCli(["--db", db, "export", "-"])).out;
    assert.equal((await runCli(["--db", db, "export", join(dir, "a.md")])).code, 0);
    assert.match(readFileSync(join(dir, "a.md"), "utf8"), /^# /);
    assert.equal((await runCli(["--db", db, "export", join(dir, "a.html")])).code, 0);
    assert.match(readFileSync(join(dir, "a.html"), "utf8"), /^<!doctype html>/);
    assert.equal(
      (await runCli(["--db", db, "export", "--format", "jsonl", join(dir, "b.md")])).code,
      0,
    );
    assert.equal(readFileSync(join(dir, "b.md"), "utf8"), jsonl);
    const gz = join(dir, "all.jsonl.gz");
    assert.equal((await runCli(["--db", db, "export", gz])).code, 0);
    assert.equal(gunzipSync(readFileSync(gz)).toString("utf8"), jsonl);
    const back = join(dir, "back.db");
    const imported = await runCli(["--db", back, "import", gz]);
    assert.equal(imported.code, 0, imported.err);
    assert.equal((await runCli(["--db", back, "export", "-"])).out, jsonl);
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith(".")),
      [],
      "no temporary file left",
    );
    // The name before the .gz says the format: gzipped Markdown and HTML.
    const markdown = readFileSync(join(dir, "a.md"), "utf8");
    assert.equal((await runCli(["--db", db, "export", join(dir, "a.md.gz")])).code, 0);
    assert.equal(gunzipSync(readFileSync(join(dir, "a.md.gz"))).toString("utf8"), markdown);
    assert.equal((await runCli(["--db", db, "export", join(dir, "a.html.GZ")])).code, 0);
    assert.match(gunzipSync(readFileSync(join(dir, "a.html.GZ"))).toString(), /^<!doctype html>/);
    // A backup named *.gz is compressed too.
    const copy = join(dir, "state.db.gz");
    assert.equal((await runCli(["--db", db, "backup", copy])).code, 0);
    assert.equal(readFileSync(copy).subarray(0, 2).toString("hex"), "1f8b");
  });

  test("export --format md writes a readable transcript per session", async () => {
    const run = await runCli(["--db", v11Copy(), "export", "--format", "md", "--source", "cli"]);
    assert.equal(run.code, 0);
    const sessions = run.out.split("\n---\n\n");
    assert.equal(sessions.length, 19);
    assert.ok(
      run.out.includes(
        "# my project #3\n\n- **ID:** `20260425_090019_d38f1d`\n- **Source:** cli\n",
      ),
    );
    assert.match(run.out, /\n## user · 2026-04-2\d \d\d:\d\d:\d\d UTC\n/);
    assert.match(run.out, /\*\*Tool call\*\* `\w+`\n\n```json\n/);
    assert.match(run.out, /<details><summary>Reasoning<\/summary>/);
    assert.ok(!run.out.includes("\u0000"));
  });

  test("export exits 1 with one line when the file cannot be written", async () => {
    const out = join(tempDir(), "no", "such", "dir", "x.jsonl");
    const run = await runCli(["--db", v11Copy(), "export", out]);
    assert.equal(run.code, 1);
    assert.match(run.err, /^hermes-state: Cannot write .*x\.jsonl: .*\n$/);
    assert.equal(existsSync(out), false);
  });

  test("export shows progress on a terminal once the run is past a second, then erases it", async () => {
    let t = 1_800_000_000;
    const now = () => (t += 0.25);
    const run = await runCli(["--db", v11Copy(), "export", join(tempDir(), "x.jsonl")], {
      now,
      stderrIsTerminal: true,
    });
    assert.equal(run.code, 0);
    assert.ok(run.err.startsWith("\r\x1b[KExported "), run.err);
    assert.match(run.err, /Exported \d+ sessions…/);
    assert.ok(run.err.endsWith("\r\x1b[K"));
    const quiet = await runCli(["--db", v11Copy(), "export", join(tempDir(), "y.jsonl")], { now });
    assert.equal(quiet.err, "", "no progress when stderr is not a terminal");
  });
});

describe("export errors", () => {
  test("export exits 2 when given both --session-id and --source", async () => {
    const run = await runCli([
      "--db",
      v11Copy(),
      "export",
      "--session-id",
      V11.live,
      "--source",
      "cli",
    ]);
    assert.equal(run.code, 2);
    assert.match(run.err, /^hermes-state export: give either --session-id or --source, not both\n/);
  });

  test("export --since and --until keep the sessions started in the range, as list does", async () => {
    const path = v11Copy();
    const all = await withDb(path, (db) => db.exportAll());
    const starts = [...new Set(all.map((s) => s.started_at))].sort((a, b) => a - b);
    const [from, to] = [starts[5], starts[30]];
    const run = await runCli([
      "--db",
      path,
      "export",
      "--since",
      String(from),
      "--until",
      String(to),
    ]);
    assert.equal(run.code, 0, run.err);
    const ids = parseLines(run.out).map((line) => (line as { id: string }).id);
    const wanted = all.filter((s) => s.started_at >= from && s.started_at < to).map((s) => s.id);
    assert.ok(wanted.length > 10 && wanted.length < all.length);
    assert.deepEqual(ids, wanted);
    const both = await runCli(["--db", path, "export", "--session-id", V11.live, "--until", "1d"]);
    assert.equal(both.code, 2);
    assert.match(both.err, /^hermes-state export: give either --session-id or --until, not both\n/);
    const bad = await runCli(["--db", path, "export", "--since", "last tuesday"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--since/);
  });

  test("export exits 1 with one line when OUTPUT is a folder", async () => {
    const dir = tempDir();
    const run = await runCli(["--db", v11Copy(), "export", dir]);
    assert.equal(run.code, 1);
    assert.match(run.err, /^hermes-state: Cannot write .*: .*\n$/);
    assert.deepEqual(readdirSync(dir), [], "the temporary file is removed");
  });

  test("export --format md shows control characters and bidi overrides as show does", async () => {
    const path = await buildDb((db) => {
      db.createSession("evil", "cli\u202e");
      db.setSessionTitle("evil", "fine title");
      db.appendMessage("evil", { role: "user", content: "\u001b[2Jgone \u202Etxt.exe\u0000end" });
      db.appendMessage("evil", {
        role: "assistant",
        content: "ok",
        toolCalls: [{
          id: "c1",
          type: "function",
          function: { name: "run\u001b", arguments: '{"a": "\u2066x"}' },
        }],
      });
    });
    const md = (await runCli(["--db", path, "export", "--format", "md"])).out;
    const shown = (await runCli(["--db", path, "show", "evil"])).out;
    for (const text of [md, shown]) {
      // deno-lint-ignore no-control-regex
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u202a-\u202e\u2066-\u2069]/.test(text), text);
    }
    assert.ok(md.includes("␛[2Jgone ⟨U+202E⟩txt.exe␀end"), md);
    assert.ok(shown.includes("␛[2Jgone ⟨U+202E⟩txt.exe␀end"), shown);
    assert.ok(md.includes("run␛"));
    assert.ok(md.includes("**Source:** cli⟨U+202E⟩"));
  });

  test("export --format md writes ids and tool names as code no backtick or line break in them ends", async () => {
    const id = "ev`il\u202eid";
    const child = "kid\nline";
    const path = await buildDb((db) => {
      db.createSession(id, "cli");
      db.createSession(child, "cli", { parentSessionId: id });
      db.appendMessage(child, { role: "tool", content: "done", toolName: "`tick" });
    });
    const md = (await runCli(["--db", path, "export", "--format", "md"])).out;
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u202a-\u202e\u2066-\u2069]/.test(md), md);
    assert.ok(md.includes("- **ID:** ``ev`il⟨U+202E⟩id``\n"), md);
    assert.ok(md.includes("- **ID:** `kid␊line`\n"), md);
    assert.ok(md.includes("- **Parent:** ``ev`il⟨U+202E⟩id``\n"), md);
    assert.ok(md.includes("`` `tick ``"), md);
  });
});
