/**
 * `copy` to PostgreSQL writes a message's `tool_calls` as the file holds
 * it when that text is not JSON (`a_b`, `{bad`: another writer's), as a
 * copy to a file does: the column was written NULL (its text only carried
 * in `extra_columns`), so the server's `getMessages` gave `null` where the
 * file gives `[]`, and a search for a word of it found the file's message
 * and not the server's.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { adminSql, freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";

describe("copy of tool calls that are not JSON to PostgreSQL", { skip: PG_SKIP }, () => {
  test("the column holds the file's text; reads, search and a copy back answer as the file", async () => {
    const path = v11Copy();
    {
      using raw = await rawOpen(path);
      raw.exec(`INSERT INTO sessions (id, source, started_at) VALUES ('tc', 'cli', 1777400000);
        INSERT INTO messages (session_id, role, content, timestamp, tool_calls)
          VALUES ('tc', 'assistant', 'one', 1777400001, 'zanzibar_call'),
                 ('tc', 'assistant', 'two', 1777400002, '{bad');`);
    }
    const schema = freshSchema();
    assert.equal((await runCli(["copy", path, schemaUrl(schema)])).code, 0);
    const stored = await adminSql(
      `SELECT tool_calls FROM "${schema}".messages WHERE session_id = 'tc' ORDER BY timestamp`,
    );
    assert.deepEqual(stored.map((row) => row.tool_calls), ["zanzibar_call", "{bad"]);

    await using server = await openStore(schemaUrl(schema));
    await using file = await openStore(path, { readonly: true });
    for (const store of [file, server]) {
      const calls = (await store.getMessages("tc")).map((m) => m.tool_calls);
      assert.deepEqual(calls, [[], []], store.engine);
      const hits = await store.searchMessages("zanzibar_call", { sessionId: "tc" });
      assert.deepEqual(hits.map((h) => h.session_id), ["tc"], store.engine);
    }
    // Back to a file: the same text, and the export the same record.
    const back = `${path}.back.db`;
    assert.equal((await runCli(["copy", schemaUrl(schema), back])).code, 0);
    using copied = await SessionDB.open({ path: back, readonly: true });
    using source = await SessionDB.open({ path, readonly: true });
    assert.deepEqual(copied.exportSession("tc")?.messages.map((m) => m.tool_calls), [[], []]);
    {
      using raw = await rawOpen(back, true);
      const texts = raw.prepare(
        "SELECT tool_calls FROM messages WHERE session_id = 'tc' ORDER BY timestamp",
      ).all().map((row) => row.tool_calls);
      assert.deepEqual(texts, ["zanzibar_call", "{bad"]);
    }
    assert.deepEqual(
      (await server.exportSession("tc"))?.messages.map((m) => m.tool_calls),
      source.exportSession("tc")?.messages.map((m) => m.tool_calls),
    );
  });
});
