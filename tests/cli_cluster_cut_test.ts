/**
 * `lineage` and `stats` cut a long title at 40 columns by code point (and
 * `search` a message beside a hit at 110), so a cut could fall inside an emoji cluster: between the two regional
 * indicators of a flag (the half left over pairs with nothing, or with the
 * next flag a terminal shows), or after a ZERO WIDTH JOINER. They now cut
 * between grapheme clusters, as `list` does.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, V11, v11Copy } from "./_cli_io.ts";

const FLAG = "🇯🇵";
/** 25 flags: 50 columns, cut to 19 flags and `…` (39 columns). */
const FLAGS = FLAG.repeat(25);
const CUT = `${FLAG.repeat(19)}…`;

let path: string;

before(async () => {
  path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    UPDATE sessions SET title = '${FLAGS}' WHERE id = '${V11.compressionRoot}';
    INSERT INTO sessions (id, source, started_at) VALUES ('flag_talk', 'cli', 1777453510);
    INSERT INTO messages (session_id, role, content, timestamp) VALUES
      ('flag_talk', 'user', '${FLAG.repeat(60)}', 1777453510),
      ('flag_talk', 'assistant', 'zebraneedle', 1777453511);
  `);
});

describe("a long title is cut between clusters", () => {
  test("lineage", async () => {
    const run = await runCli(["--db", path, "lineage", V11.compressionRoot]);
    assert.equal(run.code, 0, run.err);
    const line = run.out.split("\n").find((l) => l.includes(V11.compressionRoot))!;
    assert.ok(line.includes(` ${CUT} `), line);
  });

  test("stats, most tokens", async () => {
    const run = await runCli(["--db", path, "stats"]);
    assert.equal(run.code, 0, run.err);
    const line = run.out.split("\n").find((l) => l.includes(V11.compressionRoot))!;
    assert.ok(line.endsWith(`  ${CUT}`), line);
  });

  test("search, a message beside a hit", async () => {
    const run = await runCli(["--db", path, "search", "zebraneedle"]);
    assert.equal(run.code, 0, run.err);
    // "user: " and 51 flags: 108 columns; one more would pass the 109 before `…`.
    assert.ok(run.out.includes(`\n     user: ${FLAG.repeat(51)}…\n`), run.out);
  });
});
