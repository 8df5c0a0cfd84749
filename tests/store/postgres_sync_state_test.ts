/**
 * `syncState()` / `restoreSyncState()` of the PostgreSQL store, the records
 * `copy` carries between two servers: what the other store holds already is
 * kept, and an origin that names another file there (or a file it records
 * under another name) is left out with its sessions' records.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { syncedStore } from "../../lib/core/synced_store.ts";
import { ReadonlyError } from "../../lib/core/errors.ts";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture } from "../_helpers.ts";
import { adminSql, freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A schema with `file` synced into it as `origin` from `host`: its URL. */
async function synced(
  file: string,
  origin: string,
  host = "a.example",
  schema = freshSchema(),
): Promise<string> {
  const url = schemaUrl(schema);
  const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
  const client = await connectSyncTarget(url);
  try {
    await syncFile(client, file, { origin, host });
  } finally {
    await client.close();
  }
  return url;
}

describe("the sync records of a PostgreSQL store", { skip: SKIP }, () => {
  test("a file the other store records under another name is left out, with its sessions", {
    timeout: 60_000,
  }, async () => {
    const file = copyFixture("hermes-v11.db");
    await using from = await openStore(await synced(file, "web-1"), { readonly: true });
    const state = await syncedStore(from)!.syncState();
    assert.deepEqual(state.origins.map((o) => [o.origin, o.host]), [["web-1", "a.example"]]);
    assert.equal(state.sessions.length, 42);
    assert.ok(state.sessions.every((s) => s.sessionId === `web-1/${s.sourceId}`));

    // The same file, synced into the other store as "edge": not a second origin for it.
    await using to = await openStore(await synced(file, "edge"));
    const restored = await syncedStore(to)!.restoreSyncState(state);
    assert.deepEqual(restored, { origins: 0, sessions: 0, conflicting: ["web-1"] });
    assert.deepEqual((await syncedStore(to)!.syncOrigins()).map((o) => o.origin), ["edge"]);
  });

  test("a record is added only for a session the store holds; a read-only store refuses", {
    timeout: 60_000,
  }, async () => {
    await using from = await openStore(await synced(copyFixture("hermes-v11.db"), "web-1"));
    const state = await syncedStore(from)!.syncState();
    const target = schemaUrl(freshSchema());
    await using to = await openStore(target);
    // Two of the 42 sessions copied: the origin and their two records.
    for (const { sessionId } of state.sessions.slice(0, 2)) {
      await to.importSession((await from.exportSession(sessionId))!);
    }
    assert.deepEqual(await syncedStore(to)!.restoreSyncState(state), {
      origins: 1,
      sessions: 2,
      conflicting: [],
    });
    await using reader = await openStore(target, { readonly: true });
    await assert.rejects(syncedStore(reader)!.restoreSyncState(state), ReadonlyError);
  });
});

describe("holdSyncPasses()", { skip: SKIP }, () => {
  test("a pass waits until the hold is released, then ships what changed", {
    timeout: 60_000,
  }, async () => {
    const file = copyFixture("hermes-v11.db");
    const url = await synced(file, "web-1");
    await using store = await openStore(url, { readonly: true });
    const hold = await syncedStore(store)!.holdSyncPasses();
    assert.deepEqual(hold.origins, ["web-1"]);
    const db = await SessionDB.open({ path: file });
    const [id] = db.listSessionsRich({ limit: 1 }).map((s) => s.id);
    db.appendMessage(id, { role: "user", content: "while the copy runs" });
    db.close();
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(url);
    try {
      let done = false;
      const pass = syncFile(client, file, { origin: "web-1", host: "a.example" })
        .finally(() => done = true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(done, false, "the pass waits for the hold");
      assert.equal(await store.messageCount(), 197);
      await hold.release();
      assert.equal((await pass).messages, 1);
      assert.equal(await store.messageCount(), 198);
    } finally {
      await client.close();
    }
  });
});

describe("a pass over sessions the server holds without their records", { skip: SKIP }, () => {
  test("replaces what the server holds under their ids, never adds to it", {
    timeout: 60_000,
  }, async () => {
    const file = copyFixture("hermes-v11.db");
    const schema = freshSchema();
    const url = await synced(file, "web-1", "a.example", schema);
    // What a copy made before copies kept the records leaves: the sessions, no records.
    await adminSql(`DELETE FROM "${schema}".sync_sessions; DELETE FROM "${schema}".sync_origins`);
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(url);
    try {
      const pass = await syncFile(client, file, { origin: "web-1", host: "a.example" });
      assert.equal(pass.created, 42);
    } finally {
      await client.close();
    }
    await using store = await openStore(url, { readonly: true });
    assert.equal(await store.messageCount(), 197, "each message once");
  });
});
