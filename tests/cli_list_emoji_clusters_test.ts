/**
 * Emoji of several code points that a terminal draws as one picture, two
 * columns wide: ZERO WIDTH JOINER sequences (👨‍👩‍👧‍👦 is seven code points,
 * four of them wide: it counted 8 columns), a flag (two regional indicators),
 * a keycap. `list` padded a row holding one short by the columns it
 * over-counted, and cut a long title inside a flag, leaving half of it.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { displayWidth, fitToWidth } from "../lib/render/width.ts";

const FAMILY = "👨‍👩‍👧‍👦";
const RAINBOW = "🏳️‍🌈";
const FLAG = "🇯🇵";

let path: string;

before(async () => {
  path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, started_at, title) VALUES
      ('cluster_family', 'cli', 1777453510, '${FAMILY} family'),
      ('cluster_flags', 'cli', 1777453511, '${FLAG.repeat(20)}');
    INSERT INTO messages (session_id, role, content, timestamp) VALUES
      ('cluster_family', 'user', 'kids ${RAINBOW} ok', 1777453510),
      ('cluster_flags', 'user', 'flags', 1777453511);
  `);
});

describe("list counts an emoji cluster as two columns", () => {
  test("displayWidth and fitToWidth work by cluster", () => {
    const scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
    for (const picture of [FAMILY, RAINBOW, FLAG, scotland, "1️⃣", "👍🏽", "❤️‍🔥", "✅", "记"]) {
      assert.equal(displayWidth(picture), 2, picture);
    }
    assert.equal(displayWidth("e\u0301"), 1); // e and a combining acute
    assert.equal(displayWidth("กั"), 1); // Thai: a consonant and a vowel mark above it
    assert.equal(displayWidth("a\u{E0041}b"), 2); // a tag character takes no column
    assert.equal(displayWidth("\x1b[1mab\x1b[0m"), 2);
    assert.equal(fitToWidth(FLAG.repeat(3), 4), `${FLAG}… `);
    assert.equal(fitToWidth(FLAG.repeat(3), 6), FLAG.repeat(3));
    assert.equal(fitToWidth(`ab${FAMILY}cd`, 4), "ab… ");
    assert.equal(fitToWidth(`ab${FAMILY}cd`, 5), `ab${FAMILY}…`);
    assert.equal(fitToWidth(`ab${FAMILY}cd`, 6), `ab${FAMILY}cd`);
    assert.equal(fitToWidth(FAMILY, 3), `${FAMILY} `);
    assert.equal(fitToWidth("记忆记忆", 6), "记忆… ");
    assert.equal(fitToWidth("abc", 5), "abc  ");
  });

  test("rows line up and a cut keeps whole flags", async () => {
    const run = await runCli(["--db", path, "list", "--limit", "100"], {
      env: { COLUMNS: "200" },
    });
    assert.equal(run.code, 0, run.err);
    const lines = run.out.split("\n");
    const previewAt = lines[0].indexOf("Preview");
    const activeAt = lines[0].indexOf("Last Active");
    const family = lines.find((line) => line.endsWith(" cluster_family"));
    assert.ok(family, run.out);
    // The family and " family": 2 + 7 columns; "kids ", the flag, " ok": 5 + 2 + 3.
    const familyStart = `${FAMILY} family${" ".repeat(previewAt - 9)}kids ${RAINBOW} ok`;
    assert.ok(family.startsWith(familyStart), family);
    const gap = family.slice(familyStart.length).match(/^ */)![0].length;
    assert.equal(previewAt + 10 + gap, activeAt, family);

    const flags = lines.find((line) => line.endsWith(" cluster_flags"));
    assert.ok(flags, run.out);
    // 30 columns of title: 14 whole flags and `…` (29), then a space.
    assert.equal(previewAt, 32, lines[0]);
    assert.ok(flags.startsWith(`${FLAG.repeat(14)}… ${" ".repeat(2)}flags `), flags);
  });
});
