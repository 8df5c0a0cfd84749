/**
 * `recover` without `force` never replaces a `DEST` that appeared while it
 * ran (another run, an operator's copy): the check at the start is made
 * again as the new file takes its name, as `backup` does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import type { SqliteDriver } from "../../lib/sqlite/driver/types.ts";
import { copyFixture, tempDir } from "../_helpers.ts";

test("recoverDatabase() without force leaves a DEST that appeared meanwhile as it is, and removes its temporary file", async () => {
  const source = copyFixture("hermes-v11.db");
  const out = tempDir();
  const dest = join(out, "recovered.db");
  const open = await loadDriver();
  let planted = false;
  // The new file is written under a temporary name beside DEST: DEST appears then.
  const openDriver: SqliteDriver = (path, options) => {
    if (!planted && path.startsWith(out) && path.endsWith(".recover")) {
      planted = true;
      writeFileSync(dest, "an operator's file");
    }
    return open(path, options);
  };
  await assert.rejects(
    recoverDatabase(source, dest, { openDriver }),
    /Cannot recover into .*recovered\.db: it exists \(give --force to replace it\)/,
  );
  assert.ok(planted, "the temporary file was opened");
  assert.equal(readFileSync(dest, "utf8"), "an operator's file");
  assert.deepEqual(readdirSync(out), ["recovered.db"]);
  assert.ok(!existsSync(`${dest}-wal`));
});
