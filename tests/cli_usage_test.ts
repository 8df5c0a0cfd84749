import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadCommands } from "../lib/cli/command_table.ts";
import { topUsage } from "../lib/cli/usage.ts";
import { assertSnapshot } from "./_snapshot.ts";
import { runCli, v11Copy } from "./_cli_io.ts";

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

describe("usage --until", () => {
  test("usage --until keeps the sessions started before TIME, as list, search and export do", async () => {
    const db = v11Copy();
    const report = async (...more: string[]) => {
      const run = await runCli([
        "--db",
        db,
        "--json",
        "usage",
        "--tz",
        "UTC",
        "--since",
        "all",
        ...more,
      ]);
      assert.equal(run.code, 0, run.err);
      return JSON.parse(run.out) as {
        until: number | null;
        rows: { key: string; sessions: number }[];
      };
    };
    const all = await report();
    const before = await report("--until", "2026-04-22");
    assert.equal(before.until, Date.UTC(2026, 3, 22) / 1000);
    const expected = all.rows.filter((row) => row.key < "2026-04-22");
    assert.ok(expected.length > 0 && expected.length < all.rows.length);
    assert.deepEqual(before.rows, expected);
    const bad = await runCli(["--db", db, "usage", "--until", "all"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--until must be an age .* or Unix seconds, got "all"/);
  });
});
