/**
 * `import` reads a JSON Lines export line by line as JSON Lines defines a
 * line: U+2028 and U+2029, which JSON writes raw inside strings (and both
 * `export` and Python's `json.dumps(ensure_ascii=False)` do), are no line
 * ends; a bad line in the middle writes nothing of itself and names its
 * number and value; the same file imported twice writes nothing again.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDbPath, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** Text with every separator a line reader may take for a line end. */
const SEPARATED = "line\u2028separator\u2029paragraph\u0085next\r\nCRLF\rCR\nLF";

/** A database of three sessions, the middle one holding {@linkcode SEPARATED}. */
async function threeSessions(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path, clock: () => 1777000000.5 });
  for (const id of ["s1", "s2\u2028id", "s3"]) {
    db.createSession(id, "cli");
    db.appendMessage(id, { role: "user", content: `${id}: ${SEPARATED}` });
  }
  db.setSessionTitle("s2\u2028id", "title\u2029x");
  return path;
}

async function exportOf(path: string): Promise<string> {
  const out = join(tempDir(), "export.jsonl");
  const run = await runCli(["--db", path, "export", out]);
  assert.equal(run.code, 0, run.err);
  return readFileSync(out, "utf8");
}

describe("import: hostile line ends", () => {
  test("U+2028 and U+2029 inside a value do not split its line", async () => {
    const text = await exportOf(await threeSessions());
    assert.equal(text.split("\n").length, 4, "three lines and the last line end");
    assert.ok(text.includes("\u2028"), "JSON writes U+2028 raw");
    const file = join(tempDir(), "in.jsonl");
    writeFileSync(file, text);
    const copy = tempDbPath();
    const run = await runCli(["--db", copy, "import", file]);
    assert.equal(run.err, "");
    assert.equal(run.code, 0);
    assert.equal(await exportOf(copy), text);
  });

  test("CRLF line ends are read as line ends", async () => {
    const text = await exportOf(await threeSessions());
    const file = join(tempDir(), "in.jsonl");
    writeFileSync(file, text.replaceAll("\n", "\r\n"));
    const copy = tempDbPath();
    const run = await runCli(["--db", copy, "import", file]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /Imported 3 sessions/);
    assert.equal(await exportOf(copy), text);
  });
});

describe("import: a bad line and a second run", () => {
  test("a bad line in the middle writes nothing of itself, naming its number and value", async () => {
    const lines = (await exportOf(await threeSessions())).trimEnd().split("\n");
    const bad = JSON.parse(lines[1]);
    bad.messages[0].timestamp = "yesterday";
    const file = join(tempDir(), "in.jsonl");
    writeFileSync(file, [lines[0], JSON.stringify(bad), lines[2]].join("\n") + "\n");
    const copy = tempDbPath();
    const run = await runCli(["--db", copy, "import", file]);
    assert.equal(run.code, 1);
    assert.match(run.err, /line 2: .*messages\[0\]\.timestamp.*"yesterday"/);
    using db = await SessionDB.open({ path: copy, readonly: true });
    assert.deepEqual(
      db.exportAll().map((session) => session.id).sort(),
      ["s1", "s3"],
      "the good lines are in, each whole; nothing of the bad one",
    );
    assert.equal(db.messageCount(), 2);
  });

  test("the same file twice writes nothing the second time", async () => {
    const text = await exportOf(await threeSessions());
    const file = join(tempDir(), "in.jsonl");
    writeFileSync(file, text);
    const copy = tempDbPath();
    assert.equal((await runCli(["--db", copy, "import", file])).code, 0);
    const before = readFileSync(copy);
    const again = await runCli(["--db", copy, "import", file]);
    assert.equal(again.code, 0, again.err);
    assert.match(
      again.out,
      /Imported 0 sessions, skipped 3 already present \(0 messages written\)/,
    );
    assert.equal(await exportOf(copy), text);
    assert.ok(readFileSync(copy).equals(before), "not a byte of the file changed");
  });
});
