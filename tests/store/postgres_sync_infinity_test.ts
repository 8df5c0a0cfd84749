/**
 * `sync` leaves out, and names, a session whose messages hold a timestamp
 * or a token count that is infinite (SQLite keeps `1e999` in a REAL column
 * as Infinity), as it does one whose row holds one and as `copy` refuses
 * them ("must be a finite number"): they shipped, so that the server held
 * a transcript whose export a copy back to a file then refused.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { rawOpen } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { freshSchema, openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";

/** A v11 copy with `time` (a message at -Infinity) and `count` (a token count of Infinity). */
async function fileWithInfinities(): Promise<string> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, started_at) VALUES ('time', 'cli', 1777400000),
      ('count', 'cli', 1777400000);
    INSERT INTO messages (session_id, role, content, timestamp, token_count)
      VALUES ('time', 'user', 'before time', -1e999, 3),
             ('count', 'user', 'countless', 1777400001, 1e999);
  `);
  return path;
}

describe("sync of infinite message values", { skip: PG_SKIP }, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  test("the sessions are named and left out, as copy refuses them", async () => {
    const path = await fileWithInfinities();
    const copied = await runCli(["copy", path, schemaUrl(freshSchema())]);
    assert.match(
      copied.err,
      /time: .*timestamp must be a time in Unix seconds: current value is -Infinity/,
    );
    assert.match(
      copied.err,
      /count: .*token_count must be a finite number: current value is Infinity/,
    );

    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    const pass = await syncFile(client, path, { host: "h", origin: "o" });
    assert.deepEqual(pass.notShipped, [
      { id: "time", reason: "1 of its messages holds a timestamp that is not a number" },
      { id: "count", reason: "1 of the messages to ship holds a token count that is not a number" },
    ]);
    await using store = await openPgStore({}, schema);
    assert.equal(await store.getSession("o/time"), undefined);
    assert.equal(await store.getSession("o/count"), undefined);
  });
});
