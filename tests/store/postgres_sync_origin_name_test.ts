/**
 * `--origin NAME` of `sync` is taken as given: a name that is no origin name
 * is refused, never rewritten (rewritten, "web 1" and "web/1" were one
 * origin, as were two long names cut to the same 56 characters, and the
 * second file's pass deleted the first's sessions).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { syncedStore } from "../../lib/core/synced_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { runCli } from "../_cli_io.ts";
import { tempDbPath } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A new file holding the sessions `ids`. */
async function fileWith(...ids: string[]): Promise<string> {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  for (const id of ids) db.createSession(id, "cli");
  db.close();
  return path;
}

describe("sync --origin NAME", { skip: SKIP }, () => {
  test("syncFile() refuses an origin that is no origin name, registering nothing", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const url = schemaUrl(freshSchema());
    const client = await connectSyncTarget(url);
    try {
      const file = await fileWith("a");
      await assert.rejects(
        syncFile(client, file, { origin: "web 1", host: "h" }),
        {
          name: "TypeError",
          message:
            'Cannot sync: origin must be 1 to 64 letters, digits, ".", "_" or "-": current value is "web 1"',
        },
      );
      await assert.rejects(
        syncFile(client, file, { origin: "x".repeat(65), host: "h" }),
        TypeError,
      );
      assert.deepEqual(await client.query("SELECT origin FROM sync_origins"), []);
      // Derived from the host name, a name is still made to fit.
      assert.equal((await syncFile(client, file, { host: "web 1" })).origin, "web-1");
    } finally {
      await client.close();
    }
  });

  test("sync refuses --origin that is no origin name (exit 2), naming it and the form", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    for (const name of ["web 1", "web/1", "é", "x".repeat(65)]) {
      const run = await runCli(["sync", await fileWith("shared"), "--to", url, "--origin", name]);
      assert.equal(run.code, 2, name);
      assert.match(
        run.err,
        new RegExp(
          `--origin must be 1 to 64 letters, digits, "\\.", "_" or "-", got ${
            JSON.stringify(name)
          }`,
        ),
      );
    }
    // Two long names that share their first 56 characters stay two origins, each with its file.
    const long = "gateway-eu-west-1-production-cluster-blue-deployment-node";
    const first = await fileWith("shared", "only-7");
    const second = await fileWith("shared", "only-8");
    for (const [file, name] of [[first, `${long}-07`], [second, `${long}-08`]]) {
      const run = await runCli(["sync", file, "--to", url, "--origin", name]);
      assert.equal(run.code, 0, run.err);
    }
    await using store = await openStore(url, { readonly: true });
    assert.deepEqual(
      (await syncedStore(store)!.syncOrigins()).map((o) => [o.origin, o.sessions]),
      [[`${long}-07`, 2], [`${long}-08`, 2]],
    );
    assert.equal(await store.sessionCount(), 4);
  });
});
