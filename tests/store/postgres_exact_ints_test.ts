/**
 * What PostgreSQL holds exactly comes back exactly: an export (`export
 * --db postgres://…`, `exportSession`, `iterateExport`, a `copy` from the
 * server to a file) gives an integer beyond 2^53 (a token count, a message
 * id) as a `bigint`, as the SQLite engine's export does, where a JS number
 * rounds it (`9007199254740993` read as `9007199254740992`, and two message
 * ids became one, which the copy back then renumbered). Within the safe
 * range values stay numbers, and ordinary reads keep numbers, on both engines.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { adminSql, freshSchema, openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";
import type { SessionExport } from "../../lib/core/types.ts";

/** The fixture's session the big values are written into. */
const SESSION = "20260429_090322_3762ca";

/** 2^53 + 1: the first integer a JS number rounds. */
const BEYOND = "9007199254740993";

/** Session counters set by hand in the file, as digits. */
const COUNTERS: Record<string, string> = {
  input_tokens: BEYOND,
  output_tokens: `-${BEYOND}`,
  cache_read_tokens: "9007199254740991",
  api_call_count: "9223372036854775807",
};

/** A copy of the v11 fixture with the counters and one message's token count beyond 2^53. */
async function fileWithBigCounters(): Promise<{ path: string; message: number }> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  const sets = Object.entries(COUNTERS).map(([c, digits]) => `${c} = ${digits}`).join(", ");
  raw.exec(`UPDATE sessions SET ${sets} WHERE id = '${SESSION}'`);
  const row = raw.prepare("SELECT max(id) AS id FROM messages WHERE session_id = ?").get(SESSION);
  const message = Number(row?.id);
  raw.exec(`UPDATE messages SET token_count = ${BEYOND} WHERE id = ${message}`);
  raw.exec(`UPDATE messages SET token_count = 1.5 WHERE id = ${message - 1}`);
  return { path, message };
}

/** A column of a file's row as SQLite holds it: its storage class and its digits. */
async function stored(path: string, sql: string): Promise<[string, string][]> {
  using raw = await rawOpen(path, true);
  return raw.prepare(sql).all().map((row) => [String(row.type), String(row.text)]);
}

describe("PostgreSQL export keeps integers beyond 2^53", { skip: PG_SKIP }, () => {
  test("token counts: file → PostgreSQL → export and file, every digit, as the SQLite engine gives them", async () => {
    const { path, message } = await fileWithBigCounters();
    const schema = freshSchema();
    const url = schemaUrl(schema);
    assert.equal((await runCli(["copy", path, url])).code, 0);

    await using server = await openPgStore({}, schema);
    let exported: SessionExport | undefined;
    for await (const record of server.iterateExport()) if (record.id === SESSION) exported = record;
    const one = await server.exportSession(SESSION);
    using file = await SessionDB.open({ path, readonly: true });
    const expected = file.exportSession(SESSION)!;
    for (const record of [exported!, one!]) {
      assert.equal(record.input_tokens, BigInt(BEYOND));
      assert.equal(record.output_tokens, -BigInt(BEYOND));
      assert.equal(record.api_call_count, 9223372036854775807n);
      // Within the safe range: a number, as SQLite's export gives it.
      assert.equal(record.cache_read_tokens, 9007199254740991);
      assert.equal(typeof record.message_count, "number");
      const last = record.messages.at(-1)!;
      assert.equal(last.token_count, BigInt(BEYOND));
      assert.equal(record.messages.at(-2)!.token_count, 1.5);
      for (const column of [...Object.keys(COUNTERS), "message_count", "tool_call_count"]) {
        assert.deepEqual(
          record[column as keyof SessionExport],
          expected[column as keyof SessionExport],
          column,
        );
      }
      assert.deepEqual(
        record.messages.map((m) => m.token_count),
        expected.messages.map((m) => m.token_count),
      );
    }
    // An ordinary read keeps numbers, as the SQLite engine's does.
    assert.equal(typeof (await server.getSession(SESSION))!.input_tokens, "number");
    assert.equal(typeof file.getSession(SESSION)!.input_tokens, "number");

    const out = join(tempDir(), "out.jsonl");
    assert.equal((await runCli(["export", "--db", url, out])).code, 0);
    const line = readFileSync(out, "utf8").split("\n").find((l) => l.includes(SESSION))!;
    assert.match(line, new RegExp(`"input_tokens": ?${BEYOND}[,}]`));
    assert.match(line, new RegExp(`"output_tokens": ?-${BEYOND}[,}]`));
    assert.match(line, /"api_call_count": ?9223372036854775807[,}]/);
    assert.match(line, new RegExp(`"token_count": ?${BEYOND}[,}]`));

    const back = tempDbPath();
    assert.equal((await runCli(["copy", url, back])).code, 0);
    const columns = Object.keys(COUNTERS);
    const select = (c: string) =>
      `SELECT typeof(${c}) AS type, CAST(${c} AS TEXT) AS text FROM sessions WHERE id = '${SESSION}'`;
    for (const column of columns) {
      assert.deepEqual(await stored(back, select(column)), [["integer", COUNTERS[column]]], column);
    }
    const tokens = `SELECT typeof(token_count) AS type, CAST(token_count AS TEXT) AS text
      FROM messages WHERE session_id = '${SESSION}' ORDER BY timestamp, id`;
    assert.deepEqual(await stored(back, tokens), await stored(path, tokens));
    assert.ok(message > 0);
  });

  test("message ids: the server's ids beyond 2^53 come back exactly, and a copy to a file keeps them", async () => {
    const schema = freshSchema();
    await using server = await openPgStore({}, schema);
    await adminSql(`SELECT setval('"${schema}".messages_id_seq', 9007199254740992)`);
    await server.createSession("big", "cli");
    const texts = ["one", "two", "three"];
    for (const content of texts) await server.appendMessage("big", { role: "user", content });
    const ids = [9007199254740993n, 9007199254740994n, 9007199254740995n];

    assert.deepEqual((await server.exportSession("big"))!.messages.map((m) => m.id), ids);
    const all = await server.exportAll();
    assert.deepEqual(all.find((r) => r.id === "big")!.messages.map((m) => m.id), ids);
    // Small ids stay numbers.
    await server.createSession("small", "cli");
    await adminSql(
      `INSERT INTO "${schema}".messages (id, session_id, role, content, timestamp)
       VALUES (7, 'small', 'user', 'small', 1)`,
    );
    assert.deepEqual((await server.exportSession("small"))!.messages.map((m) => m.id), [7]);

    const out = join(tempDir(), "out.jsonl");
    assert.equal((await runCli(["export", "--db", schemaUrl(schema), out])).code, 0);
    const line = readFileSync(out, "utf8").split("\n").find((l) => l.includes('"big"'))!;
    for (const id of ids) assert.match(line, new RegExp(`"id": ?${id}[,}]`));

    const back = tempDbPath();
    assert.equal((await runCli(["copy", schemaUrl(schema), back])).code, 0);
    const rows = await stored(
      back,
      "SELECT typeof(id) AS type, CAST(id AS TEXT) AS text FROM messages WHERE session_id = 'big' ORDER BY id",
    );
    assert.deepEqual(rows, ids.map((id) => ["integer", String(id)]));
    using file = await SessionDB.open({ path: back, readonly: true });
    assert.deepEqual(file.getMessages("big").map((m) => m.content), texts);
  });

  test("a newer Hermes's integer columns beyond 2^53 come back exactly, their text too", async () => {
    const path = v11Copy();
    {
      using raw = await rawOpen(path);
      raw.exec(`ALTER TABLE sessions ADD COLUMN big INTEGER;
        ALTER TABLE messages ADD COLUMN big INTEGER;
        ALTER TABLE messages ADD COLUMN note TEXT;
        UPDATE sessions SET big = ${BEYOND} WHERE id = '${SESSION}';
        UPDATE messages SET big = -${BEYOND}, note = 'a' || char(0) || 'b' || char(57344)
          WHERE session_id = '${SESSION}';
        UPDATE messages SET big = 1e20
          WHERE id = (SELECT min(id) FROM messages WHERE session_id = '${SESSION}');
        UPDATE messages SET big = 42
          WHERE id = (SELECT max(id) FROM messages WHERE session_id = '${SESSION}');`);
    }
    const schema = freshSchema();
    assert.equal((await runCli(["copy", path, schemaUrl(schema)])).code, 0);
    await using server = await openPgStore({}, schema);
    using file = await SessionDB.open({ path, readonly: true });
    const expected = file.exportSession(SESSION)! as unknown as Record<string, unknown>;
    const pick = (record: SessionExport) => ({
      big: (record as unknown as Record<string, unknown>).big,
      messages: record.messages.map((m) => [(m as Record<string, unknown>).big, m.note]),
    });
    const want = pick(expected as unknown as SessionExport);
    assert.equal(want.big, BigInt(BEYOND));
    assert.deepEqual(want.messages.at(0), [1e20, "a\u0000b\uE000"]);
    assert.deepEqual(want.messages.at(1), [-BigInt(BEYOND), "a\u0000b\uE000"]);
    assert.deepEqual(want.messages.at(-1), [42, "a\u0000b\uE000"]);
    assert.deepEqual(pick((await server.exportSession(SESSION))!), want);
    let exported: SessionExport | undefined;
    for await (const record of server.iterateExport()) if (record.id === SESSION) exported = record;
    assert.deepEqual(pick(exported!), want);
    // An ordinary read keeps numbers, as the SQLite engine's does.
    assert.equal(
      typeof (await server.getSession(SESSION) as Record<string, unknown>).big,
      "number",
    );
  });
});
