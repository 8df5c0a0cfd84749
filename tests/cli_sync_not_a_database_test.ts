/**
 * `sync` of a file that is not a database said "nothing was changed", yet
 * left an origin of that file on
 * the server (`origins` listed it with no pass, and `doctor` then warned of a
 * file without a pass for a week). The file is now opened before its origin
 * is registered: a failing file leaves the server as it was, and the next
 * pass, once the file is a database, registers and ships it. A run whose
 * every file is such a file does not even make the store: it made the
 * schema of its URL (a mistyped one left as an empty store).
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
  assert.equal(origins.code, 1);
  assert.match(origins.err, /holds no hermes-state store yet/);
  // The file made a database in its place: the next pass ships it.
  copyFileSync(v11Copy(), file);
  const synced = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
  assert.equal(synced.code, 0, synced.err);
  assert.match(synced.out, /→ web-1: 42 new/);
});

test("a sync of an empty file, or of one no database, with a database: the database ships", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const empty = join(tempDir(), "state.db");
  writeFileSync(empty, "");
  const alone = await runCli(["sync", empty, "--to", url]);
  assert.equal(alone.code, 1);
  assert.equal(
    alone.err,
    `hermes-state: sync: ${empty}: Cannot open database "${empty}": not a Hermes state.db (no ` +
      "sessions table)\n",
  );
  assert.match((await runCli(["--db", url, "origins"])).err, /holds no hermes-state store yet/);
  const both = await runCli(["sync", empty, v11Copy(), "--to", url]);
  assert.equal(both.code, 1);
  assert.match(both.out, /: 42 new/);
  assert.match(both.err, /not a Hermes state\.db/);
});
