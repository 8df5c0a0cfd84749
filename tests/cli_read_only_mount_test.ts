/**
 * A state.db on a read-only mount (a Docker `:ro` volume, a backup disk
 * mounted `ro`), or, as root, in a folder marked immutable (`chattr +i`):
 * the read commands read it and make no file beside it. They failed
 * ("unable to open database file" on Deno; "the folder is read-only and
 * reading a WAL database needs its -shm file there" on Bun and Node): root's
 * capabilities, and Deno's `accessSync` from the mode bits, said the folder
 * could be written, so a read went the way that makes the `-wal` and `-shm`
 * of a WAL read, which the folder refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { runCli } from "./_cli_io.ts";
import { folderWithFixture, tempDir } from "./_helpers.ts";
import { readOnlyIn } from "../lib/files/read_only_mount.ts";

/** Each read command, as a user reads a file it may not write. */
async function assertReadsWhole(path: string): Promise<void> {
  const backup = join(tempDir(), "copy.db");
  const reads = [
    ["list", "--json"],
    ["search", "docker", "--json"],
    ["show", "20260429_090322_3762ca", "--json"],
    ["stats", "--json"],
    ["doctor", "--json"],
    ["info", "--json"],
    ["backup", backup],
  ];
  for (const args of reads) {
    const run = await runCli(["--db", path, ...args]);
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.err}`);
  }
  const listed = await runCli(["--db", path, "list", "--json", "--limit", "100"]);
  assert.equal(JSON.parse(listed.out).length, 35);
  assert.deepEqual(readdirSync(dirname(path)), ["state.db"]);
}

test("readOnlyIn() reads the mount holding a path: the deepest, the last on one point, ro either way", () => {
  const table = [
    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
    "40 22 8:2 / /data rw,relatime - ext4 /dev/sdb1 rw",
    "41 40 8:2 /hermes /data/ro\\040box ro,relatime - ext4 /dev/sdb1 rw",
    "42 40 8:3 / /data/disk rw,relatime shared:5 - ext4 /dev/sdc1 ro",
    "43 41 0:50 / /data/ro\\040box rw,relatime - tmpfs tmpfs rw",
    "",
  ].join("\n");
  assert.equal(readOnlyIn(table, "/data/state.db"), false);
  assert.equal(readOnlyIn(table, "/data/disk/state.db"), true, "its file system is ro");
  assert.equal(readOnlyIn(table, "/data/diskette"), false);
  assert.equal(readOnlyIn(table, "/data/ro box/state.db"), false, "mounted over, rw");
  assert.equal(readOnlyIn(table.replace(/^43 .*\n/m, ""), "/data/ro box/state.db"), true);
});

test("the read commands read a state.db on a read-only mount", async (t) => {
  const dir = tempDir();
  const source = dirname(folderWithFixture(dir, "source", 0o755, 0o644));
  const mounted = join(dir, "mounted");
  mkdirSync(mounted);
  if (spawnSync("mount", ["--bind", source, mounted]).status !== 0) {
    return t.skip("needs root allowed to mount (CAP_SYS_ADMIN)");
  }
  try {
    const remount = spawnSync("mount", ["-o", "remount,bind,ro", mounted], { encoding: "utf8" });
    assert.equal(remount.status, 0, remount.stderr);
    await assertReadsWhole(join(mounted, "state.db"));
  } finally {
    spawnSync("umount", [mounted]);
  }
  assert.deepEqual(readdirSync(source), ["state.db"]);
});

test("root reads a state.db in a folder marked immutable", async (t) => {
  const path = folderWithFixture(tempDir(), "immutable", 0o755, 0o644);
  if (spawnSync("chattr", ["+i", dirname(path)]).status !== 0) {
    return t.skip("needs root and a file system with the immutable attribute (chattr +i)");
  }
  try {
    await assertReadsWhole(path);
  } finally {
    spawnSync("chattr", ["-i", dirname(path)]);
  }
});
