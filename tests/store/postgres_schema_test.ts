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
import { adminSql, freshSchema, olderSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("PostgreSQL migrations", { skip: SKIP }, () => {
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
    // `hermes-state migrate` leaves it as it is, and says so (no error).
    const { migratePostgresStore } = await import("../../lib/postgres/postgres_store.ts");
    const report = await migratePostgresStore(url);
    assert.deepEqual([report.before, report.after], [999, 999]);
    assert.ok(report.known < 999);
  });
});

describe("PostgreSQL schemas a read-only open cannot read", { skip: SKIP }, () => {
  test("a schema with no store is refused by name, and left absent", async () => {
    const schema = freshSchema();
    await assert.rejects(
      openStore(schemaUrl(schema), { readonly: true }),
      (error) =>
        error instanceof OpenError && error.kind === "not_found" &&
        error.message.includes(`schema "${schema}" holds no hermes-state store yet`),
    );
    const [row] = await adminSql(
      `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = '${schema}'`,
    );
    assert.equal(row.n, 0, "a read-only open creates nothing");
  });

  test("an older schema is refused until migrated, then read", { timeout: 60_000 }, async () => {
    const { LAST_STEP } = await import("../../lib/postgres/schema.ts");
    const schema = await olderSchema(LAST_STEP - 1);
    const url = schemaUrl(schema);
    await assert.rejects(
      openStore(url, { readonly: true }),
      (error) =>
        error instanceof OpenError &&
        error.message.includes(
          `is at migration ${LAST_STEP - 1} and this hermes-state reads migration ${LAST_STEP}`,
        ) && error.message.includes("hermes-state --db URL migrate"),
    );
    const { migratePostgresStore } = await import("../../lib/postgres/postgres_store.ts");
    const report = await migratePostgresStore(url);
    assert.deepEqual([report.before, report.after, report.known], [
      LAST_STEP - 1,
      LAST_STEP,
      LAST_STEP,
    ]);
    assert.equal((await migratePostgresStore(url)).before, LAST_STEP, "a second run finds it done");
    const reader = await openStore(url, { readonly: true });
    try {
      assert.deepEqual(await reader.searchMessages("anything"), []);
    } finally {
      await reader.close();
    }
  });
});

describe("a store whose schema is dropped under it", { skip: SKIP }, () => {
  test("fails its writes and reads; it never falls through to the tables in public", {
    timeout: 60_000,
  }, async () => {
    // A database of its own, whose public schema holds a store (another deployment's, say).
    const database = `t_db_${process.pid}_${crypto.randomUUID().slice(0, 8)}`;
    await adminSql(`CREATE DATABASE "${database}"`);
    const server = new URL(PG_URL!);
    server.pathname = `/${database}`;
    const at = (schema: string) => `${server.href}${server.search ? "&" : "?"}schema=${schema}`;
    try {
      const inPublic = await openStore(at("public"));
      await inPublic.createSession("public-one", "cli");
      const store = await openStore(at("gone"));
      await store.createSession("mine", "cli");
      const { connectPg } = await import("../../lib/postgres/_client.ts");
      const admin = await connectPg(at("public").replace(/[?&]schema=public$/, ""), "public", {
        max: 1,
      });
      await admin.query('DROP SCHEMA "gone" CASCADE');
      await assert.rejects(
        store.createSession("lost", "cli"),
        /relation "sessions" does not exist/,
      );
      // Before, the search path went on to public: this read public's row.
      await assert.rejects(store.getSession("public-one"), /relation "sessions" does not exist/);
      const [rows] = await admin.query("SELECT count(*)::int AS n FROM public.sessions");
      assert.equal(rows.n, 1, "nothing written into public");
      await admin.close();
      await store.close();
      await inPublic.close();
    } finally {
      await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });
});

describe("a schema named with upper-case letters", { skip: SKIP }, () => {
  test("inspect() (info, stats) reads its size as every other read reads it", {
    timeout: 60_000,
  }, async () => {
    // current_schema()::regnamespace read the name as an identifier, folded to lower case:
    // 'schema "upper_…" does not exist'.
    const schema = `Upper_${freshSchema()}`;
    try {
      const store = await openStore(schemaUrl(schema));
      try {
        await store.createSession("s1", "cli");
        await store.appendMessages("s1", [{ role: "user", content: "hello" }]);
        const info = await store.inspect();
        assert.equal(info.sessions, 1);
        assert.ok(info.pageCount > 0, `pages: ${info.pageCount}`);
      } finally {
        await store.close();
      }
    } finally {
      await adminSql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
