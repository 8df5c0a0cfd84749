/**
 * `recover` on damage SQLite reads past without an error: a leaf page of
 * `messages` whose cells were overwritten makes a range scan stop early
 * (a cell's rowid beyond the range) or return rows of damaged cells (a
 * rowid given ten times, a session id of NUL bytes). The indexes, which
 * list every rowid on pages of their own, tell which messages are missing;
 * those no page still holds are reported lost, by id, and nothing else is
 * written. Also: damage that made the page scan size an array from a
 * damaged varint, a range read over 2^62 rowids, damaged schema pages.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { scanPages } from "../../lib/health/_page_scan.ts";
import { copyFixture, rawOpen, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { type Fill, overwrittenCopy } from "./_damaged_files.ts";

/** Page 30 of hermes-v11.db: a leaf of `messages` holding messages 19–33. */
const LEAF = { page: 30, offset: 100, length: 3000 };
const ON_LEAF = Array.from({ length: 15 }, (_, i) => 19 + i);

/** Every message of a file, id → its values as SQLite quotes them. */
async function messagesOf(path: string): Promise<Map<number, string>> {
  using db = await rawOpen(path, true);
  const rows = db.prepare(
    `SELECT id, quote(session_id) || quote(role) || quote(content) || quote(tool_calls) ||
       quote(tool_name) || quote(timestamp) || quote(token_count) || quote(reasoning) AS v
     FROM messages`,
  ).all();
  return new Map(rows.map((row) => [Number(row.id), String(row.v)]));
}

/** The ids the lost ranges of `table` name. */
function lostIds(lost: readonly { table: string; from: number; to: number }[], table: string) {
  return lost.filter((range) => range.table === table)
    .flatMap((range) =>
      Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i)
    );
}

/**
 * Recovers `source` and checks what every recovery must hold: each message
 * written is the original's, exactly; each missing one is reported lost
 * (and only those); no placeholder session was made for a damaged row.
 */
async function recoverExactly(source: string, fixture = "hermes-v11.db") {
  const dest = join(tempDir(), "new.db");
  const result = await recoverDatabase(source, dest);
  const want = await messagesOf(copyFixture(fixture));
  const got = await messagesOf(dest);
  for (const [id, values] of got) assert.equal(values, want.get(id), `message ${id} differs`);
  const missing = [...want.keys()].filter((id) => !got.has(id)).sort((a, b) => a - b);
  assert.deepEqual(
    lostIds(result.lost, "messages").filter((id) => want.has(id)),
    missing,
    "lost: exactly the missing messages",
  );
  assert.equal(result.placeholderSessions, 0, "a session was made up for a damaged row");
  return { result, missing, dest };
}

describe("recover of a messages leaf SQLite reads past without an error", () => {
  const fills: Fill[] = ["random", 0x00, 0xff, 0xee];
  for (const fill of fills) {
    const what = fill === "random" ? "seeded random bytes" : `0x${fill.toString(16)} bytes`;
    test(`recoverDatabase() of hermes-v11.db with 3000 bytes of a messages leaf overwritten by ${what} writes every message of the intact pages and reports the others lost, by id`, async () => {
      const source = overwrittenCopy("hermes-v11.db", { ...LEAF, fill });
      const { result, missing } = await recoverExactly(source);
      assert.ok(missing.length > 0, "the damaged cells' messages came back");
      assert.deepEqual(missing.filter((id) => !ON_LEAF.includes(id)), [], "an intact page's lost");
      assert.equal(result.messages, 197 - missing.length);
      assert.equal(result.sessions, 42);
      assert.equal(result.lossUnknown, false);
      assert.deepEqual(result.duplicates, { sessions: 0, messages: 0, state_meta: 0 });
    });
  }

  test('recover of a messages leaf overwritten by random bytes exits 1 and names the lost ids, never "Nothing was lost"', async () => {
    const source = overwrittenCopy("hermes-v11.db", { ...LEAF, fill: "random" });
    const run = await runCli(["recover", source, join(tempDir(), "new.db")]);
    assert.equal(run.code, 1, run.out + run.err);
    assert.doesNotMatch(run.out, /Nothing was lost/);
    assert.match(run.out, /Lost rowid ranges.*\n {2}messages 23–33\n/);
  });

  test("recoverDatabase() leaves out a row whose timestamp its index contradicts (zeroed in place)", async () => {
    // Page 32 holds messages 34–50; these bytes zero message 37's timestamp and cut its text.
    const source = overwrittenCopy("hermes-v11.db", {
      page: 32,
      offset: 3249,
      length: 821,
      fill: 0x00,
    });
    const { missing } = await recoverExactly(source);
    assert.ok(missing.includes(37), "message 37 was written with a zero timestamp");
  });
});

describe("recover of damage the page scan must bound, and of a damaged schema page", () => {
  test("scanPages() skips and counts a cell whose payload size is damaged, never sizing an array from it", () => {
    const source = overwrittenCopy("hermes-v11.db", { ...LEAF, fill: 0xff });
    let records = 0;
    const scan = scanPages(source, () => records++);
    assert.ok(scan.brokenCells > 0);
    assert.ok(records > 197, "the intact pages' records");
  });

  test(
    "recoverDatabase() of a file whose max(rowid) reads a damaged cell (2^62 away) ends, and counts the loss",
    {
      timeout: 60_000,
    },
    async () => {
      // Page 16 of hermes-v6.db: the last leaf of messages; its last cell gives a rowid of -2^61.
      const source = overwrittenCopy("hermes-v6.db", {
        page: 16,
        offset: 3585,
        length: 475,
        fill: 0xee,
      });
      const { missing } = await recoverExactly(source, "hermes-v6.db");
      assert.ok(missing.length > 0 && missing.length < 10, `${missing.length} messages lost`);
    },
  );

  test("recoverDatabase() of a file whose schema page no longer says messages.id is the rowid keeps every message's id", async () => {
    // "id INTEGER PRIMARY KEY AUTOINCREMENT" becomes "id INTEGER PRI…INCREMENT": SQLite then
    // reads id as a column of its own, NULL in every record; the new file numbered them afresh.
    const source = overwrittenCopy("hermes-v11.db", {
      page: 19,
      offset: 2661,
      length: 13,
      fill: 0xee,
    });
    const { result } = await recoverExactly(source);
    assert.equal(result.messages, 197);
  });

  test("recoverDatabase() of a file whose schema page names a column in damaged bytes reads that table from the pages", async () => {
    const source = overwrittenCopy("hermes-v11.db", {
      page: 19,
      offset: 3431,
      length: 30,
      fill: 0xff,
    });
    const { result } = await recoverExactly(source);
    assert.equal(result.messages, 197);
    assert.equal(result.sessions, 42);
  });
});
