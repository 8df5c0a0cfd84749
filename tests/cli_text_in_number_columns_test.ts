/**
 * Text where a number belongs: SQLite keeps `'yesterday'` in a REAL column
 * and `'many'` in an INTEGER one as text (a hand-edited file, another
 * writer). The text commands show `?` for such a time or count, where they
 * printed `NaN-NaN-NaN NaN:NaN` and `NaN messages`, and the Markdown export
 * wrote the session where it stopped with "unexpected error: Invalid time
 * value". The JSON outputs keep the stored text, as Python's would.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";

let path: string;

before(async () => {
  path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, started_at, ended_at, message_count, input_tokens,
                          estimated_cost_usd, title)
      VALUES ('odd', 'cli', 'yesterday', 'x', 'many', 'lots', 'free', 'odd one');
    INSERT INTO messages (session_id, role, content, timestamp, token_count)
      VALUES ('odd', 'user', 'odd paritycc', 'noon', 'ten');
  `);
});

/** The output of `argv` on the file, which must succeed and hold no `NaN`. */
async function shown(argv: readonly string[]): Promise<string> {
  const run = await runCli(["--db", path, ...argv]);
  assert.equal(run.err, "", argv.join(" "));
  assert.equal(run.code, 0, argv.join(" "));
  assert.doesNotMatch(run.out, /NaN|Invalid/, argv.join(" "));
  return run.out;
}

describe("text in a time or count column", () => {
  test("list, show, search and lineage show ? for it", async () => {
    assert.match(await shown(["list"]), /odd one .* \? +cli +odd\n/);
    const show = await shown(["show", "odd"]);
    assert.match(show, /\nStarted +\?\n/);
    assert.match(show, /\nEnded +\?\n/);
    assert.match(show, /\nMessages +\? messages/);
    assert.match(show, /\nTokens +\? in/);
    assert.match(await shown(["search", "paritycc"]), /odd one · odd · cli · \?\n/);
    assert.match(await shown(["lineage", "odd"]), /odd · odd one · cli · \? · \? msg/);
  });

  test("the Markdown and HTML exports write the session", async () => {
    const md = await shown(["export", "-", "--format", "md", "--session-id", "odd"]);
    assert.match(md, /^# odd one\n/);
    assert.match(md, /- \*\*Started:\*\* \?\n/);
    assert.ok(md.includes("odd paritycc"));
    const html = await shown(["export", "-", "--format", "html", "--session-id", "odd"]);
    assert.ok(html.includes("odd paritycc"));
  });

  test("the JSON outputs keep the stored text", async () => {
    const [row] = JSON.parse(await shown(["--json", "search", "paritycc"]));
    assert.equal(row.timestamp, "noon");
    assert.equal(row.session_started, "yesterday");
    const session = JSON.parse(await shown(["--json", "show", "odd"]));
    assert.equal(session.message_count, "many");
  });
});
