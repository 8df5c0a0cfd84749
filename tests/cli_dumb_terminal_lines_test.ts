/**
 * `TERM=dumb` (Emacs's shell, some CI consoles) has no "erase line": the
 * progress and status lines that `export`, `import`, `doctor`, `backup` and `prune`
 * redraw with `\r` and ESC `[K` on a terminal printed the ESC `[K` there as
 * garbage. On such a terminal they now say nothing, as colour does.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { insertRows } from "./_raw_rows.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** A clock a quarter of a second on at every look, so a progress line is due. */
function slowClock(): () => number {
  let t = 1_800_000_000;
  return () => (t += 0.25);
}

const DUMB = { stderrIsTerminal: true, env: { TERM: "dumb" } };

describe("no line redrawn on TERM=dumb", () => {
  test("export", async () => {
    const out = join(tempDir(), "x.jsonl");
    const run = await runCli(["--db", v11Copy(), "export", out], { ...DUMB, now: slowClock() });
    assert.equal(run.code, 0, run.err);
    assert.equal(run.err, "");
  });

  test("import", async () => {
    const file = join(tempDir(), "x.jsonl");
    assert.equal((await runCli(["--db", v11Copy(), "export", file])).code, 0);
    const dest = join(tempDir(), "new.db");
    const run = await runCli(["--db", dest, "import", file], { ...DUMB, now: slowClock() });
    assert.equal(run.code, 0, run.err);
    assert.ok(!run.err.includes("\x1b"), JSON.stringify(run.err));
  });

  test("doctor", async () => {
    const run = await runCli(["--db", v11Copy(), "doctor"], DUMB);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.err, "");
  });

  test("backup", async () => {
    const dest = join(tempDir(), "copy.db");
    const run = await runCli(["--db", v11Copy(), "backup", dest], DUMB);
    assert.equal(run.code, 0, run.err);
    assert.ok(!run.err.includes("\x1b"), JSON.stringify(run.err));
  });

  test("prune of more sessions than it announces", async () => {
    const path = join(tempDir(), "state.db");
    (await SessionDB.open({ path })).close();
    await insertRows(
      path,
      Array.from({ length: 501 }, (_, i) => ({
        id: `old_${i}`,
        started_at: 1_000_000 + i,
        ended_at: 1_000_100 + i,
        end_reason: "cli_close",
      })),
    );
    const run = await runCli(["--db", path, "prune", "--older-than", "1", "--yes"], DUMB);
    assert.equal(run.code, 0, run.err);
    assert.ok(!run.err.includes("\x1b"), JSON.stringify(run.err));
    assert.match(run.out, /501/);
  });

  test("a capable terminal still gets them", async () => {
    const run = await runCli(["--db", v11Copy(), "doctor"], {
      stderrIsTerminal: true,
      env: { TERM: "xterm-256color" },
    });
    assert.ok(run.err.startsWith("\r\x1b[KChecking "), run.err);
  });
});
