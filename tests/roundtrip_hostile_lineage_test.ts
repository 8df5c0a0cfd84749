/**
 * Moving sessions between files keeps their lineage (a parent chain, and a
 * cycle a damaged file may hold) and the columns of a newer Hermes where
 * the target has them: `export` → `import` → `export` and `copy` give the
 * same JSON Lines; into a schema-11 file the newer columns are named as
 * not kept.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** The JSON Lines export of `path`, and the file holding it. */
async function exported(path: string): Promise<{ text: string; file: string }> {
  const file = join(tempDir(), "export.jsonl");
  const run = await runCli(["--db", path, "export", file]);
  assert.equal(run.code, 0, run.err);
  return { text: readFileSync(file, "utf8"), file };
}

/** Each session's parent, by id. */
async function parents(path: string): Promise<Record<string, unknown>> {
  using db = await rawOpen(path, true);
  const rows = db.prepare("SELECT id, parent_session_id AS parent FROM sessions ORDER BY id").all();
  return Object.fromEntries(rows.map((row) => [String(row.id), row.parent]));
}

/** A chain root ← mid ← tip (each with a message), and a parentless session. */
async function chain(): Promise<string> {
  const path = tempDbPath();
  let now = 1777000000;
  using db = await SessionDB.open({ path, clock: () => now++ });
  db.createSession("root", "cli");
  db.createSession("mid", "cli", { parentSessionId: "root" });
  db.createSession("tip", "cli", { parentSessionId: "mid" });
  db.createSession("alone", "telegram");
  for (const id of ["tip", "alone", "mid", "root"]) {
    db.appendMessage(id, { role: "user", content: id });
  }
  db.endSession("root", "compression");
  db.endSession("mid", "compression");
  return path;
}

/** Export → import into a new file → export, and copy; both must give `path`'s export. */
async function assertMovesExactly(path: string, into?: () => Promise<string>): Promise<string[]> {
  const first = await exported(path);
  const imported = into ? await into() : tempDbPath();
  const run = await runCli(["--db", imported, "import", first.file]);
  assert.equal(run.code, 0, run.err);
  assert.equal((await exported(imported)).text, first.text, "export → import → export");
  const copied = into ? await into() : join(tempDir(), "copy.db");
  const copy = await runCli(["copy", path, copied]);
  assert.equal(copy.code, 0, copy.err);
  assert.equal((await exported(copied)).text, first.text, "copy");
  return [run.err, copy.err];
}

describe("lineage moves whole", () => {
  test("a parent chain keeps every link", async () => {
    const path = await chain();
    const [importErr, copyErr] = await assertMovesExactly(path);
    assert.equal(importErr, "");
    assert.equal(copyErr, "");
  });

  test("a cycle (written with raw SQL) comes back as the same cycle", async () => {
    const path = await chain();
    {
      using raw = await rawOpen(path);
      raw.exec("UPDATE sessions SET parent_session_id = 'tip' WHERE id = 'root'");
    }
    const before = await parents(path);
    assert.deepEqual(before, { alone: null, mid: "root", root: "tip", tip: "mid" });
    const first = await exported(path);
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", first.file]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(await parents(target), before);
    assert.equal((await exported(target)).text, first.text);
    const copied = join(tempDir(), "copy.db");
    assert.equal((await runCli(["copy", path, copied])).code, 0);
    assert.deepEqual(await parents(copied), before);
    assert.equal((await exported(copied)).text, first.text);
  });
});

describe("the columns of a newer Hermes", () => {
  const NEWER = ["archived", "messages.active", "messages.compacted"];

  test("the export of a v21 file carries its newer columns", async () => {
    const { text } = await exported(copyFixture("hermes-v21.db"));
    for (const column of NEWER) {
      assert.match(text, new RegExp(`"${column.replace("messages.", "")}":`), column);
    }
  });

  test("into a v21 file emptied of its sessions, export and copy keep every column", async () => {
    const emptied = async () => {
      const path = copyFixture("hermes-v21.db");
      using raw = await rawOpen(path);
      raw.exec("DELETE FROM messages; DELETE FROM sessions;");
      return path;
    };
    const [importErr, copyErr] = await assertMovesExactly(copyFixture("hermes-v21.db"), emptied);
    assert.doesNotMatch(importErr, /no column/);
    assert.doesNotMatch(copyErr, /no column|no place/);
  });

  test("into a new (v11) file, import and copy name the columns they could not keep", async () => {
    const source = copyFixture("hermes-v21.db");
    const { file } = await exported(source);
    const imported = await runCli(["--db", tempDbPath(), "import", file]);
    assert.equal(imported.code, 0, imported.err);
    const copied = await runCli(["copy", source, join(tempDir(), "copy.db")]);
    assert.equal(copied.code, 0, copied.err);
    for (const column of NEWER) {
      assert.ok(imported.err.includes(column), `import names ${column}: ${imported.err}`);
      assert.ok(copied.err.includes(column), `copy names ${column}: ${copied.err}`);
    }
  });
});
