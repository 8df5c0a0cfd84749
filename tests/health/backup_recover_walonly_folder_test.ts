/**
 * `backup` and `recover` of a database in a read-only folder holding its
 * `-wal` but no `-shm` (a copy made by `cp state.db state.db-wal`): SQLite
 * cannot read the `-wal` without a `-shm`, and says only "unable to open
 * database file"; both name the file and the cause, as `doctor` and the
 * read commands do, and change nothing. The CLI runs as a user file modes
 * apply to (see `../reliability/_unprivileged.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { folderWithFixture, tempDir } from "../_helpers.ts";
import { snapshot } from "../reliability/_checks.ts";
import { cliAs, isRoot, unprivileged } from "../reliability/_unprivileged.ts";
import { liveWalOf } from "./_damaged_files.ts";

const asRoot = isRoot() ? " (root runs it without its file privileges)" : "";

test(
  `backup and recover in a read-only folder holding a -wal but no -shm say the -shm is missing, naming the file${asRoot}`,
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir();
    const as = await unprivileged(dir);
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "walonly", 0o777, 0o666);
    liveWalOf(path, "UPDATE sessions SET title = 'live' WHERE rowid = 1");
    rmSync(`${path}-shm`, { force: true });
    chmodSync(join(dir, "walonly"), 0o555);
    const out = join(dir, "out");
    mkdirSync(out);
    chmodSync(out, 0o777);
    const before = snapshot(join(dir, "walonly"));
    const said = `hermes-state: Cannot open database "${path}": the folder is read-only and ` +
      "reading a WAL database needs its -shm file there\n";
    for (
      const args of [
        ["--db", path, "backup", join(out, "b.db")],
        ["recover", path, join(out, "r.db")],
      ]
    ) {
      const run = await cliAs(as, args);
      assert.equal(run.code, 1, `${args.join(" ")}: ${run.err}`);
      // (Deno fetching the PostgreSQL client into the user's fresh cache may come first.)
      assert.ok(run.err.endsWith(said), `${args.join(" ")}: ${run.err}`);
    }
    assert.deepEqual(snapshot(join(dir, "walonly")), before);
  },
);
