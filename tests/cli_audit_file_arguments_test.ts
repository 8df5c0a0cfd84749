/**
 * The arguments that name a file and nothing else (`backup DEST`, `recover
 * SRC DEST`, `copy SRC DEST`, `demo PATH`, `sync FILE`, `import FILE`,
 * `--db`): an empty one is a usage error that names it (exit 2, as
 * `show ""`), not "No database at " or "Cannot back up to : …"; `-`, which
 * `export` and `import` take for standard output and input, never makes a
 * file named "-". And `import` of an input none of whose lines is JSON
 * leaves the database as it was: not there, when it was not. Each CLI runs
 * in a child process whose working folder is a new temporary one, where a
 * file named "-" would land.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { runCli, v11Copy } from "./_cli_io.ts";
import { cliArgv, tempDir } from "./_helpers.ts";

/** Runs the CLI in a child process in the folder `cwd`, with nothing on standard input. */
function cliIn(cwd: string, argv: readonly string[]): { code: number | null; err: string } {
  const [command, ...args] = cliArgv(argv);
  const child = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    input: "",
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 60_000,
  });
  return { code: child.status, err: child.stderr };
}

test('an empty or a "-" file argument is a usage error naming it, and no file is made', () => {
  const db = v11Copy();
  const pg = "postgres://nobody@127.0.0.1:1/none";
  const cases: [string[], RegExp][] = [
    [["--db", db, "backup", ""], /^hermes-state backup: DEST is empty \(""\): give a file name\n/],
    [
      ["--db", db, "backup", "-"],
      /^hermes-state backup: DEST "-" would be a file named "-" \(backup writes no standard output\): give a file name, or \.\/- for that file\n/,
    ],
    [["recover", db, ""], /^hermes-state recover: DEST is empty \(""\)/],
    [["recover", db, "-"], /^hermes-state recover: DEST "-" would be a file named "-"/],
    [
      ["recover", "-", "out.db"],
      /^hermes-state recover: SRC "-" would be a file named "-" \(recover reads no standard input\)/,
    ],
    [["copy", db, ""], /^hermes-state copy: DEST is empty \(""\)/],
    [["copy", db, "-"], /^hermes-state copy: DEST "-" would be a file named "-"/],
    [["copy", "", "out.db"], /^hermes-state copy: SRC is empty \(""\)/],
    [["demo", ""], /^hermes-state demo: PATH is empty \(""\)/],
    [["demo", " "], /^hermes-state demo: PATH is empty \(" "\)/],
    [["demo", "-"], /^hermes-state demo: PATH "-" would be a file named "-"/],
    [["--db", "out.db", "import", ""], /^hermes-state import: FILE is empty \(""\)/],
    [["sync", "", "--to", pg], /^hermes-state sync: FILE is empty \(""\)/],
    [["sync", "-", "--to", pg], /^hermes-state sync: FILE "-" would be a file named "-"/],
    [
      ["--db", "-", "import", "in.jsonl"],
      /^hermes-state import: --db "-": the database is a file or a postgres:\/\/ URL, never standard input or output/,
    ],
    [["--db", "-", "list"], /^hermes-state list: --db "-": the database is a file/],
  ];
  for (const [argv, message] of cases) {
    const dir = tempDir();
    writeFileSync(join(dir, "in.jsonl"), JSON.stringify({ id: "s1", source: "cli" }) + "\n");
    const run = cliIn(dir, argv);
    const shown = JSON.stringify(argv);
    assert.equal(run.code, 2, `${shown}: ${run.err}`);
    assert.match(run.err, message, shown);
    assert.match(run.err, /\nTry: hermes-state \S+ --help\n$/, shown);
    assert.deepEqual(readdirSync(dir), ["in.jsonl"], `${shown} made a file`);
  }
});

test('./- still names a file called "-" where a file is meant', () => {
  const dir = tempDir();
  const run = cliIn(dir, ["--db", v11Copy(), "backup", "./-"]);
  assert.equal(run.code, 0, run.err);
  assert.ok(existsSync(join(dir, "-")));
});

test("import of an input none of whose lines is JSON makes no database", async () => {
  const dir = tempDir();
  const text = join(dir, "notes.txt");
  writeFileSync(text, "not json\nnor this\n");
  const db = join(dir, "new.db");
  const run = await runCli(["--db", db, "import", text]);
  assert.equal(run.code, 1);
  assert.equal(
    run.out,
    "Imported 0 sessions, skipped 0 already present (0 messages written); 2 lines failed.\n",
  );
  assert.match(run.err, /^hermes-state: import: line 1: not valid JSON/);
  assert.equal(existsSync(db), false, "a database was made for an input with nothing to import");
  // A JSON line after the bad ones is imported, into a database made for it.
  writeFileSync(
    text,
    `not json\n${JSON.stringify({ id: "s1", source: "cli", started_at: 1, messages: [] })}\n`,
  );
  const mixed = await runCli(["--db", db, "--json", "import", text]);
  assert.equal(mixed.code, 1);
  assert.equal(JSON.parse(mixed.out).imported, 1);
  assert.ok(existsSync(db));
  // An empty input still makes the database, as an export of an empty store piped in does.
  const empty = join(dir, "empty.db");
  const nothing = await runCli(["--db", empty, "import", "-"], { stdin: "" });
  assert.equal(nothing.code, 0, nothing.err);
  assert.ok(existsSync(empty));
});
