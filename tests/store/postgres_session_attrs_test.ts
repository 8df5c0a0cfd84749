/**
 * `?target_session_attrs=` as libpq reads it: an operator's failover URL (`…?target_session_attrs=read-write`)
 * must open a read-only store on the primary too (the store's own
 * `default_transaction_read_only` made every read command refuse the
 * primary as read-only: "write CONNECTION_DESTROYED"); libpq's default
 * value `any` is accepted, and a value libpq does not know is an error
 * naming it, not an unexpected one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { OpenError } from "../../lib/core/errors.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";

test(
  "a read-write or primary URL opens read-only stores on the primary",
  { skip: PG_SKIP },
  async () => {
    const schema = freshSchema();
    {
      await using writer = await openStore(`${schemaUrl(schema)}&target_session_attrs=read-write`);
      await writer.createSession("s1", "cli");
      await writer.appendMessage("s1", { role: "user", content: "failover docker" });
    }
    for (const attrs of ["read-write", "primary", "any"]) {
      await using reader = await openStore(`${schemaUrl(schema)}&target_session_attrs=${attrs}`, {
        readonly: true,
      });
      assert.equal(await reader.messageCount("s1"), 1, attrs);
      assert.equal((await reader.searchMessages("docker")).length, 1, attrs);
    }
  },
);

test("a read-only URL does not take the primary for a reader", { skip: PG_SKIP }, async () => {
  const schema = freshSchema();
  await (await openStore(schemaUrl(schema))).close();
  await assert.rejects(
    openStore(`${schemaUrl(schema)}&target_session_attrs=read-only&connect_timeout=5`, {
      readonly: true,
    }),
    (error: unknown) => {
      assert.ok(error instanceof OpenError, String(error));
      assert.match(error.message, /no server of the URL is read-only \(\?target_session_attrs=\)/);
      return true;
    },
  );
});

test("an unknown target_session_attrs is named", { skip: PG_SKIP }, async () => {
  await assert.rejects(
    openStore(`${schemaUrl(freshSchema())}&target_session_attrs=readwrite`),
    (error: unknown) => {
      assert.ok(error instanceof OpenError, String(error));
      assert.match(error.message, /target_session_attrs must be one of any, read-write,/);
      assert.match(error.message, /"readwrite"/);
      return true;
    },
  );
});
