/**
 * A synced session deleted on the server (`delete`, `prune`) while a `sync`
 * pass of its file runs loses nothing the file holds: the pass does not
 * re-create it holding only the messages it appends (its record would say
 * the server holds them all, and no later pass would ship the rest), and
 * the next pass ships it whole. A delete between the pass's read of its
 * records and its first write does not fail the pass either. The
 * interleavings are real: the deleting transaction is held open on the
 * server until the pass waits for it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { freshSchema, PG_SKIP, PG_URL, schemaUrl } from "./_pg.ts";

/** Resolves once a statement of another connection waits for a lock (10 s at most). */
async function someoneWaits(client: PgClient): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const rows = await client.query(
      `SELECT 1 FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no statement waited for the held lock");
}

/** Runs `fn` in a transaction held open until `release` resolves. */
function heldTransaction(
  client: PgClient,
  fn: (query: Parameters<Parameters<PgClient["transaction"]>[0]>[0]) => Promise<void>,
): { ready: Promise<void>; commit: () => void; done: Promise<void> } {
  let commit!: () => void;
  const released = new Promise<void>((resolve) => commit = resolve);
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => ready = resolve);
  const done = client.transaction(async (query) => {
    await fn(query);
    ready();
    await released;
  });
  done.catch(() => ready());
  return { ready: readyPromise, commit, done };
}

/** The contents of a session's messages on the server, in order. */
async function serverContents(url: string, id: string): Promise<unknown[]> {
  await using store = await openStore(url);
  return (await store.getMessages(id)).map((m) => m.content);
}

/** A file with session x (3 messages) and y (1), synced as origin A; then 2 more for x. */
async function syncedThenAppended(
  client: PgClient,
  syncFile: typeof import("../../lib/postgres/sync.ts").syncFile,
): Promise<string> {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  db.createSession("x", "cli");
  db.createSession("y", "cli");
  for (const content of ["x0", "x1", "x2"]) db.appendMessage("x", { role: "user", content });
  db.appendMessage("y", { role: "user", content: "y0" });
  await syncFile(client, path, { origin: "A", host: "h" });
  for (const content of ["x3", "x4"]) db.appendMessage("x", { role: "user", content });
  db.close();
  return path;
}

describe("sync and a delete on the server at once", { skip: PG_SKIP }, () => {
  test("deleted while the pass writes it: not re-created in part; the next pass ships it whole", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const { deleteSessionsWhere } = await import("../../lib/postgres/_prune.ts");
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const client = await connectSyncTarget(url);
    const admin = await connectPg(PG_URL!, schema, { max: 2 });
    try {
      const path = await syncedThenAppended(client, syncFile);
      // The store's delete, its transaction held open: the pass reads the records (x still
      // there), takes its token, and waits for x's row in its batch.
      const deleting = heldTransaction(admin, async (query) => {
        await query(`SET LOCAL search_path TO "${schema}"`);
        assert.deepEqual(await deleteSessionsWhere(query, "id = $1", ["A/x"]), ["A/x"]);
      });
      await deleting.ready;
      const pass = syncFile(client, path, { origin: "A", host: "h" });
      pass.catch(() => {});
      await someoneWaits(admin);
      deleting.commit();
      await deleting.done;
      await pass;
      // Never x holding only x3 and x4.
      const after = await serverContents(url, "A/x");
      assert.ok(after.length === 0 || after.length === 5, JSON.stringify(after));
      await syncFile(client, path, { origin: "A", host: "h" });
      assert.deepEqual(await serverContents(url, "A/x"), ["x0", "x1", "x2", "x3", "x4"]);
      assert.deepEqual(await serverContents(url, "A/y"), ["y0"]);
    } finally {
      await admin.close();
      await client.close();
    }
  });

  test("deleted between the pass's read and its first write: the pass goes on", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const client = await connectSyncTarget(url);
    const admin = await connectPg(PG_URL!, schema, { max: 2 });
    try {
      const path = await syncedThenAppended(client, syncFile);
      // The origin's row held: the pass reads its records, then waits to take its token.
      const holding = heldTransaction(admin, async (query) => {
        await query(`SELECT 1 FROM "${schema}".sync_origins WHERE origin = 'A' FOR UPDATE`);
      });
      await holding.ready;
      const pass = syncFile(client, path, { origin: "A", host: "h" });
      pass.catch(() => {});
      await someoneWaits(admin);
      {
        await using store = await openStore(url);
        assert.equal(await store.deleteSession("A/y"), true);
        assert.equal(await store.deleteSession("A/x"), true);
      }
      holding.commit();
      await holding.done;
      await pass;
      const after = await serverContents(url, "A/x");
      assert.ok(after.length === 0 || after.length === 5, JSON.stringify(after));
      await syncFile(client, path, { origin: "A", host: "h" });
      assert.deepEqual(await serverContents(url, "A/x"), ["x0", "x1", "x2", "x3", "x4"]);
      assert.deepEqual(await serverContents(url, "A/y"), ["y0"]);
    } finally {
      await admin.close();
      await client.close();
    }
  });
});
