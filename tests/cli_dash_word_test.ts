/**
 * A word of free text that starts with `-` (a query, a title) is read as an
 * option, as grep reads it: the error (exit 2) says how to give it as text.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { shellWord } from "../lib/cli/dash_word.ts";

describe("a free-text word that starts with a dash", () => {
  test("search --dry-run is an option error that shows the search with --", async () => {
    const db = v11Copy();
    const run = await runCli(["--db", db, "search", "--dry-run"]);
    assert.equal(run.code, 2);
    assert.equal(
      run.err,
      'hermes-state search: unknown option --dry-run; to search for "--dry-run", put -- before ' +
        "it: hermes-state search -- --dry-run\nTry: hermes-state search --help\n",
    );
    assert.equal(run.out, "");
    const suggested = await runCli(["--db", db, "search", "--", "--dry-run"]);
    assert.equal(suggested.code, 0, suggested.err);
    assert.equal(suggested.out, 'No messages match "--dry-run".\n');
  });

  test("the suggested search keeps the options and words typed before the dashed word", async () => {
    const run = await runCli(["--db", v11Copy(), "search", "--role", "user", "docker", "-x"]);
    assert.equal(run.code, 2);
    assert.match(
      run.err,
      /^hermes-state search: unknown option -x; to search for "-x", put -- before it: hermes-state search --role user -- docker -x\n/,
    );
    const quoted = await runCli(["--db", v11Copy(), "search", "--it's", "--limit=2"]);
    assert.match(quoted.err, /put -- before it: hermes-state search -- '--it'\\''s'\n/);
    const controls = await runCli(["--db", v11Copy(), "search", "-a\tb"]);
    assert.match(controls.err, /^hermes-state search: unknown option -a␉b; to search for "-a␉b"/);
  });

  test("rename and show say how to give a title that starts with a dash", async () => {
    const db = v11Copy();
    const rename = await runCli(["--db", db, "rename", V11.oldCli, "-draft-"]);
    assert.equal(rename.code, 2);
    assert.match(
      rename.err,
      new RegExp(
        `^hermes-state rename: unknown option -draft-; to put "-draft-" in the title, put -- ` +
          `before it: hermes-state rename -- ${V11.oldCli} -draft-\n`,
      ),
    );
    const renamed = await runCli(["--db", db, "rename", "--", V11.oldCli, "-draft-"]);
    assert.equal(renamed.code, 0, renamed.err);
    assert.equal(await withDb(db, (d) => d.getSessionTitle(V11.oldCli)), "-draft-");
    const show = await runCli(["--db", db, "show", "-draft-"]);
    assert.equal(show.code, 2);
    assert.match(
      show.err,
      /^hermes-state show: unknown option -draft-; to show the session titled "-draft-", put -- before it: hermes-state show -- -draft-\n/,
    );
    const shown = await runCli(["--db", db, "--json", "show", "--", "-draft-"]);
    assert.equal(shown.code, 0, shown.err);
    assert.equal(JSON.parse(shown.out).id, V11.oldCli);
  });

  test("a command without free text keeps the bare unknown-option error", async () => {
    const run = await runCli(["--db", v11Copy(), "list", "--dry-run"]);
    assert.equal(run.code, 2);
    assert.equal(
      run.err,
      "hermes-state list: unknown option --dry-run\nTry: hermes-state list --help\n",
    );
  });

  test("shellWord() leaves a plain word as it is and single-quotes the rest", () => {
    assert.equal(shellWord("--dry-run"), "--dry-run");
    assert.equal(shellWord("-a b"), "'-a b'");
    assert.equal(shellWord("-$HOME"), "'-$HOME'");
    assert.equal(shellWord("-it's"), "'-it'\\''s'");
  });
});
