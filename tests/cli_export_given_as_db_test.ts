/**
 * A JSON Lines export given where a database goes (`--db export.jsonl`,
 * `copy export.jsonl …`, `recover export.jsonl …`) is named for what it is,
 * with the command that reads it (`import`). The open's refusal suggested
 * `recover`, which finds nothing in such a file. The file is left as it was.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";

/** An export of the v11 fixture, and its bytes. */
async function exportFile(): Promise<{ path: string; bytes: Buffer; dir: string }> {
  const dir = tempDir();
  const path = join(dir, "sessions.jsonl");
  const run = await runCli(["--db", v11Copy(), "export", path]);
  assert.equal(run.code, 0, run.err);
  return { path, bytes: readFileSync(path), dir };
}

const IMPORT_HINT = /it is a JSON Lines file \(an export\?\).*hermes-state --db NEW\.db import /;

describe("a JSON Lines export given as the database", () => {
  test("every kind of command names import, not recover, and leaves the file as it was", async () => {
    const { path, bytes, dir } = await exportFile();
    for (
      const argv of [
        ["--db", path, "list"],
        ["--db", path, "show", "x"],
        ["--db", path, "search", "docker"],
        ["--db", path, "info"],
        ["--db", path, "rename", "x", "y"],
        ["--db", path, "doctor"],
        ["--db", path, "doctor", "--fix"],
        ["--db", path, "vacuum"],
        ["--db", path, "backup", join(dir, "backup.db")],
        ["copy", path, join(dir, "copy.db")],
      ]
    ) {
      const run = await runCli(argv);
      assert.equal(run.code, 1, argv.join(" "));
      assert.match(run.err, IMPORT_HINT, argv.join(" "));
      assert.ok(run.err.includes(`import ${path}`), run.err);
      assert.ok(!run.err.includes("recover"), run.err);
    }
    assert.deepEqual(readFileSync(path), bytes);
    for (const sidecar of ["-wal", "-shm", "-journal"]) {
      assert.equal(existsSync(`${path}${sidecar}`), false, sidecar);
    }
    for (const made of ["backup.db", "copy.db"]) {
      assert.equal(existsSync(join(dir, made)), false, made);
    }
  });

  test("recover says it is an export and names import", async () => {
    const { path, dir } = await exportFile();
    const run = await runCli(["recover", path, join(dir, "recovered.db")]);
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      /it is not a SQLite database .*; it is a JSON Lines file \(an export\?\)/,
    );
    assert.ok(run.err.includes(`hermes-state --db NEW.db import ${path}`), run.err);
  });

  test("the command it names reads the export into a new store", async () => {
    const { path, dir } = await exportFile();
    const fresh = join(dir, "new.db");
    const imported = await runCli(["--db", fresh, "import", path]);
    assert.equal(imported.code, 0, imported.err);
    const ids = async (db: string) =>
      (JSON.parse((await runCli(["--db", db, "--json", "list", "--limit", "1000"])).out) as {
        id: string;
      }[]).map((row) => row.id).sort();
    const listed = await ids(fresh);
    assert.ok(listed.length > 0);
    assert.deepEqual(listed, await ids(v11Copy()));
  });

  test("a file that is neither SQLite nor JSON Lines keeps the recover hint", async () => {
    const dir = tempDir();
    const path = join(dir, "notes.txt");
    writeFileSync(path, "hello, this is not a database\n");
    const run = await runCli(["--db", path, "list"]);
    assert.equal(run.code, 1);
    assert.match(run.err, /file is not a database/);
    assert.ok(!IMPORT_HINT.test(run.err), run.err);
  });
});
