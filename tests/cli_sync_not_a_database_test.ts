/**
 * `sync` of a file that is not a database said "nothing was changed", yet
 * left an origin of that file on
 * the server (`origins` listed it with no pass, and `doctor` then warned of a
 * file without a pass for a week). The file is now opened before its origin
 * is registered: a failing file leaves the server as it was, and the next
 * pass, once the file is a database, registers and ships it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

test("a sync of a file that is no database registers no origin", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = join(tempDir(), "state.db");
  writeFileSync(file, "not a database, only text\n".repeat(200));
  const failed = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
  assert.equal(failed.code, 1, failed.err);
  assert.match(failed.err, /file is not a database; nothing was changed/);
  const origins = await runCli(["--db", url, "origins", "--json"]);
  assert.equal(origins.code, 0, origins.err);
  assert.deepEqual(JSON.parse(origins.out), []);
  // The file made a database in its place: the next pass ships it.
  copyFileSync(v11Copy(), file);
  const synced = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
  assert.equal(synced.code, 0, synced.err);
  assert.match(synced.out, /→ web-1: 42 new/);
});
