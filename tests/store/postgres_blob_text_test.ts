/**
 * A BLOB where text belongs (Python's sqlite3 stores `bytes` so: a source,
 * a model, a title, a system prompt, a message's role, content, reasoning or
 * tool name) reaches a server as its UTF-8 text, as the file's own readers
 * show it. `sync` wrote `String(bytes)`, "109,111,100,…", and dropped a BLOB
 * title; `copy` stored `null` (the bytes kept aside), so the server's
 * listing showed no model or title, search missed the content, and a BLOB
 * source or role failed the session ("source must be a string"). Copied
 * back to a file, the BLOBs are BLOBs again, byte for byte.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connectSyncTarget, syncFile, wroteAnything } from "../../lib/postgres/sync.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { rawOpen, tempDir } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { join } from "node:path";
import { freshSchema, openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";
import { openStore } from "../../mod.ts";

/** A v11 copy with session `blob_s`, whose text columns hold BLOBs. */
async function fileWithBlobs(): Promise<string> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, model, system_prompt, started_at, message_count, title)
      VALUES ('blob_s', CAST('cli' AS BLOB), CAST('model-x' AS BLOB), CAST('be brief' AS BLOB),
              1777400000, 2, CAST('blob title' AS BLOB));
    INSERT INTO messages (session_id, role, content, timestamp, reasoning)
      VALUES ('blob_s', CAST('user' AS BLOB), CAST('hello paritybb' AS BLOB), 1777400001,
              CAST('thinking' AS BLOB));
    INSERT INTO messages (session_id, role, content, timestamp, tool_name)
      VALUES ('blob_s', 'tool', CAST('tool output' AS BLOB), 1777400002, CAST('terminal' AS BLOB));
  `);
  return path;
}

describe("sync of BLOBs in text columns", { skip: PG_SKIP }, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  test("reach the server as their text, searchable; an unchanged pass writes nothing", async () => {
    const path = await fileWithBlobs();
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    await syncFile(client, path, { host: "h", origin: "test" });
    await using store = await openPgStore({}, schema);
    const session = await store.getSession("test/blob_s");
    assert.equal(session?.source, "cli");
    assert.equal(session?.model, "model-x");
    assert.equal(session?.title, "blob title");
    assert.equal(session?.system_prompt, "be brief");
    const messages = await store.getMessages("test/blob_s");
    assert.deepEqual(
      messages.map((m) => [m.role, m.content, m.reasoning ?? null, m.tool_name]),
      [["user", "hello paritybb", "thinking", null], ["tool", "tool output", null, "terminal"]],
    );
    const hits = await store.searchMessages("paritybb");
    assert.deepEqual(hits.map((hit) => hit.session_id), ["test/blob_s"]);
    const again = await syncFile(client, path, { host: "h", origin: "test" });
    assert.equal(wroteAnything(again), false, JSON.stringify(again));
  });

  test("copy: the server reads them as text; copied back, they are the same BLOBs", async () => {
    const path = await fileWithBlobs();
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const there = await runCli(["copy", path, url]);
    assert.equal(there.code, 0, there.err);
    {
      await using store = await openPgStore({}, schema);
      const session = await store.getSession("blob_s");
      assert.deepEqual(
        [session?.source, session?.model, session?.title, session?.system_prompt],
        ["cli", "model-x", "blob title", "be brief"],
      );
      const messages = await store.getMessages("blob_s");
      assert.deepEqual(messages.map((m) => [m.role, m.content]), [
        ["user", "hello paritybb"],
        ["tool", "tool output"],
      ]);
      assert.deepEqual((await store.searchMessages("paritybb")).map((h) => h.session_id), [
        "blob_s",
      ]);
    }
    const back = join(tempDir(), "back.db");
    const home = await runCli(["copy", url, back]);
    assert.equal(home.code, 0, home.err);
    const typed = (db: string) => {
      const sql = `SELECT typeof(s.source) || typeof(s.model) || typeof(s.title) AS s,
                          hex(s.source) || hex(s.model) || hex(s.title) AS sb,
                          group_concat(typeof(m.role) || typeof(m.content) || hex(m.content)) AS m
                     FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.id = 'blob_s'`;
      return rawOpen(db, true).then((raw) => {
        try {
          return raw.prepare(sql).get();
        } finally {
          raw.close();
        }
      });
    };
    const original = await typed(path);
    assert.equal(original?.s, "blobblobblob");
    assert.deepEqual(await typed(back), original);
  });

  test("copy: a read carries no hermes_state_bytes, an export the file's record (a BLOB column null)", async () => {
    // The server keeps the exact bytes among a row's newer columns; every read gave them as one
    // (`list --json` printed them), and its export gave a BLOB column's text where the file's says null.
    const path = await fileWithBlobs();
    const schema = freshSchema();
    const there = await runCli(["copy", path, schemaUrl(schema)]);
    assert.equal(there.code, 0, there.err);
    await using server = await openPgStore({}, schema);
    await using file = await openStore(path, { readonly: true });
    const rows: Record<string, unknown>[] = [
      (await server.getSession("blob_s"))!,
      ...await server.getMessages("blob_s"),
      ...(await server.listSessionsRich({})).filter((s) => s.id === "blob_s"),
    ];
    assert.equal(rows.length, 4);
    for (const row of rows) assert.equal("hermes_state_bytes" in row, false, JSON.stringify(row));
    const exported = await server.exportSession("blob_s");
    assert.equal(exported?.title, null);
    assert.deepEqual(exported, await file.exportSession("blob_s"));
  });
});
