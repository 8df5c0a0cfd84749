import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadCommands } from "../lib/cli/command_table.ts";
import { topUsage } from "../lib/cli/usage.ts";
import { assertSnapshot } from "./_snapshot.ts";
import { runCli } from "./_cli_io.ts";

const COMMANDS = await loadCommands();

describe("usage texts", () => {
  test("topUsage() matches its snapshot", () => {
    assertSnapshot("usage/hermes-state.txt", topUsage(COMMANDS));
  });

  for (const command of COMMANDS) {
    test(`${command.name} --help matches its snapshot and names every option`, async () => {
      const run = await runCli([command.name, "--help"]);
      assert.equal(run.code, 0);
      assert.equal(run.out, command.usage);
      assertSnapshot(`usage/${command.name}.txt`, run.out);
      assert.match(run.out, new RegExp(`^Usage: hermes-state ${command.name}\\b`));
      for (const [name, spec] of Object.entries(command.options)) {
        const long = `--${name}`;
        assert.ok(run.out.includes(long), `${command.name} usage lacks ${long}`);
        if (spec.short) assert.ok(run.out.includes(`-${spec.short}, ${long}`));
      }
      assert.match(run.out, /\nExamples:\n/);
      for (const line of run.out.split("\n")) {
        assert.ok(line.length <= 100, `${command.name} usage line too long: ${line}`);
      }
    });
  }
});
