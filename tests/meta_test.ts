import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { ReadonlyError } from "../lib/core/errors.ts";
import { copyFixture } from "./_helpers.ts";

/** Far after every fixture's marker, so no auto-prune is skipped. */
const LATER = 2_000_000_000;

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

test("getMeta() answers undefined on an older (v6) file opened read-only, which has no state_meta", async () => {
  const path = copyFixture("hermes-v6.db");
  const before = sha256(path);
  using db = await SessionDB.open({ path, readonly: true });
  assert.equal(db.getMeta("last_auto_prune"), undefined);
  assert.equal(db.getMeta("fts_stale:messages_fts"), undefined);
  await using store = await openStore(path, { readonly: true });
  assert.equal(await store.getMeta("last_auto_prune"), undefined);
  assert.equal(sha256(path), before, "the file is not changed");
});

test("getMeta() reads the value of a key on a v11 file opened read-only", async () => {
  using db = await SessionDB.open({ path: copyFixture("hermes-v11.db"), readonly: true });
  assert.equal(db.getMeta("last_auto_prune"), "1777454434.567891");
  assert.equal(db.getMeta("missing"), undefined);
});

for (const fixture of ["hermes-v6.db", "hermes-v11.db"]) {
  test(`maybeAutoPruneAndVacuum() on ${fixture} opened read-only reports the ReadonlyError`, async () => {
    const path = copyFixture(fixture);
    using db = await SessionDB.open({ path, readonly: true, clock: () => LATER });
    const result = db.maybeAutoPruneAndVacuum();
    assert.equal(result.skipped, false);
    assert.equal(result.pruned, 0);
    assert.ok(result.cause instanceof ReadonlyError, String(result.cause));
    assert.equal(result.error, (result.cause as Error).message);
    await using store = await openStore(path, { readonly: true, clock: () => LATER });
    const async = await store.maybeAutoPruneAndVacuum();
    assert.ok(async.cause instanceof ReadonlyError, String(async.cause));
  });
}
