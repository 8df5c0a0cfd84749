/**
 * `scripts/run.sh`, the README's way to run the CLI with the pinned Deno,
 * leaves colour to the terminal and to the user's own `NO_COLOR`, as the
 * CLI run directly does: the toolchain it loads turns colour off for the
 * checks, and that used to reach the CLI too. Run in a pseudo-terminal by
 * util-linux's `script`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { v11Copy } from "./_cli_io.ts";
import { ROOT } from "./_helpers.ts";

/** A shell word for `text`. */
function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** What `bash scripts/run.sh ARGS` writes to a terminal, with `noColor` as NO_COLOR (or none). */
function onTerminal(args: readonly string[], noColor: string | undefined): string {
  // Set by `env` in the terminal: Deno's child_process passes its own variables along with
  // the ones given, so a variable left out of `env:` still reaches the child there.
  const setting = noColor === undefined ? ["-u", "NO_COLOR"] : [`NO_COLOR=${noColor}`];
  const command = [
    "env",
    ...setting,
    "TERM=xterm-256color",
    "bash",
    join(ROOT, "scripts", "run.sh"),
  ]
    .concat(args).map(shellWord).join(" ");
  const run = spawnSync("script", ["-qec", command, "/dev/null"], { encoding: "utf8" });
  assert.equal(run.status, 0, `${command}: ${run.stdout}${run.stderr}`);
  return run.stdout;
}

const noScript = spawnSync("script", ["--version"]).status === 0
  ? false
  : "no util-linux `script` to run it in a terminal";

test("scripts/run.sh shows colour on a terminal, and none when the user sets NO_COLOR", {
  skip: noScript,
}, () => {
  // No pager: less writes control sequences of its own to the terminal.
  const args = ["--db", v11Copy(), "--no-pager", "search", "docker", "--limit", "1"];
  const escape = "\u001b[";
  assert.ok(onTerminal(args, undefined).includes(escape), "colour on a terminal");
  const plain = onTerminal(args, "1");
  assert.ok(!plain.includes(escape), "no colour with NO_COLOR=1");
  assert.match(plain, />>>docker<<</i);
});
