/**
 * A time far in the future: a writer that stores milliseconds where Hermes
 * stores seconds (1796535976606.6) puts the session in the year 58899. The
 * times were cut to a length made for a four-digit year, so `show` printed
 * `Started 58899-12-16 11:16:4`, `search` and `lineage` `58899-12-16 11:1`,
 * and the Markdown export `+058899-12-16 11:16 UTC` without its seconds.
 * Now every part of the time is shown, whatever the year's length.
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
    INSERT INTO sessions (id, source, started_at, title)
      VALUES ('millis', 'cli', 1796535976606.6, 'stored in milliseconds');
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('millis', 'user', 'farfuturecc', 1796535976606.6);
  `);
});

/** The output of `argv` on the file, which must succeed. */
async function shown(argv: readonly string[]): Promise<string> {
  const run = await runCli(["--db", path, ...argv]);
  assert.equal(run.err, "", argv.join(" "));
  assert.equal(run.code, 0, argv.join(" "));
  return run.out;
}

/** A local date of a five-digit year (the zone moves the day and hour). */
const DAY = String.raw`5889\d-\d\d-\d\d`;

describe("a time whose year has five digits", () => {
  test("show prints its seconds, in the details and on the message", async () => {
    const out = await shown(["show", "millis"]);
    assert.match(out, new RegExp(String.raw`\nStarted +${DAY} \d\d:\d\d:\d\d \(`));
    assert.match(out, new RegExp(String.raw`── user · ${DAY} \d\d:\d\d:\d\d ─`));
  });

  test("search and lineage print its hours and minutes", async () => {
    const hit = await shown(["search", "farfuturecc"]);
    assert.match(hit, new RegExp(String.raw`· millis · cli · ${DAY} \d\d:\d\d \(`));
    const tree = await shown(["lineage", "millis"]);
    assert.match(tree, new RegExp(String.raw`· cli · ${DAY} \d\d:\d\d · 0 msg`));
  });

  test("the Markdown export prints its seconds", async () => {
    const md = await shown(["export", "-", "--format", "md", "--session-id", "millis"]);
    assert.match(md, /- \*\*Started:\*\* \+058899-12-16 11:16:46 UTC\n/);
    assert.match(md, /## user · \+058899-12-16 11:16:46 UTC\n/);
  });
});
