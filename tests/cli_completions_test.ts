/**
 * `completions bash`: the script, sourced in a real bash, completes commands,
 * options, option values and files, and the ids of the store's sessions
 * (asking the CLI itself, run as a process on the current runtime).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { ROOT, tempDir } from "./_helpers.ts";
import { runCli, V11, v11Copy } from "./_cli_io.ts";

/** What bash offers for the words typed so far (the last one being completed). */
function complete(script: string, words: string[], cwd: string): string[] {
  const program = `
    source ${JSON.stringify(script)}
    COMP_WORDS=(${words.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ")})
    COMP_CWORD=${words.length - 1}
    _hermes_state
    printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = spawnSync("bash", ["-c", program], { cwd, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split("\n").filter((line) => line !== "");
}

/** An executable that runs this checkout's CLI on the current runtime, as an installed one would. */
function installedCli(dir: string): string {
  const cli = join(ROOT, "cli.ts");
  const argv = runtimeName() === "deno" ? [process.execPath, "run", "-A", cli] : [
    process.execPath,
    cli,
  ];
  const path = join(dir, "hermes-state");
  writeFileSync(path, `#!/bin/sh\nexec ${argv.map((a) => JSON.stringify(a)).join(" ")} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("completions", () => {
  test("completions bash completes commands, options, values and files in a real bash", async () => {
    const run = await runCli(["completions", "bash"]);
    assert.equal(run.code, 0, run.err);
    const dir = tempDir();
    const script = join(dir, "hermes-state.bash");
    writeFileSync(script, run.out);
    mkdirSync(join(dir, "backups"));
    writeFileSync(join(dir, "state.db"), "");
    assert.deepEqual(complete(script, ["hermes-state", "se"], dir), ["search", "serve"]);
    assert.deepEqual(complete(script, ["hermes-state", "--db", "x.db", "li"], dir), [
      "list",
      "lineage",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "--"], dir), [
      "--db",
      "--json",
      "--help",
      "--version",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "search", "--so"], dir), [
      "--source",
      "--sort",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "show", "--fo"], dir), ["--follow"]);
    assert.deepEqual(complete(script, ["hermes-state", "completions", ""], dir), ["bash"]);
    // A value, or a file argument: left to bash's own file completion (-o default).
    assert.deepEqual(complete(script, ["hermes-state", "--db", "st"], dir), []);
    assert.deepEqual(complete(script, ["hermes-state", "search", "--since", ""], dir), []);
    assert.deepEqual(complete(script, ["hermes-state", "backup", "back"], dir), []);
  });

  test("completions bash completes session ids from the --db given", async () => {
    const dir = tempDir();
    const script = join(dir, "hermes-state.bash");
    writeFileSync(script, (await runCli(["completions", "bash"])).out);
    const cli = installedCli(dir);
    const db = v11Copy();
    const ids = complete(script, [cli, "--db", db, "show", "20260429"], dir);
    assert.deepEqual(ids, [V11.live]);
    const viaEquals = complete(script, [cli, "--db", "=", db, "lineage", "2026042"], dir);
    assert.ok(viaEquals.includes(V11.compressionTip), viaEquals.join(" "));
    assert.ok(viaEquals.every((id) => id.startsWith("2026042")), viaEquals.join(" "));
  });

  test("completions refuses another shell by name", async () => {
    const run = await runCli(["completions", "zsh"]);
    assert.equal(run.code, 2);
    assert.match(run.err, /only bash has a completion script: current value is zsh/);
  });
});
