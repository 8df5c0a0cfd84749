/**
 * Root on a server, as the single executable (Bun) and `deno run cli.ts`
 * must both see it: root with `CAP_DAC_OVERRIDE` may write any file, and
 * root without it (a container started with `--cap-drop ALL`) is bound by
 * the file modes like any user.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { runCli } from "./_cli_io.ts";
import { cliArgv, folderWithFixture, tempDir } from "./_helpers.ts";

/** Root holding CAP_DAC_OVERRIDE (bit 1 of CapEff), read here on its own. */
function rootWithOverride(): boolean {
  if (process.getuid?.() !== 0) return false;
  const status = existsSync("/proc/self/status") ? readFileSync("/proc/self/status", "utf8") : "";
  const effective = /^CapEff:\s*([0-9a-f]+)/m.exec(status)?.[1];
  return effective === undefined || (BigInt(`0x${effective}`) & 2n) !== 0n;
}

/** `setpriv` drops every capability of a root child; undefined when it cannot. */
function caplessRoot(): string[] | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const probe = spawnSync("setpriv", ["--bounding-set=-all", "--inh-caps=-all", "true"]);
  return probe.status === 0 ? ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] : undefined;
}

test("doctor: a read-only state.db in a read-only folder gets the wal finding of the user it runs as, on every runtime", async () => {
  const path = folderWithFixture(tempDir(), "ro", 0o555, 0o444);
  try {
    const run = await runCli(["--db", path, "doctor", "--json"]);
    const wal = JSON.parse(run.out).checks.find((check: { name: string }) => check.name === "wal");
    // Root may write any file: a checkpoint can run (Deno's accessSync answers from the modes,
    // which told root otherwise on Deno only, where the executable said ok).
    assert.equal(wal.status, rootWithOverride() ? "ok" : "warning", wal.summary);
  } finally {
    chmodSync(join(path, ".."), 0o755);
  }
});

test("root without CAP_DAC_OVERRIDE reads a read-only state.db without leaving a -wal or -shm, and reads in a read-only folder", (t) => {
  const drop = caplessRoot();
  if (drop === undefined) return t.skip("needs root and setpriv");
  const dir = tempDir();
  const file = folderWithFixture(dir, "file", 0o755, 0o444);
  const folder = folderWithFixture(dir, "folder", 0o555, 0o644);
  try {
    for (const path of [file, folder]) {
      const argv: string[] = [...drop, ...cliArgv(["--db", path, "list", "--limit", "1"])];
      const child = spawnSync(argv[0], argv.slice(1), {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
      });
      assert.equal(child.status, 0, `${path}: ${child.stderr}`);
      assert.match(child.stdout, /1 of 35 sessions/);
      assert.deepEqual(
        readdirSync(join(path, "..")),
        ["state.db"],
        `${path}: files left beside it`,
      );
    }
  } finally {
    chmodSync(join(folder, ".."), 0o755);
  }
});
