/**
 * A state.db moved on its host (`mv`) and synced from its new path without
 * `--origin`: its origin follows it, instead of a second origin shipping
 * every session of the file again beside the first's. A copy beside a file
 * still in place, or another file, is a new origin as before.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, realpathSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { addSessions } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A new folder of its own. */
function folder(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), "hermes-moved-")));
}

describe("sync of a moved state.db", { skip: SKIP }, () => {
  test("the origin follows its file to a new path on the same host", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(schemaUrl(freshSchema()));
    try {
      const old = await addSessions(join(folder(), "state.db"), "a", "b");
      assert.equal((await syncFile(client, old, { host: "h" })).origin, "h");
      const moved = join(folder(), "state.db");
      renameSync(old, moved);
      const db = await SessionDB.open({ path: moved });
      db.appendMessage("a", { role: "assistant", content: "written after the move" });
      db.close();
      const pass = await syncFile(client, moved, { host: "h" });
      assert.equal(pass.origin, "h");
      assert.deepEqual([pass.created, pass.appended, pass.deleted], [0, 1, 0]);
      assert.deepEqual(
        await client.query("SELECT origin, host, path FROM sync_origins"),
        [{ origin: "h", host: "h", path: moved }],
      );
      const [{ n }] = await client.query("SELECT count(*)::int AS n FROM messages");
      assert.equal(n, 3, "each message once");
      // The next pass finds the origin at its new place.
      assert.equal((await syncFile(client, moved, { host: "h" })).messages, 0);
    } finally {
      await client.close();
    }
  });

  test("a copy beside a file still in place, or another file, is a new origin", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(schemaUrl(freshSchema()));
    try {
      const first = await addSessions(join(folder(), "state.db"), "a");
      assert.equal((await syncFile(client, first, { host: "h" })).origin, "h");
      const copy = join(folder(), "state.db");
      copyFileSync(first, copy);
      assert.equal((await syncFile(client, copy, { host: "h" })).origin, "h-2");
      // The first file gone, a file holding none of its sessions is not it.
      const gone = await addSessions(join(folder(), "state.db"), "b");
      assert.equal((await syncFile(client, gone, { host: "h" })).origin, "h-3");
      renameSync(gone, `${gone}.old`);
      const other = await addSessions(join(folder(), "state.db"), "c");
      assert.equal((await syncFile(client, other, { host: "h" })).origin, "h-4");
      // Another host's origin does not follow a file of this one.
      const elsewhere = join(folder(), "state.db");
      renameSync(`${gone}.old`, elsewhere);
      assert.equal((await syncFile(client, elsewhere, { host: "k" })).origin, "k");
      // A file holding one of ten sessions of an origin whose file is gone is not it either.
      const ten = await addSessions(join(folder(), "state.db"), ..."0123456789".split(""));
      assert.equal((await syncFile(client, ten, { host: "h" })).origin, "h-5");
      rmSync(ten);
      const one = await addSessions(join(folder(), "state.db"), "5", "x", "y");
      assert.equal((await syncFile(client, one, { host: "h" })).origin, "h-6");
      // Nor is a file whose origin's folder is gone too (a volume not mounted).
      const dir = folder();
      const unmounted = await addSessions(join(dir, "state.db"), "u");
      assert.equal((await syncFile(client, unmounted, { host: "h" })).origin, "h-7");
      const elsewhereToo = join(folder(), "state.db");
      renameSync(unmounted, elsewhereToo);
      rmSync(dir, { recursive: true });
      assert.equal((await syncFile(client, elsewhereToo, { host: "h" })).origin, "h-8");
      const origins = await client.query("SELECT origin FROM sync_origins ORDER BY origin");
      assert.deepEqual(
        origins.map((row) => row.origin),
        ["h", "h-2", "h-3", "h-4", "h-5", "h-6", "h-7", "h-8", "k"],
      );
    } finally {
      await client.close();
    }
  });
});
