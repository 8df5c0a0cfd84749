import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { WriteBusyError } from "../../lib/sqlite/write_busy_error.ts";
import { tempDbPath } from "../_helpers.ts";

test("openStore() waits while another connection holds the write lock during its schema step, then opens", async () => {
  const path = tempDbPath();
  using holder = await SessionDB.open({ path });
  const raw = storeOf(holder).db;
  raw.exec("BEGIN IMMEDIATE");
  const opening = openStore(path);
  await new Promise((resolve) => setTimeout(resolve, 300));
  raw.exec("COMMIT");
  await using store = await opening;
  assert.equal(await store.sessionCount(), 0);
});

test("SessionDB.open() throws WriteBusyError, not OpenError, when the lock stays taken", async () => {
  const path = tempDbPath();
  const holder = await SessionDB.open({ path });
  const raw = storeOf(holder).db;
  raw.exec("BEGIN IMMEDIATE");
  try {
    await assert.rejects(
      SessionDB.open({ path, retry: { maxAttempts: 2, busyTimeoutMs: 0, sleep: () => {} } }),
      (error) => error instanceof WriteBusyError,
    );
  } finally {
    raw.exec("COMMIT");
    holder.close();
  }
});
