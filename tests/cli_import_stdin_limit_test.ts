/**
 * `hermes-state import -` reads standard input with the same limit on a
 * line's length as a file: an endless line (`cat /dev/zero | hermes-state
 * import -`) is one clear error, not a crash with "Invalid string length"
 * (Deno, Node) or the whole line held in memory (Bun). Each test runs the
 * CLI in a child process of the running runtime, fed through a real pipe.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { runCli, v11Copy, withDb } from "./_cli_io.ts";
import { cliArgv, tempDir } from "./_helpers.ts";

/** More zeros than `MAX_LINE_LENGTH` (256 MiB) lets a line hold, without a line end. */
const ZEROS = "head -c 300M /dev/zero";

/**
 * Runs `cli.ts --db DB import -` in a child process whose standard input is
 * a pipe from the shell command `feed` (which may read `$FEED_FILE`).
 */
function importFromPipe(db: string, feed: string, feedFile = "") {
  const child = spawnSync(
    "sh",
    ["-c", `{ ${feed}; } | "$@"`, "sh", ...cliArgv(["--db", db, "import", "-"])],
    {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", FEED_FILE: feedFile },
      timeout: 120_000,
    },
  );
  return { code: child.status, err: child.stderr };
}

function tooLong(line: number): string {
  return `hermes-state: Cannot import standard input: line ${line} is longer than 256 MiB ` +
    "(it is not JSON Lines)\n";
}

test("import - of an endless line on standard input is one clear error, no database made", () => {
  const db = join(tempDir(), "state.db");
  const run = importFromPipe(db, ZEROS);
  assert.equal(run.err, tooLong(1));
  assert.equal(run.code, 1);
  assert.equal(existsSync(db), false);
});

test("import - keeps every session before an endless line, each whole, and names the line", async () => {
  const exported = await runCli(["--db", v11Copy(), "export", "-"]);
  assert.equal(exported.code, 0, exported.err);
  const lines = exported.out.trimEnd().split("\n").length;
  const file = join(tempDir(), "export.jsonl");
  writeFileSync(file, exported.out);
  const whole = join(tempDir(), "whole.db");
  assert.equal((await runCli(["--db", whole, "import", file])).code, 0);
  const db = join(tempDir(), "state.db");
  const run = importFromPipe(db, `cat "$FEED_FILE"; ${ZEROS}`, file);
  assert.equal(run.err, tooLong(lines + 1));
  assert.equal(run.code, 1);
  const counts = (path: string) =>
    withDb(path, (store) => ({ sessions: store.sessionCount(), messages: store.messageCount() }));
  const imported = await counts(db);
  assert.equal(imported.sessions, lines);
  assert.deepEqual(imported, await counts(whole));
});
