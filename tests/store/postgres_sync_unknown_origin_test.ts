/**
 * `list`, `search`, `export` and `usage` with `--origin NAME` on a
 * PostgreSQL store: a NAME the store records no origin of (a typo) is an
 * error that names it and the origins there are, not an empty answer.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli, v11Copy } from "../_cli_io.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("--origin NAME of the read commands", { skip: SKIP }, () => {
  test("list, search, export and usage refuse an unknown origin, naming the known ones (exit 1)", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const reads = [
      ["list"],
      ["search", "docker"],
      ["export", "-"],
      ["usage"],
    ];
    // A store, and no origin at all yet.
    assert.equal((await runCli(["--db", url, "migrate"])).code, 0);
    for (const read of reads) {
      const run = await runCli(["--db", url, ...read, "--origin", "web-9"]);
      assert.equal(run.code, 1, `${read[0]}: ${run.err}`);
      assert.match(
        run.err,
        /No origin "web-9" in .*: it records none \(no file was synced into it\)/,
      );
      assert.equal(run.out, "");
    }
    for (const origin of ["web-1", "web-2"]) {
      const synced = await runCli(["sync", v11Copy(), "--to", url, "--origin", origin]);
      assert.equal(synced.code, 0, synced.err);
    }
    for (const read of reads) {
      const run = await runCli(["--db", url, ...read, "--origin", "web-9"]);
      assert.equal(run.code, 1, `${read[0]}: ${run.err}`);
      assert.match(
        run.err,
        /No origin "web-9" in .*: known origins are web-1, web-2 \(hermes-state origins\)/,
      );
      assert.equal(run.out, "");
      // A known one answers as before.
      const known = await runCli(["--db", url, ...read, "--origin", "web-2"]);
      assert.equal(known.code, 0, `${read[0]}: ${known.err}`);
      assert.notEqual(known.out, "");
    }
  });
});
