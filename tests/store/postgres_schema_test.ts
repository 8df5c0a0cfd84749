/**
 * The PostgreSQL schema's migrations: many processes opening one new schema
 * at once run each step once, and a schema a newer hermes-state upgraded is
 * refused for writing (with a message saying what to do) but still read.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { OpenError } from "../../lib/core/errors.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { adminSql, freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";

describe("PostgreSQL migrations", { skip: PG_SKIP }, () => {
  const stores: SessionStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  test(
    "stores opening one new schema at once run each step once",
    { timeout: 60_000 },
    async () => {
      const url = schemaUrl(freshSchema());
      stores.push(...await Promise.all(Array.from({ length: 6 }, () => openStore(url))));
      const [store] = stores;
      await store.createSession("s", "cli");
      await store.appendMessage("s", { role: "user", content: "opened together" });
      assert.equal((await store.searchMessages("together")).length, 1);
      for (const other of stores) assert.equal(await other.messageCount(), 1);
    },
  );

  test("a schema a newer hermes-state upgraded is refused for writing, and read", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const first = await openStore(url);
    await first.createSession("kept", "cli");
    await first.close();
    await adminSql(
      `INSERT INTO "${schema}".hermes_migrations (step, name) VALUES (999, 'from the future')`,
    );
    await assert.rejects(
      openStore(url),
      (error) =>
        error instanceof OpenError &&
        /upgraded by a newer hermes-state \(migration 999; this one knows up to \d+\): upgrade hermes-state, or open it read-only/
          .test(error.message),
    );
    const reader = await openStore(url, { readonly: true });
    stores.push(reader);
    assert.equal((await reader.getSession("kept"))?.source, "cli");
  });
});
