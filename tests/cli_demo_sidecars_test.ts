import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

describe("demo leaves only its database file", () => {
  for (const json of [false, true]) {
    test(json ? "with --json" : "printing list and search", async () => {
      const dir = tempDir();
      const path = join(dir, "demo.db");
      const run = await runCli(["demo", ...(json ? ["--json"] : []), path]);
      assert.equal(run.code, 0, run.err);
      // Two read connections at once left the second one (SQLite's read-only mode, which
      // cannot checkpoint) the last to close: the -wal and -shm stayed beside the file.
      assert.deepEqual(readdirSync(dir), ["demo.db"]);
    });
  }
});
