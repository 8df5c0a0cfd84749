/**
 * `recover` into a folder this user may not write names `DEST` and the
 * cause (permission denied), not the temporary file it would have written beside it. The CLI
 * runs as a user file modes apply to (see `../reliability/_unprivileged.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { folderWithFixture, tempDir } from "../_helpers.ts";
import { snapshot } from "../reliability/_checks.ts";
import { startWorker } from "../reliability/_runtimes.ts";
import { isRoot, unprivileged } from "../reliability/_unprivileged.ts";

const asRoot = isRoot() ? " (root runs it without its file privileges)" : "";

test(
  `recover into a read-only folder names DEST and says permission is denied${asRoot}`,
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir();
    const as = await unprivileged(dir);
    if (typeof as === "string") return t.skip(as);
    const source = folderWithFixture(dir, "source", 0o777, 0o666);
    const out = join(dir, "out");
    mkdirSync(out);
    chmodSync(out, 0o555);
    const dest = join(out, "recovered.db");
    const before = snapshot(join(dir, "source"));
    const child = startWorker(runtimeName(), "../../cli.ts", ["recover", source, dest], as);
    const exit = await child.exited;
    assert.equal(exit.code, 1, child.stderr);
    // (Deno fetching the PostgreSQL client into the user's fresh cache may come first.)
    const said = child.stderr.split("\n").find((line) => line.startsWith("hermes-state:"));
    assert.match(said ?? "", /^hermes-state: Cannot recover into \S+: permission denied/);
    assert.ok(said?.includes(dest), child.stderr);
    assert.deepEqual(readdirSync(out), []);
    assert.deepEqual(snapshot(join(dir, "source")), before);
  },
);
