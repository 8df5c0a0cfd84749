/**
 * Emoji that terminals draw two columns wide but that sit outside the blocks
 * the width table knew: `✅`, `❌`, `⭐`, `⚡` (below U+1F000) and the newer
 * `🫶`, `🪐` (U+1FA70–1FAFF). Each counted one column, so `list` padded a
 * title or a preview holding one a column short per emoji, and the columns
 * after it stood out of line. Real rows of a real file, measured against
 * widths written out by hand.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { displayWidth } from "../lib/render/width.ts";

let path: string;

before(async () => {
  path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, started_at, title)
      VALUES ('emoji_check', 'cli', 1777453504, '✅ Deploy done ⭐');
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('emoji_check', 'user', '🫶 ok ❌ ⚡', 1777453504);
  `);
});

describe("emoji two columns wide", () => {
  test("displayWidth counts them as two columns", () => {
    for (const emoji of ["✅", "❌", "⭐", "⚡", "⏰", "⌛", "🫶", "🪐", "🟢", "🀄", "🈚"]) {
      assert.equal(displayWidth(emoji), 2, emoji);
    }
    for (const narrow of ["✓", "→", "★", "©"]) assert.equal(displayWidth(narrow), 1, narrow);
  });

  test("list pads a row holding them to the columns of the others", async () => {
    const run = await runCli(["--db", path, "list", "--limit", "100"], {
      env: { COLUMNS: "100" },
    });
    assert.equal(run.code, 0);
    const lines = run.out.split("\n");
    const row = lines.find((line) => line.endsWith(" emoji_check"));
    assert.ok(row, run.out);
    // ✅ and ⭐ take 2 columns each and " Deploy done " 13: 17 of the 32
    // the title has with its gap; 🫶, ❌ and ⚡ 2 each and their 5 other
    // characters (" ok " and a space) 1 each: 11.
    const start = `✅ Deploy done ⭐${" ".repeat(32 - 17)}🫶 ok ❌ ⚡`;
    assert.ok(row.startsWith(start), row);
    const activeAt = lines[0].indexOf("Last Active");
    const gap = row.slice(start.length).match(/^ */)![0].length;
    assert.equal(32 + 11 + gap, activeAt, row);
  });
});
