/**
 * The migration lock is the schema's: a store migrating in one schema keeps
 * openers of another schema of the same database waiting no longer, while
 * many openers of one new schema (and of two at once) still run each step
 * once.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { freshSchema, olderSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { runCli } from "../_cli_io.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** `promise`, or a failure naming `what` once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The steps recorded in `schema`, each with how many times. */
async function recordedSteps(schema: string): Promise<string> {
  const { connectPg } = await import("../../lib/postgres/_client.ts");
  const client = await connectPg(PG_URL!, schema, { max: 1 });
  try {
    const rows = await client.query(
      `SELECT step, count(*)::int AS times FROM "${schema}".hermes_migrations GROUP BY step ORDER BY step`,
    );
    return rows.map((row) => `${row.step}×${row.times}`).join(" ");
  } finally {
    await client.close();
  }
}

describe("PostgreSQL migration lock", { skip: SKIP }, () => {
  const stores: SessionStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  test("a migration held up in one schema keeps no other schema's open waiting", {
    timeout: 60_000,
  }, async () => {
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    // Schema a stops before step 6, which alters `sessions`: with the table locked by another
    // transaction, a's migration waits there while it holds the migration lock.
    const held = await olderSchema(5);
    const blocker = await connectPg(PG_URL!, held, { max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    let locked!: () => void;
    const tableLocked = new Promise<void>((resolve) => locked = resolve);
    const holding = blocker.transaction(async (query) => {
      await query(`LOCK TABLE "${held}".sessions IN ACCESS EXCLUSIVE MODE`);
      locked();
      await released;
    });
    try {
      await tableLocked;
      const migrating = openStore(schemaUrl(held));
      migrating.catch(() => {});
      // Give a's open the time to take its lock and reach the locked table.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const other = await within(
        openStore(schemaUrl(freshSchema())),
        10_000,
        "opening a new schema while another schema migrates",
      );
      stores.push(other);
      await other.createSession("s", "cli");
      assert.equal((await other.getSession("s"))?.id, "s");
      release();
      await holding;
      const upgraded = await migrating;
      stores.push(upgraded);
      await upgraded.createSession("t", "cli");
      assert.equal(await upgraded.sessionCount(), 1);
    } finally {
      release();
      await holding.catch(() => {});
      await blocker.close();
    }
  });

  test("an older hermes-state migrating (the database-wide key, whole) is still waited for", {
    timeout: 60_000,
  }, async () => {
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const older = await connectPg(PG_URL!, "public", { max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    let locked!: () => void;
    const taken = new Promise<void>((resolve) => locked = resolve);
    // The key every migration took before the lock became the schema's.
    const holding = older.transaction(async (query) => {
      await query(`SELECT pg_advisory_xact_lock(${0x6865726d6573})`);
      locked();
      await released;
    });
    try {
      await taken;
      let opened = false;
      const opening = openStore(schemaUrl(freshSchema())).then((store) => {
        opened = true;
        stores.push(store);
        return store;
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(opened, false, "opened while an older version held the migration lock");
      release();
      await holding;
      const store = await opening;
      await store.createSession("after", "cli");
      assert.equal(await store.sessionCount(), 1);
    } finally {
      release();
      await holding.catch(() => {});
      await older.close();
    }
  });

  test("migrate run by several processes at once: one says it created the store", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runCli(["--db", url, "--json", "migrate"])),
    );
    for (const run of runs) assert.equal(run.code, 0, run.err);
    const reports = runs.map((run) => JSON.parse(run.out));
    // Before: each read the store before the lock, and 3 of 4 said they created it.
    assert.equal(reports.filter((report) => report.before === null).length, 1);
    assert.equal(runs.filter((run) => /^created the store/.test(run.err)).length, 1);
    assert.equal(reports.filter((report) => report.upgraded).length, 1);
  });

  test("many openers of two new schemas at once run each step once in each", {
    timeout: 60_000,
  }, async () => {
    const schemas = [freshSchema(), freshSchema()];
    const opened = await Promise.all(
      Array.from({ length: 8 }, (_, i) => openStore(schemaUrl(schemas[i % 2]))),
    );
    stores.push(...opened);
    for (const [i, schema] of schemas.entries()) {
      const store = opened[i];
      await store.createSession(`only-${i}`, "cli");
      await store.appendMessage(`only-${i}`, { role: "user", content: `side ${schema}` });
      const steps = await recordedSteps(schema);
      assert.match(steps, /^1×1( \d+×1)+$/, steps);
    }
    // Each sees its own store only.
    for (const [i, store] of opened.entries()) {
      const sessions = await store.listSessionsRich();
      assert.deepEqual(sessions.map((s) => s.id), [`only-${i % 2}`]);
      assert.equal((await store.searchMessages("side")).length, 1);
    }
  });
});
