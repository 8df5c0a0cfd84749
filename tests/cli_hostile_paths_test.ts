/**
 * Hostile file names given to the commands that read or write a file of
 * their own (`export`, `backup`, `import`): a NUL, a name longer than the
 * file system takes, control characters, an endless device. Each is one
 * line naming the value, exit 1, never "unexpected error" or a crash.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { delay } from "../lib/core/delay.ts";
import { writeFailureReason } from "../lib/files/output_path.ts";
import { copyFixture, tempDir } from "./_helpers.ts";

function assertOneLine(err: string, pattern: RegExp): void {
  assert.doesNotMatch(err, /unexpected error|ERR_|ENAMETOOLONG|null bytes/);
  assert.equal(err.trimEnd().split("\n").length, 1, err);
  assert.match(err, pattern);
}

test("export and backup refuse a file name with a NUL", async () => {
  const db = v11Copy();
  const out = join(tempDir(), "out\u0000.jsonl");
  for (const argv of [["export", out], ["backup", out]]) {
    const run = await runCli(["--db", db, ...argv]);
    assert.equal(run.code, 1, run.err);
    assertOneLine(run.err, /a file name cannot contain a NUL character/);
  }
});

test("export and backup refuse a file name longer than the file system takes", async () => {
  const db = v11Copy();
  const out = join(tempDir(), `${"a".repeat(300)}.jsonl`);
  for (const argv of [["export", out], ["backup", out]]) {
    const run = await runCli(["--db", db, ...argv]);
    assert.equal(run.code, 1, run.err);
    assertOneLine(run.err, /the name is too long$/m);
  }
});

test("import names a NUL, a too long or a control-character file name in one line", async () => {
  const db = join(tempDir(), "state.db");
  const cases: [string, RegExp][] = [
    ["in\u0000.jsonl", /Cannot read in␀\.jsonl: a file name cannot contain a NUL character/],
    [`${"a".repeat(300)}.jsonl`, /: the name is too long$/m],
    ["in\n.jsonl", /Cannot read in␊\.jsonl: no such file/],
  ];
  for (const [source, pattern] of cases) {
    const run = await runCli(["--db", db, "import", source]);
    assert.equal(run.code, 1, run.err);
    assertOneLine(run.err, pattern);
  }
  assert.equal(existsSync(db), false);
});

test("import of an endless device without a line end is one clear error", async () => {
  const db = join(tempDir(), "state.db");
  const run = await runCli(["--db", db, "import", "/dev/zero"]);
  assert.equal(run.code, 1, run.err);
  assertOneLine(run.err, /Cannot import \/dev\/zero: line 1 is longer than 256 MiB/);
  assert.equal(existsSync(db), false);
});

test("--db with a NUL is a usage error, on every command that opens it", async () => {
  for (const argv of [["list"], ["info"], ["doctor"], ["show", "x"], ["vacuum"]]) {
    const run = await runCli(["--db", "/tmp/state\u0000.db", ...argv]);
    assert.equal(run.code, 2, run.err);
    assert.doesNotMatch(run.err, /unexpected error|null bytes/);
    assert.match(run.err, /--db "\/tmp\/state\\u0000\.db": a file name cannot contain a NUL/);
  }
});

test("export to a named pipe nobody reads stops on Ctrl-C, exit 130", async () => {
  const fifo = join(tempDir(), "pipe");
  execFileSync("mkfifo", [fifo]);
  const io = interruptibleIo();
  const running = main(["--db", v11Copy(), "export", fifo], io);
  const started = Date.now();
  while (!io.listening && Date.now() - started < 10_000) await delay(20);
  await delay(200); // the open now waits for a reader
  io.interrupt();
  assert.equal(await running, 130, io.err);
  assert.match(io.err, /interrupted by SIGINT: nothing was written/);
});

test("a write to a pipe whose reader left says so in words", () => {
  assert.equal(
    writeFailureReason(Object.assign(new Error("Broken pipe (os error 32)"), { code: "EPIPE" })),
    "the program reading it stopped (broken pipe)",
  );
});

test("backup to an empty file name is a usage error that names it", async () => {
  const run = await runCli(["--db", v11Copy(), "backup", ""]);
  assert.equal(run.code, 2, run.err);
  assert.equal(
    run.err,
    'hermes-state backup: DEST is empty (""): give a file name\nTry: hermes-state backup --help\n',
  );
});

test("origins --remove on an older file refuses it without upgrading it", async () => {
  const db = copyFixture("hermes-v10-external.db");
  chmodSync(db, 0o600);
  const before = readFileSync(db);
  const run = await runCli(["--db", db, "origins", "--remove", "laptop"]);
  assert.equal(run.code, 1, run.err);
  assert.match(run.err, /origins needs a PostgreSQL store/);
  assert.deepEqual(readFileSync(db), before);
});

test("recover into an empty, a NUL or a too-long DEST says so in one line, before reading", async () => {
  const source = v11Copy();
  const empty = await runCli(["recover", source, ""]);
  assert.equal(empty.code, 2, empty.err);
  assert.match(empty.err, /^hermes-state recover: DEST is empty \(""\): give a file name\n/);
  const cases: [string, RegExp][] = [
    [join(tempDir(), "new\u0000.db"), /a file name cannot contain a NUL character$/m],
    [join(tempDir(), `${"a".repeat(300)}.db`), /the name is too long$/m],
  ];
  for (const [dest, reason] of cases) {
    const run = await runCli(["recover", source, dest]);
    assert.equal(run.code, 1, run.err);
    assertOneLine(run.err, /^hermes-state: Cannot recover into /);
    assert.match(run.err, reason);
  }
});
