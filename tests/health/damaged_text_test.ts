/**
 * A message's text damaged in place (bytes overwritten inside its row,
 * every page sound): the coverage check saw only "other text" in each
 * search table, and `doctor --fix` rebuilt them from the damage, dropping
 * the one sound copy of the text, which each table keeps. The check now
 * names the damage and `--fix` takes the text back from the table first.
 * `recover` built its new file from the damage too, and said "Nothing was
 * lost"; it now takes the text back from the same copy.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readFileSync, writeFileSync } from "node:fs";
import { doctor } from "../../lib/health/doctor.ts";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { runCli } from "../_cli_io.ts";

/** Reads one message's stored text as bytes. */
async function contentOf(path: string, id: number): Promise<Uint8Array> {
  using db = await rawOpen(path, true);
  return db.prepare("SELECT CAST(content AS BLOB) AS c FROM messages WHERE id = ?").get(id)!
    .c as Uint8Array;
}

/** A copy of hermes-v11.db with 8 bytes of a long message's text overwritten in the file. */
async function damagedCopy(): Promise<{ path: string; id: number; before: Uint8Array }> {
  const path = copyFixture("hermes-v11.db");
  let id: number;
  {
    using db = await rawOpen(path, true);
    id = Number(
      db.prepare(
        `SELECT id FROM messages WHERE length(content) > 200 AND tool_name IS NULL
         AND tool_calls IS NULL ORDER BY id LIMIT 1`,
      ).get()!.id,
    );
  }
  const before = await contentOf(path, id);
  const file = readFileSync(path);
  const at = file.indexOf(Buffer.from(before.subarray(0, 120)));
  assert.ok(at > 0, "the text is in the file as it is");
  file.set([0x82, 0x3c, 0xfd, 0xe6, 0xf1, 0xc2, 0x6b, 0x30], at + 60);
  writeFileSync(path, file);
  assert.notDeepEqual(await contentOf(path, id), before);
  return { path, id, before };
}

describe("a message's text damaged in place", () => {
  test("doctor names it in each table that holds it whole; --fix takes it back, then rebuilds", async () => {
    const { path, id, before } = await damagedCopy();
    const report = await doctor(path);
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      const coverage = report.checks.find((c) => c.name === `coverage:${table}`)!;
      assert.equal(coverage.status, "problem");
      assert.match(
        coverage.summary,
        /1 message's text is damaged in place \(no longer valid UTF-8\)/,
      );
      assert.deepEqual(coverage.details, [
        `message ${id}: text damaged in place; ${table} holds it`,
      ]);
      assert.match(coverage.fix ?? "", /takes each damaged text back from the table/);
    }
    const fixed = await doctor(path, { fix: true });
    assert.equal(fixed.repairs[0].name, "text");
    assert.match(
      fixed.repairs[0].summary,
      new RegExp(`took back the text of 1 message .*\\(${id}\\)`),
    );
    // Before: the rebuild indexed the damage, and the sound text was gone.
    assert.deepEqual(await contentOf(path, id), before);
    assert.equal(fixed.after?.every((check) => check.status !== "problem"), true);
    using db = await rawOpen(path);
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')");
  });

  test("--fix takes back every damaged text, past the 20 a finding names, before the rebuild", async () => {
    const path = tempDbPath();
    const texts = Array.from(
      { length: 30 },
      (_, i) => `message number ${i}: ${"a long line of words about docker volumes ".repeat(6)}`,
    );
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      for (const content of texts) db.appendMessage("s", { role: "user", content });
      db.close();
    }
    // The leaves of the messages table: each text is also in the search tables' own copies, and
    // the old bytes of a page that split stay in its free space.
    let pages: Set<number>;
    let pageSize: number;
    {
      using db = await rawOpen(path, true);
      pageSize = Number(db.prepare("PRAGMA page_size").get()!.page_size);
      pages = new Set(
        db.prepare(
          "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype IN ('leaf', 'overflow')",
        ).all().map((r) => Number(r.pageno)),
      );
    }
    const file = readFileSync(path);
    for (const text of texts.slice(0, 25)) {
      const needle = Buffer.from(text.slice(0, 40));
      let at = file.indexOf(needle);
      while (at !== -1 && !pages.has(Math.floor(at / pageSize) + 1)) {
        at = file.indexOf(needle, at + 1);
      }
      assert.ok(at > 0, "the text is in a page of the messages table");
      file.set([0xff, 0xfe, 0xfd], at + 30);
    }
    writeFileSync(path, file);
    const report = await doctor(path);
    const coverage = report.checks.find((c) => c.name === "coverage:messages_fts")!;
    assert.match(coverage.summary, /25 messages' texts are damaged in place/);
    // Before: the 20 named were taken back, then the rebuild dropped the copies of the other 5.
    const fixed = await doctor(path, { fix: true });
    assert.match(fixed.repairs[0].summary, /^took back the text of 25 messages .* and 5 more\)$/);
    using db = await SessionDB.open({ path, readonly: true });
    assert.deepEqual(db.getMessages("s").map((m) => m.content), texts);
  });

  test("recover takes the text back from a search table's copy, and the new file's index holds it", async () => {
    const { path, id, before } = await damagedCopy();
    const dest = join(tempDir(), "recovered.db");
    const result = await recoverDatabase(path, dest);
    // Before: the new file held the damaged bytes, its index was built from them.
    assert.deepEqual(result.textsTakenBack, [id]);
    assert.deepEqual(await contentOf(dest, id), before);
    const report = await doctor(dest);
    assert.equal(report.checks.every((check) => check.status !== "problem"), true);
    // The word the damage begins in (it fell on bytes 60 to 67 of the text).
    const text = new TextDecoder().decode(before);
    const word = text.slice(0, 61).match(/\w+$/)![0] + text.slice(61).match(/^\w*/)![0];
    assert.ok(word.length > 3, word);
    using db = await SessionDB.open({ path: dest, readonly: true });
    const hits = db.searchMessages(word, { limit: 100 }).map((hit) => hit.id);
    assert.ok(hits.includes(id), `the text taken back is searchable: ${word}`);
  });

  test("recover's report names the messages whose text it took back", async () => {
    const { path, id } = await damagedCopy();
    const dest = join(tempDir(), "recovered.db");
    const run = await runCli(["recover", path, dest]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      new RegExp(`The text of 1 message was damaged in place .* search index keeps \\(${id}\\)`),
    );
    assert.match(run.out, /Nothing was lost/);
    const json = await runCli(["--json", "recover", path, join(tempDir(), "again.db")]);
    assert.deepEqual(JSON.parse(json.out).texts_taken_back, [id]);
  });
});
