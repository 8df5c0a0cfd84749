/**
 * `rename`, `delete` and `prune` on a server whose schema an older
 * hermes-state left: each first looked for what it names by a read, which
 * refuses an older schema ("upgrade it … with migrate (or any write)"),
 * although each is a write, which upgrades it, as `import` and `copy` do.
 * A dry run still only reads, and says to migrate.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli } from "../_cli_io.ts";
import { adminSql, olderSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { LAST_STEP } from "../../lib/postgres/schema.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Sessions written straight into an older schema: `a`, `b`, and `old`, ended long ago. */
async function olderStore(): Promise<{ schema: string; url: string }> {
  const schema = await olderSchema(LAST_STEP - 1);
  await adminSql(`INSERT INTO "${schema}".sessions (id, source, started_at, ended_at)
    VALUES ('a', 'cli', 1700000000, NULL), ('b', 'cli', 1700000001, NULL),
           ('old', 'cli', 1000000000, 1000000001)`);
  return { schema, url: schemaUrl(schema) };
}

async function step(schema: string): Promise<number> {
  const [row] = await adminSql(`SELECT max(step) AS step FROM "${schema}".hermes_migrations`);
  return Number(row.step);
}

describe("write commands on an older PostgreSQL schema", { skip: SKIP }, () => {
  test("rename, delete and prune upgrade the schema and do their work", async () => {
    const { schema, url } = await olderStore();
    const rename = await runCli(["--db", url, "rename", "a", "New title"]);
    assert.equal(rename.code, 0, rename.err);
    assert.equal(await step(schema), LAST_STEP);
    const { schema: other, url: otherUrl } = await olderStore();
    const deleted = await runCli(["--db", otherUrl, "delete", "--yes", "b"]);
    assert.equal(deleted.code, 0, deleted.err);
    assert.equal(await step(other), LAST_STEP);
    const { schema: third, url: thirdUrl } = await olderStore();
    const dry = await runCli(["--db", thirdUrl, "prune", "--older-than", "1", "--dry-run"]);
    assert.equal(dry.code, 1);
    assert.match(dry.err, /migrate/);
    assert.equal(await step(third), LAST_STEP - 1);
    const pruned = await runCli(["--db", thirdUrl, "prune", "--older-than", "1", "--yes"]);
    assert.equal(pruned.code, 0, pruned.err);
    const left = await adminSql(`SELECT id FROM "${third}".sessions ORDER BY id`);
    assert.deepEqual(left.map((row) => row.id), ["a", "b"]);
  });
});
