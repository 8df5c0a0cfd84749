import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli, V11, v11Copy, withDb } from "./_cli_io.ts";

describe("rename", () => {
  test("rename joins the words, stores the sanitized title and reports it", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "rename", V11.live, "  Load", "test\tresults  "]);
    assert.equal(run.code, 0);
    assert.equal(run.out, `Session '${V11.live}' renamed to: Load test results\n`);
    assert.equal(await withDb(path, (db) => db.getSessionTitle(V11.live)), "Load test results");
  });

  test("rename --clear removes the title", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "rename", "--clear", V11.compressionTip]);
    assert.deepEqual(JSON.parse(run.out), { id: V11.compressionTip, title: null });
    assert.equal(await withDb(path, (db) => db.getSessionTitle(V11.compressionTip)), null);
  });

  test("rename exits 1 with the library's message for a title in use or too long", async () => {
    const path = v11Copy();
    const taken = await runCli(["--db", path, "rename", V11.live, "my", "project"]);
    assert.equal(taken.code, 1);
    assert.equal(
      taken.err,
      `hermes-state: Title 'my project' is already in use by session ${V11.compressionRoot}\n`,
    );
    const long = await runCli(["--db", path, "rename", V11.live, "x".repeat(101)]);
    assert.equal(long.code, 1);
    assert.equal(long.err, "hermes-state: Title too long (101 chars, max 100)\n");
    assert.equal(await withDb(path, (db) => db.getSessionTitle(V11.live)), null);
  });

  test("rename exits 2 without a title, or with both a title and --clear", async () => {
    const path = v11Copy();
    const none = await runCli(["--db", path, "rename", V11.live]);
    assert.equal(none.code, 2);
    assert.match(none.err, /^hermes-state rename: missing TITLE \(or --clear\)\n/);
    const both = await runCli(["--db", path, "rename", "--clear", V11.live, "x"]);
    assert.equal(both.code, 2);
  });

  test("rename refuses a blank TITLE and points to --clear", async () => {
    const path = v11Copy();
    const before = await withDb(path, (db) => db.getSessionTitle(V11.compressionRoot));
    for (const title of ["   ", "\u200b\u200b"]) {
      const run = await runCli(["--db", path, "rename", V11.compressionRoot, title]);
      assert.equal(run.code, 2, JSON.stringify(title));
      assert.match(run.err, /^hermes-state rename: TITLE is empty once cleaned, .*use --clear\n/);
    }
    assert.equal(await withDb(path, (db) => db.getSessionTitle(V11.compressionRoot)), before);
  });
});
