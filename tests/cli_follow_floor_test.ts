import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli, V11, v11Copy } from "./_cli_io.ts";
import { positiveSeconds } from "../lib/cli/parse.ts";
import { UsageError } from "../lib/cli/usage_error.ts";

describe("a follow's pause has a floor", () => {
  test("show --follow below 0.05 s is a usage error naming the value", async () => {
    const path = v11Copy();
    for (const value of ["0.000001", "0.049", "1e-9"]) {
      const run = await runCli(["--db", path, "show", V11.live, `--follow=${value}`]);
      assert.equal(run.code, 2, value);
      assert.match(
        run.err,
        new RegExp(`--follow must be at least 0\\.05 seconds, got "${value.replace(".", "\\.")}"`),
      );
      assert.equal(run.out, "");
    }
  });

  test("sync --follow and --every below 0.05 s are usage errors, before any connection", async () => {
    const path = v11Copy();
    const url = "postgres://nobody@127.0.0.1:1/none";
    for (
      const [args, name, value] of [
        [["--follow=0.01"], "--follow", "0.01"],
        [["--follow", "--every", "0.000001"], "--every", "0.000001"],
      ] as const
    ) {
      const run = await runCli(["sync", path, "--to", url, ...args]);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.err, new RegExp(`${name} must be at least 0\\.05 seconds, got "${value}"`));
    }
  });

  test("the parser sync shares takes the floor itself, and nothing below it", () => {
    assert.equal(positiveSeconds("--every", "0.05", "sync"), 0.05);
    assert.equal(positiveSeconds("--follow", "2.5", "sync"), 2.5);
    for (const [name, text] of [["--follow", "0.01"], ["--every", "0.000001"]]) {
      assert.throws(
        () => positiveSeconds(name, text, "sync"),
        (error: unknown) =>
          error instanceof UsageError &&
          error.message === `${name} must be at least 0.05 seconds, got "${text}"`,
      );
    }
  });
});
