import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadCommands } from "../lib/cli/command_table.ts";
import { VERSION } from "../lib/core/version.ts";
import { ROOT, tempDir } from "./_helpers.ts";
import { recordingIo, runCli, v11Copy } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";

const COMMANDS = await loadCommands();

describe("main()", () => {
  test("main() prints the version of deno.json when given --version", async () => {
    const deno = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8"));
    assert.equal(VERSION, deno.version);
    const run = await runCli(["--version"]);
    assert.equal(run.code, 0);
    assert.equal(run.out, `hermes-state ${deno.version}\n`);
    assert.equal((await runCli(["-V"])).out, run.out);
  });

  test("main() prints the command list on stdout and exits 0 for --help", async () => {
    const run = await runCli(["--help"]);
    assert.equal(run.code, 0);
    assert.equal(run.err, "");
    for (const command of COMMANDS) assert.match(run.out, new RegExp(`^  ${command.name} `, "m"));
  });

  test("every help text fits an 80-column terminal", async () => {
    const texts = [(await runCli(["--help"])).out];
    for (const command of COMMANDS) texts.push((await runCli([command.name, "--help"])).out);
    const wide = texts.flatMap((text) => text.split("\n")).filter((line) => line.length > 80);
    assert.deepEqual(wide, []);
  });

  test("main() prints the usage on stderr and exits 2 when no command is given", async () => {
    const run = await runCli([]);
    assert.equal(run.code, 2);
    assert.equal(run.out, "");
    assert.match(run.err, /^hermes-state: look inside/);
  });

  test("main() prints a command's usage for <command> --help, -h and help <command>", async () => {
    const a = await runCli(["search", "--help"]);
    const b = await runCli(["search", "-h", "--bogus"]);
    const c = await runCli(["help", "search"]);
    const d = await runCli(["--help", "search"]);
    for (const run of [a, b, c, d]) {
      assert.equal(run.code, 0);
      assert.match(run.out, /^Usage: hermes-state search /);
    }
  });

  test("main() suggests the command a mistyped name most likely meant", async () => {
    for (
      const [typed, meant] of [["lsit", "list"], ["serach", "search"], ["vacum", "vacuum"], [
        "sho",
        "show",
      ]]
    ) {
      const run = await runCli([typed]);
      assert.equal(run.code, 2);
      assert.equal(
        run.err,
        `hermes-state: unknown command "${typed}"; did you mean "${meant}"?\nTry: hermes-state --help\n`,
      );
    }
  });

  test("main() names a refused Deno permission in one line, even when env cannot be read", async () => {
    const refused = (what: string) => {
      const error = new Error(`Requires ${what}, run again with the --allow-env flag`);
      error.name = "NotCapable";
      return error;
    };
    const io = recordingIo();
    const run = await main(["--db", v11Copy(), "list"], {
      ...io,
      env: () => {
        throw refused('env access to "COLUMNS"');
      },
    });
    assert.equal(run, 1);
    assert.equal(
      io.err,
      'hermes-state: missing permission --allow-env (Requires env access to "COLUMNS"): ' +
        'run it as "deno run -A cli.ts"\n',
    );
  });

  test("main() exits 2 with one line and a Try hint for an unknown command", async () => {
    const run = await runCli(["frobnicate"]);
    assert.equal(run.code, 2);
    assert.equal(run.err, 'hermes-state: unknown command "frobnicate"\nTry: hermes-state --help\n');
  });

  test("main() exits 2 with the command's hint for an unknown option", async () => {
    const run = await runCli(["list", "--colour"]);
    assert.equal(run.code, 2);
    assert.equal(
      run.err,
      "hermes-state list: unknown option --colour\nTry: hermes-state list --help\n",
    );
  });

  test("main() exits 2 when a required argument is missing or a value is bad", async () => {
    const missing = await runCli(["show"]);
    assert.equal(missing.code, 2);
    assert.equal(missing.err.split("\n")[0], "hermes-state show: missing ID|PREFIX|TITLE");
    const bad = await runCli(["list", "--limit", "-1"]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.err,
      /^hermes-state list: --limit must be a whole number of at least 1, got "-1"\n/,
    );
    const noDb = await runCli(["--db"]);
    assert.equal(noDb.code, 2);
    assert.equal(noDb.err, "hermes-state: option --db needs a value\nTry: hermes-state --help\n");
  });

  test("main() exits 1 with one line and no stack when the database file is missing", async () => {
    const path = join(tempDir(), "missing.db");
    const dest = join(tempDir(), "dest.db");
    for (
      const command of [["list"], ["migrate"], ["doctor"], ["doctor", "--fix"], ["backup", dest], [
        "info",
      ], ["vacuum"]]
    ) {
      const run = await runCli(["--db", path, ...command]);
      assert.equal(run.code, 1);
      assert.equal(
        run.err,
        `hermes-state: No database at ${path} (give --db PATH, or set HERMES_STATE_DB or HERMES_HOME)\n`,
      );
      assert.equal(run.out, "");
    }
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(dest), false);
  });

  test("main() names a missing database given as an argument the same way in every command", async () => {
    const path = join(tempDir(), "missing.db");
    const dest = join(tempDir(), "dest.db");
    for (
      const argv of [
        ["recover", path, dest],
        ["copy", path, dest],
        ["sync", path, "--to", "postgres://localhost:1/none"],
      ]
    ) {
      const run = await runCli(argv);
      assert.equal(run.code, 1, argv[0]);
      assert.equal(run.err, `hermes-state: No database at ${path}\n`, argv[0]);
      assert.equal(run.out, "");
    }
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(dest), false);
  });

  test("main() exits 1 with one line when the file is not a database", async () => {
    const path = join(tempDir(), "junk.db");
    writeFileSync(path, "this is not sqlite, just text ".repeat(200));
    const run = await runCli(["list", "--db", path]);
    assert.equal(run.code, 1);
    assert.equal(run.err.split("\n").length, 2, run.err);
    assert.match(run.err, /^hermes-state: Cannot open database ".*junk\.db"/);
    assert.doesNotMatch(run.err, /\n\s+at /);
  });

  test("main() takes --db and --json before or after the command", async () => {
    const path = v11Copy();
    const before = await runCli(["--db", path, "--json", "list", "--limit", "2"]);
    const after = await runCli(["list", "--limit=2", "--json", `--db=${path}`]);
    assert.equal(before.code, 0);
    assert.equal(before.out, after.out);
    assert.equal(JSON.parse(before.out).length, 2);
  });

  test("main() opens the file named by --db instead of the default one", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "info", "--no-check", "--json"]);
    assert.equal(JSON.parse(run.out).path, path);
  });

  test("main() colours output only on a terminal without NO_COLOR", async () => {
    const path = v11Copy();
    const plain = await runCli(["--db", path, "list", "--limit", "3"]);
    const coloured = await runCli(["--db", path, "list", "--limit", "3"], { isTerminal: true });
    const noColor = await runCli(["--db", path, "list", "--limit", "3"], {
      isTerminal: true,
      env: { NO_COLOR: "1" },
    });
    assert.ok(!plain.out.includes("\x1b["));
    assert.ok(coloured.out.includes("\x1b["));
    assert.equal(noColor.out, plain.out);
  });

  test("main() reports an unexpected error in one line, with the stack only on request", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "list"], {
      now: () => {
        throw new Error("clock broke");
      },
    });
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      "hermes-state: unexpected error: clock broke\n(set HERMES_STATE_DEBUG=1 to see where it happened)\n",
    );
    const debug = await runCli(["--db", path, "list"], {
      now: () => {
        throw new Error("clock broke");
      },
      env: { HERMES_STATE_DEBUG: "1" },
    });
    assert.match(debug.err, /\n\s+at /);
  });

  test("main() names a --db that is a URL of another kind, not 'No database at'", async () => {
    for (const db of ["mysql://u@h/db", "http://example.com/state.db"]) {
      const run = await runCli(["--db", db, "list"]);
      assert.equal(run.code, 1, db);
      assert.equal(
        run.err,
        `hermes-state: Cannot open database "${db}": not a store this version opens: give a ` +
          "file path, sqlite:PATH or a postgres:// URL\n",
      );
    }
  });

  test("main() tells a --db given as a SQLite URI or a sqlite:// URL the path to type instead", async () => {
    const told = {
      "file:/tmp/state.db":
        "SQLite URIs (file:) are not taken: give the file's path instead (/tmp/state.db)",
      "file:///tmp/state.db?mode=ro":
        "SQLite URIs (file:) are not taken: give the file's path instead (/tmp/state.db)",
      "sqlite:///tmp/state.db":
        "not a store this version opens: write sqlite:PATH without the slashes (sqlite:/tmp/state.db), or the path itself",
    };
    for (const [db, reason] of Object.entries(told)) {
      const run = await runCli(["--db", db, "list"]);
      assert.equal(run.code, 1, db);
      assert.equal(run.err, `hermes-state: Cannot open database "${db}": ${reason}\n`);
    }
    // Named as a command's argument, not "No database at file:…".
    const dest = join(tempDir(), "dest.db");
    for (const argv of [["copy", "file:x.db", dest], ["recover", "file:x.db", dest]]) {
      const run = await runCli(argv);
      assert.equal(run.code, 1, argv.join(" "));
      assert.equal(
        run.err,
        'hermes-state: Cannot open database "file:x.db": SQLite URIs (file:) are not taken: ' +
          "give the file's path instead (x.db)\n",
      );
    }
    assert.equal(existsSync(dest), false);
  });

  test("main() names a file found damaged mid-read, with doctor and recover", async () => {
    const path = v11Copy();
    // Zero four pages in the middle, where the messages' rows are.
    const bytes = readFileSync(path);
    const pages = bytes.length / 4096;
    bytes.fill(0, Math.floor(pages / 2) * 4096, (Math.floor(pages / 2) + 4) * 4096);
    writeFileSync(path, bytes);
    const run = await runCli(["--db", path, "export"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      `hermes-state: database disk image is malformed: ${path} is damaged ("hermes-state --db ` +
        `${path} doctor" says where; "hermes-state recover ${path} ` +
        `${path.replace(/\.db$/, "-recovered.db")}" saves what can still ` +
        "be read)\n",
    );
  });
});

test("COMMAND_TABLE names each command by the name its module gives it", async () => {
  const { COMMAND_TABLE } = await import("../lib/cli/command_table.ts");
  assert.deepEqual(COMMANDS.map((c) => c.name), COMMAND_TABLE.map((entry) => entry.name));
});
