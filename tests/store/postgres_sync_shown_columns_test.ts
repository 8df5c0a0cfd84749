/**
 * `syncFile()` and an edit of a newer Hermes's visibility columns alone
 * (`messages.active`, `compacted`, `display_kind`), made in place on rows
 * the server holds, the session's row untouched and no message added. No
 * pass saw such an edit (only a rewind's `rewind_count` or a compaction's
 * new message made one look), and rows hidden in the file still came up in
 * the server's search; a digest of those columns, read on every pass, sees
 * it now.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { freshSchema, openPgStore, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

const LIVE = "20260501_090000_live01";
const REWOUND = "20260501_110000_rew01";
const COMPACTED = "20260501_120000_comp01";

/** A copy of the schema-21 fixture (never the fixture itself), changed first by `sql`. */
async function v21File(sql = ""): Promise<string> {
  const path = copyFixture("hermes-v21.db");
  if (sql !== "") await edit(path, sql);
  return path;
}

/** Runs `sql` on the file as Hermes would write it (raw, no schema step). */
async function edit(path: string, sql: string): Promise<void> {
  using raw = await rawOpen(path);
  raw.exec(sql);
}

/** The sessions a search finds, with the origin taken off the server's ids. */
async function found(store: SessionStore | SessionDB, query: string): Promise<string[]> {
  const hits = await store.searchMessages(query);
  return hits.map((hit) => String(hit.session_id).replace(/^web-1\//, "")).sort();
}

/** The file's answer to a search, and the server's. */
async function bothFind(
  path: string,
  server: SessionStore,
  query: string,
): Promise<{ file: string[]; server: string[] }> {
  using db = await SessionDB.open({ path, readonly: true });
  return { file: await found(db, query), server: await found(server, query) };
}

describe("sync of a newer Hermes's visibility columns edited alone", { skip: SKIP }, () => {
  const clients: PgClient[] = [];
  const stores: SessionStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const client of clients.splice(0)) await client.close();
  });

  /** A fresh server with `path` synced to it once, as origin `web-1`. */
  async function synced(path: string): Promise<{ client: PgClient; server: SessionStore }> {
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    const server = await openPgStore({}, schema);
    stores.push(server);
    await syncFile(client, path, { host: "web-1" });
    return { client, server };
  }

  test("syncFile() ships a row turned inactive in place, nothing else changed", {
    timeout: 60_000,
  }, async () => {
    const path = await v21File();
    const { client, server } = await synced(path);
    assert.deepEqual(await bothFind(path, server, "handshakes"), {
      file: [REWOUND],
      server: [REWOUND],
    });
    await edit(path, "UPDATE messages SET active = 0 WHERE id = 8");
    const pass = await syncFile(client, path, { host: "web-1" });
    assert.deepEqual([pass.updated, pass.rewritten, pass.appended], [0, 1, 0]);
    assert.deepEqual(await bothFind(path, server, "handshakes"), { file: [], server: [] });
    const again = await syncFile(client, path, { host: "web-1" });
    assert.deepEqual([again.updated, again.messages], [0, 0]);
  });

  test("syncFile() ships a rewound row marked compacted in place", {
    timeout: 60_000,
  }, async () => {
    const path = await v21File();
    const { client, server } = await synced(path);
    assert.deepEqual(await bothFind(path, server, "ZEBRAFISH42"), { file: [], server: [] });
    // A compacted row is searched again, as that Hermes searches it.
    await edit(path, "UPDATE messages SET compacted = 1 WHERE id = 9");
    const pass = await syncFile(client, path, { host: "web-1" });
    assert.equal(pass.rewritten, 1);
    assert.deepEqual(await bothFind(path, server, "ZEBRAFISH42"), {
      file: [REWOUND],
      server: [REWOUND],
    });
  });

  test("syncFile() ships a row marked display_kind = 'hidden' in place", {
    timeout: 60_000,
  }, async () => {
    const path = await v21File("ALTER TABLE messages ADD COLUMN display_kind TEXT");
    const { client, server } = await synced(path);
    await edit(path, "UPDATE messages SET display_kind = 'hidden' WHERE id = 2");
    const pass = await syncFile(client, path, { host: "web-1" });
    assert.deepEqual([pass.rewritten, pass.messages], [1, 4]);
    assert.deepEqual(await bothFind(path, server, "building"), { file: [], server: [] });
    // Shown again: shipped again.
    await edit(path, "UPDATE messages SET display_kind = NULL WHERE id = 2");
    assert.equal((await syncFile(client, path, { host: "web-1" })).rewritten, 1);
    assert.deepEqual(await bothFind(path, server, "building"), { file: [LIVE], server: [LIVE] });
  });

  test(
    "syncFile() records the digest for an earlier release's records, shipping only what changed",
    {
      timeout: 60_000,
    },
    async () => {
      const path = await v21File();
      const { client, server } = await synced(path);
      // As a release before the digest left its records.
      await client.query("UPDATE sync_sessions SET shown_digest = NULL");
      const unchanged = await syncFile(client, path, { host: "web-1" });
      assert.deepEqual([unchanged.updated, unchanged.rewritten, unchanged.messages], [0, 0, 0]);
      const [row] = await client.query(
        "SELECT count(*) AS n FROM sync_sessions WHERE shown_digest IS NULL",
      );
      assert.equal(Number(row.n), 0);
      // An edit that release missed, before the upgrade: shipped by the first pass after it.
      await client.query("UPDATE sync_sessions SET shown_digest = NULL");
      await edit(path, "UPDATE messages SET active = 0 WHERE id = 8");
      const upgraded = await syncFile(client, path, { host: "web-1" });
      assert.deepEqual([upgraded.rewritten, upgraded.messages], [1, 4]);
      assert.deepEqual(await bothFind(path, server, "handshakes"), { file: [], server: [] });
    },
  );

  test(
    "syncFile() ships a session with hidden rows once when its record holds no digest of its newer columns",
    {
      timeout: 60_000,
    },
    async () => {
      // As records of sessions shipped before the file had those columns: the server's rows have
      // none, so all show there. Those with rows hidden in the file are shipped; the others are not.
      const path = await v21File();
      const { client } = await synced(path);
      await client.query("UPDATE sync_sessions SET shown_digest = NULL, extra_digest = NULL");
      const pass = await syncFile(client, path, { host: "web-1" });
      assert.deepEqual([pass.updated, pass.rewritten], [0, 2]);
      const rewritten = await client.query(
        "SELECT source_id FROM sync_sessions WHERE extra_digest IS NOT NULL ORDER BY source_id",
      );
      assert.deepEqual(rewritten.map((r) => r.source_id), [REWOUND, COMPACTED]);
      const again = await syncFile(client, path, { host: "web-1" });
      assert.deepEqual([again.updated, again.messages], [0, 0]);
    },
  );
});
