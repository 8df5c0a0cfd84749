/**
 * `sync_origins.departed` (what `sync`'s clone check reads) is a column an
 * older hermes-state can ignore: it is ensured, not recorded as a
 * migration step, so the first host upgraded does not lock the others out
 * of the server (an older version refuses to write to a schema with a step
 * it does not know). On a server at the last step without the column (an
 * older `sync` made it): a read-only open and `doctor` work as before,
 * and this version's `migrate` and `sync` each add the column, the last
 * step left as it was (a role that may not alter the table is told to have
 * the owner run `migrate`). Many connections ensuring it at once end with
 * one column; with the column there, ensuring it takes no table lock.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { addSessions } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import { LAST_STEP } from "../../lib/postgres/schema.ts";
import { runCli } from "../_cli_io.ts";
import { adminSql, freshSchema, olderSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The last step an older hermes-state of this schema's line knows: what it still writes to. */
const OLDER_KNOWS = LAST_STEP;

/** A state.db with the sessions `ids`, each with one message, in a folder of its own. */
async function stateFile(...ids: string[]): Promise<string> {
  return await addSessions(
    join(realpathSync(mkdtempSync(join(tmpdir(), "hermes-additive-"))), "state.db"),
    ...ids,
  );
}

/** The last migration step recorded in `schema`. */
async function lastStep(schema: string): Promise<number> {
  const [row] = await adminSql(`SELECT max(step) AS step FROM "${schema}".hermes_migrations`);
  return Number(row.step);
}

/** How many live `departed` columns `schema`'s `sync_origins` has (0 or 1). */
async function departedColumns(schema: string): Promise<number> {
  const [row] = await adminSql(
    `SELECT count(*)::int AS n FROM pg_attribute
     WHERE attrelid = to_regclass('"${schema}".sync_origins') AND attname = 'departed'
       AND NOT attisdropped`,
  );
  return Number(row.n);
}

/** A schema at the step an older hermes-state knows, without the column (what its `sync` left). */
async function olderServer(): Promise<string> {
  const schema = await olderSchema(OLDER_KNOWS);
  await adminSql(`ALTER TABLE "${schema}".sync_origins DROP COLUMN IF EXISTS departed`);
  assert.equal(await departedColumns(schema), 0);
  return schema;
}

describe("sync_origins.departed, a column older versions ignore", { skip: SKIP }, () => {
  test("this version's sync records no step an older version refuses", async () => {
    const schema = freshSchema();
    const file = await stateFile("s1", "s2");
    const sync = await runCli(["sync", file, "--to", schemaUrl(schema), "--host", "h1"]);
    assert.equal(sync.code, 0, sync.err);
    assert.equal(await lastStep(schema), OLDER_KNOWS, "an older hermes-state still writes here");
    assert.equal(await departedColumns(schema), 1, "the clone check has its column");
    // A pass that deletes a session records it (the clone check's evidence).
    const db = await SessionDB.open({ path: file });
    assert.ok(db.deleteSession("s1"));
    db.close();
    const again = await runCli(["sync", file, "--to", schemaUrl(schema), "--host", "h1"]);
    assert.equal(again.code, 0, again.err);
    const [row] = await adminSql(
      `SELECT array_to_string(departed, ',') AS departed FROM "${schema}".sync_origins`,
    );
    assert.equal(row.departed, "s1");
  });

  test(
    "a server without the column: read-only open and doctor as before; migrate and sync add it",
    {
      timeout: 60_000,
    },
    async () => {
      const schema = await olderServer();
      const url = schemaUrl(schema);
      // An older version's sync shipped a session here.
      await adminSql(
        `INSERT INTO "${schema}".sync_origins (origin, host, path) VALUES ('old', 'old-host', '/x')`,
      );
      const reader = await openStore(url, { readonly: true });
      try {
        assert.deepEqual(await reader.listSessionsRich(), []);
      } finally {
        await reader.close();
      }
      const list = await runCli(["--db", url, "origins"]);
      assert.equal(list.code, 0, list.err);
      assert.match(list.out, /old-host/);
      const doctor = await runCli(["--db", url, "doctor", "--json"]);
      assert.equal(doctor.code, 0, doctor.err + doctor.out);
      const schemaCheck = JSON.parse(doctor.out).checks.find((c: { name: string }) =>
        c.name === "schema"
      );
      assert.equal(schemaCheck.status, "ok", JSON.stringify(schemaCheck));
      // migrate adds it too (what an owner runs for sync roles that may not alter the table).
      const migrate = await runCli(["--db", url, "migrate", "--json"]);
      assert.equal(migrate.code, 0, migrate.err);
      assert.equal(
        migrate.err,
        `migration ${OLDER_KNOWS}, added sync_origins.departed, session_model_usage (what older versions ignore)\n`,
      );
      assert.deepEqual(JSON.parse(migrate.out).added, [
        "sync_origins.departed",
        "session_model_usage",
      ]);
      assert.equal(await departedColumns(schema), 1, "migrate added the column");
      assert.equal(await lastStep(schema), OLDER_KNOWS);
      const again = await runCli(["--db", url, "migrate"]);
      assert.equal(again.err, `migration ${OLDER_KNOWS}: nothing to upgrade\n`);
      await adminSql(`ALTER TABLE "${schema}".sync_origins DROP COLUMN departed`);
      const sync = await runCli(["sync", await stateFile("s1"), "--to", url, "--host", "h1"]);
      assert.equal(sync.code, 0, sync.err);
      assert.equal(await departedColumns(schema), 1, "sync added the column");
      assert.equal(await lastStep(schema), OLDER_KNOWS, "and recorded no step");
      const [old] = await adminSql(
        `SELECT departed::text AS departed FROM "${schema}".sync_origins WHERE origin = 'old'`,
      );
      assert.equal(old.departed, "{}", "an older origin's row has the default");
    },
  );

  test("many sync connections starting at once add one column, without an error", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget } = await import("../../lib/postgres/sync.ts");
    const schema = await olderServer();
    const clients = await Promise.all(
      Array.from({ length: 8 }, () => connectSyncTarget(schemaUrl(schema))),
    );
    await Promise.all(clients.map((client) => client.close()));
    assert.equal(await departedColumns(schema), 1);
    assert.equal(await lastStep(schema), OLDER_KNOWS);
  });

  test("with the column there, a sync connection takes no lock on sync_origins", {
    timeout: 60_000,
  }, async () => {
    const { connectSyncTarget } = await import("../../lib/postgres/sync.ts");
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const schema = freshSchema();
    (await connectSyncTarget(schemaUrl(schema))).close();
    assert.equal(await departedColumns(schema), 1);
    // A pass under way holds a lock on the table (ADD COLUMN IF NOT EXISTS would wait for it).
    const holder = await connectPg(PG_URL!, schema, { max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    let held!: () => void;
    const holding = new Promise<void>((resolve) => held = resolve);
    const transaction = holder.transaction(async (query) => {
      await query(`LOCK TABLE "${schema}".sync_origins IN ACCESS SHARE MODE`);
      held();
      await released;
    });
    let connecting: ReturnType<typeof connectSyncTarget> | undefined;
    try {
      await holding;
      connecting = connectSyncTarget(schemaUrl(schema));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = await Promise.race([
        connecting.then(() => false),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), 10_000)),
      ]);
      clearTimeout(timer);
      assert.equal(waited, false, "waited for the table lock");
    } finally {
      release();
      await transaction;
      await holder.close();
      await (await connecting)?.close();
    }
  });
});

test(
  "a sync role that may not add the column is told who adds it; after the owner's migrate it syncs",
  {
    skip: SKIP,
    timeout: 60_000,
  },
  async () => {
    const schema = await olderServer();
    // A role with every right on the tables but not their owner (ALTER TABLE needs the owner).
    const role = `syncer_${crypto.randomUUID().slice(0, 8)}`;
    await adminSql(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      await adminSql(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await adminSql(`GRANT ALL ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      await adminSql(`GRANT ALL ON ALL SEQUENCES IN SCHEMA "${schema}" TO ${role}`);
      const asRole = new URL(schemaUrl(schema));
      asRole.username = role;
      asRole.password = "pw";
      const file = await stateFile("s1");
      const refused = await runCli(["sync", file, "--to", asRole.href, "--host", "h1"]);
      assert.equal(refused.code, 1, refused.err);
      assert.match(
        refused.err,
        /the role may not add the column sync_origins\.departed this version uses \(must be owner of table sync_origins\): the table's owner adds it by running "hermes-state --db URL migrate" once\n$/,
      );
      const [none] = await adminSql(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
      assert.equal(none.n, 0, "nothing was shipped");
      const migrate = await runCli(["--db", schemaUrl(schema), "migrate"]);
      assert.equal(migrate.code, 0, migrate.err);
      const synced = await runCli(["sync", file, "--to", asRole.href, "--host", "h1"]);
      assert.equal(synced.code, 0, synced.err);
      const [one] = await adminSql(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
      assert.equal(one.n, 1);
    } finally {
      await adminSql(`DROP OWNED BY ${role}`);
      await adminSql(`DROP ROLE ${role}`);
    }
  },
);
