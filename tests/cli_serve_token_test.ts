// `serve --token` on a non-loopback address: a short token is a usage error, checked first.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";

describe("serve --token", () => {
  test("a token shorter than 16 characters is refused on a non-loopback host (exit 2)", async () => {
    const missing = join(tempDir(), "none.db");
    for (const host of ["0.0.0.0", "192.168.1.20", "::"]) {
      const run = await runCli(["--db", missing, "serve", "--host", host, "--token", "short"]);
      assert.equal(run.code, 2, run.err);
      assert.equal(
        run.err,
        `hermes-state serve: --token must be at least 16 characters on a non-loopback --host ` +
          `(${host}), got 5: leave --token out and a random one is printed\n` +
          "Try: hermes-state serve --help\n",
      );
      assert.ok(!run.err.includes("No database"), "the command line is checked first");
    }
  });

  test("a token of 16 characters passes (the missing file is what stops it)", async () => {
    const missing = join(tempDir(), "none.db");
    const long = await runCli(
      ["--db", missing, "serve", "--host", "0.0.0.0", "--token", "0123456789abcdef"],
    );
    assert.equal(long.code, 1, long.err);
    assert.match(long.err, /^hermes-state: No database at /);
    // On loopback no token is needed, so a short one guards nothing more and is not refused.
    const loopback = await runCli(["--db", missing, "serve", "--token", "short"]);
    assert.equal(loopback.code, 1, loopback.err);
    assert.match(loopback.err, /^hermes-state: No database at /);
  });
});
