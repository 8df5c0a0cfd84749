/**
 * A title handed from one session to another on a host reaches the server:
 * where another origin holds it, the new holder gets it with the origin's
 * suffix, which the old holder gave up in the same pass. It used to get no
 * title at all (the suffixed one counted as the old holder's), until it
 * changed again on its host.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { tempDbPath } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The server's titles of the origin's sessions, by id. */
async function titles(client: PgClient, origin: string): Promise<Record<string, unknown>> {
  const rows = await client.query(
    "SELECT id, title FROM sessions WHERE id LIKE $1 ORDER BY id",
    [`${origin}/%`],
  );
  return Object.fromEntries(rows.map((row) => [row.id, row.title]));
}

describe("sync of a title handed over on a host", { skip: SKIP }, () => {
  test("within one batch, and across batches of one pass", { timeout: 60_000 }, async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(schemaUrl(freshSchema()));
    try {
      const a = tempDbPath();
      const dbA = await SessionDB.open({ path: a });
      dbA.createSession("a1", "cli");
      dbA.setSessionTitle("a1", "T");
      dbA.createSession("a2", "cli");
      dbA.setSessionTitle("a2", "V");
      dbA.close();
      await syncFile(client, a, { origin: "A", host: "h" });

      const b = tempDbPath();
      const dbB = await SessionDB.open({ path: b });
      // q comes before r and p in the file: its batch is written before p's.
      dbB.createSession("q", "cli");
      dbB.createSession("r", "cli");
      dbB.createSession("p", "cli");
      dbB.setSessionTitle("p", "T");
      dbB.createSession("b1", "cli");
      dbB.setSessionTitle("b1", "V");
      await syncFile(client, b, { origin: "B", host: "h" });
      assert.deepEqual(await titles(client, "B"), {
        "B/b1": "V [B]",
        "B/p": "T [B]",
        "B/q": null,
        "B/r": null,
      });

      // One batch: b1 gives "V" up, b2 takes it.
      dbB.setSessionTitle("b1", "W");
      dbB.createSession("b2", "cli");
      dbB.setSessionTitle("b2", "V");
      // Two batches: p gives "T" up in the second (r's 2,000 messages end the first), q
      // takes it in the first.
      dbB.setSessionTitle("p", "U");
      dbB.setSessionTitle("q", "T");
      dbB.appendMessages(
        "r",
        Array.from({ length: 2000 }, (_, i) => ({ role: "user", content: `m${i}` })),
      );
      dbB.close();
      await syncFile(client, b, { origin: "B", host: "h" });
      assert.deepEqual(await titles(client, "B"), {
        "B/b1": "W",
        "B/b2": "V [B]",
        "B/p": "U",
        "B/q": "T [B]",
        "B/r": null,
      });
    } finally {
      await client.close();
    }
  });
});
