/**
 * `syncFile()` when a pass loses its advisory lock with the connection
 * that held it (a network blip, a terminated backend): a second pass of the
 * same file takes the lock while the first goes on on its other
 * connections. The pass token each writing pass takes (migration 8) stops
 * the first, and every message is on the server once.
 *
 * The second pass is given the lock here (its client's `lock` takes
 * nothing) rather than by terminating the first's lock connection: the
 * client package itself then crashes the process from a timer on Bun and
 * Node (porsager/postgres#1066, `socket.write` on a closed socket), which
 * a test cannot catch.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("syncFile() and a pass that lost its lock", { skip: SKIP }, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  test("syncFile() stops a pass whose lock was lost once another pass started: nothing doubled", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const url = schemaUrl(freshSchema());
    const file = tempDbPath();
    const db = await SessionDB.open({ path: file });
    for (let s = 0; s < 5; s++) {
      db.createSession(`s${s}`, "cli");
      for (let m = 0; m < 4; m++) db.appendMessage(`s${s}`, { role: "user", content: `m${m}` });
    }
    const first = await connectSyncTarget(url);
    const second = await connectSyncTarget(url);
    clients.push(first, second);
    // As if the first pass's lock were gone with its connection: the second takes it at once.
    second.lock = () => Promise.resolve(() => Promise.resolve());
    await syncFile(first, file, { origin: "h1", host: "h" });
    for (let s = 0; s < 5; s++) db.appendMessage(`s${s}`, { role: "user", content: "later" });
    const expected = db.messageCount();
    db.close();

    let other: Awaited<ReturnType<typeof syncFile>> | undefined;
    const failure = await syncFile(first, file, {
      origin: "h1",
      host: "h",
      // The pass has read the server's records; a second pass takes the lock and ships the
      // file before this one writes.
      afterSnapshot: async () => {
        other = await syncFile(second, file, { origin: "h1", host: "h" });
      },
    }).then(() => undefined, (error: Error) => error);
    assert.equal(other?.appended, 5);
    await using store = await openStore(url, { readonly: true });
    assert.equal(await store.messageCount(), expected, "each message once");
    assert.equal(failure?.name, "SyncSupersededError", String(failure));
    const again = await syncFile(second, file, { origin: "h1", host: "h" });
    assert.equal(again.messages, 0);
    assert.equal(await store.messageCount(), expected);
  });

  test("syncFile() fails the batches of a pass that another pass's token superseded", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const { startPass } = await import("../../lib/postgres/sync_origin.ts");
    const url = schemaUrl(freshSchema());
    const file = tempDbPath();
    const db = await SessionDB.open({ path: file });
    db.createSession("a", "cli");
    const client = await connectSyncTarget(url);
    clients.push(client);
    await syncFile(client, file, { origin: "h1", host: "h" });
    db.appendMessage("a", { role: "user", content: "new" });
    db.close();
    // A token taken between this pass's own and its write: the pass's transaction refuses.
    let taken = 0;
    await assert.rejects(
      syncFile(client, file, {
        origin: "h1",
        host: "h",
        afterSnapshot: () => {
          // This pass takes its token before its first write; another is taken after it, as a
          // pass that started meanwhile would, before the write's transaction begins.
          const original = client.transaction.bind(client);
          client.transaction = async (fn) => {
            if (taken++ === 0) await startPass(client, "h1");
            return await original(fn);
          };
        },
      }),
      { name: "SyncSupersededError" },
    );
    await using store = await openStore(url, { readonly: true });
    assert.equal(await store.messageCount(), 0, "nothing written");
  });
});
