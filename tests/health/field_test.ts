/**
 * The health kit as an operator meets it after something went wrong: real
 * damaged files given to the CLI, and what each command says and leaves.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { walCommitsPastBreak } from "../../lib/health/wal_break.ts";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { runCli, v11Copy } from "../_cli_io.ts";
import { holdWholeFile } from "./_held_lock.ts";
import {
  crashedWithThreeWalCommits,
  flipFrameByte,
  frameOfSecondCommit,
} from "./_damaged_files.ts";

const PAGE = 4096;

/** The folder's names and each file's sha256: what a read must leave as it was. */
function folderState(path: string): string {
  const dir = dirname(path);
  return readdirSync(dir).sort().map((name) =>
    `${name} ${createHash("sha256").update(readFileSync(join(dir, name))).digest("hex")}`
  ).join("\n");
}

describe("a file cut to a page boundary, no -wal beside it", () => {
  test("doctor, doctor --fix and backup say the file alone was kept, never a -wal there was not", async () => {
    const path = v11Copy();
    truncateSync(path, 90 * PAGE); // the header still says 103 pages
    const before = folderState(path);
    for (
      const argv of [["doctor"], ["doctor", "--fix"], ["backup", join(dirname(path), "copy.db")]]
    ) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 1, `${argv.join(" ")}: ${run.err}`);
      assert.match(run.err, /nothing was changed \(the file is as it was\)/, argv.join(" "));
      assert.doesNotMatch(run.err, /-wal/, argv.join(" "));
      assert.equal(folderState(path), before, argv.join(" "));
    }
  });
});

describe("a -wal with a damaged frame before later commits", () => {
  test("doctor and recover name the commits SQLite ignores past it, and --fix and recover keep the -wal", async () => {
    const path = crashedWithThreeWalCommits();
    const wal = `${path}-wal`;
    // In the second of the three commits, a page no later commit writes again: the commits
    // after it need that frame, and recover cannot salvage them (wal_salvage_test.ts).
    const frame = frameOfSecondCommit(wal, false);
    flipFrameByte(wal, frame);
    const walBytes = readFileSync(wal);
    const before = folderState(path);
    const check = await runCli(["--db", path, "doctor", "--json"]);
    assert.equal(check.code, 1, check.err);
    const found = JSON.parse(check.out).checks.find((c: { name: string }) => c.name === "wal");
    assert.equal(found.status, "problem", found.summary);
    assert.match(
      found.summary,
      new RegExp(`frame ${frame} fails its checksum.*ignores the 2 commits after it`),
    );
    assert.match(found.fix, new RegExp(`keep a copy of ${wal.replaceAll("/", "\\/")}`));
    const fix = await runCli(["--db", path, "doctor", "--fix"]);
    assert.equal(fix.code, 1, fix.err);
    assert.match(fix.out, /Nothing repaired: the -wal holds commits SQLite ignores/);
    assert.equal(statSync(wal).size, walBytes.length);
    assert.ok(readFileSync(wal).equals(walBytes), "the -wal is byte for byte as it was");
    assert.equal(folderState(path).replace(/\n?state\.db-shm [0-9a-f]+/, ""), before);
    const dest = join(dirname(path), "recovered.db");
    const recovered = await runCli(["recover", path, dest]);
    assert.equal(recovered.code, 1, recovered.out);
    assert.match(
      recovered.out,
      new RegExp(
        `Commits left out: the -wal's frame ${frame} fails its checksum, and SQLite ignores the 2 commits`,
      ),
    );
    assert.doesNotMatch(recovered.out, /Nothing was lost/);
    assert.ok(readFileSync(wal).equals(walBytes), "recover left the -wal as it was");
  });

  test("doctor and recover find a sound -wal and a torn last frame fine", async () => {
    const path = crashedWithThreeWalCommits();
    const sound = await runCli(["--db", path, "doctor", "--json"]);
    const wal = (run: typeof sound) =>
      JSON.parse(run.out).checks.find((c: { name: string }) => c.name === "wal");
    assert.equal(wal(sound).status, "ok", wal(sound).summary);
    const torn = join(dirname(path), "torn.db");
    copyFileSync(path, torn);
    copyFileSync(`${path}-wal`, `${torn}-wal`);
    flipFrameByte(`${torn}-wal`, 141); // the last commit's own frame: that commit is torn off
    const tornRun = await runCli(["--db", torn, "doctor", "--json"]);
    assert.equal(wal(tornRun).status, "ok", wal(tornRun).summary);
    const recovered = await runCli(["recover", "--json", path, join(dirname(path), "r.db")]);
    assert.equal(recovered.code, 0, recovered.out);
    assert.equal(JSON.parse(recovered.out).wal_commits_ignored, null);
  });
});

describe("vacuum, backup, migrate and copy while another process holds the whole file", () => {
  for (const command of ["vacuum", "backup", "migrate", "copy"]) {
    test(`${command} gives up after HERMES_STATE_LOCK_TIMEOUT, not after 15 s, and names the wait`, async () => {
      const path = v11Copy();
      const dest = join(dirname(path), "copy.db");
      const release = await holdWholeFile(path);
      try {
        const started = performance.now();
        const argv = command === "backup"
          ? ["backup", dest]
          : command === "copy"
          ? ["copy", path, dest]
          : [command];
        const run = await runCli(["--db", path, ...argv], {
          env: { HERMES_STATE_LOCK_TIMEOUT: "0.5" },
        });
        const waitedMs = performance.now() - started;
        assert.equal(run.code, 1, run.out);
        assert.match(run.err, /database is locked by another process \(waited \d+(\.\d+)? s\)/);
        assert.ok(waitedMs < 5000, `waited ${Math.round(waitedMs)} ms`);
        assert.deepEqual(readdirSync(dirname(path)).filter((name) => name.includes("copy")), []);
      } finally {
        release();
      }
    });
  }

  test("backup waits for a whole-file lock released within HERMES_STATE_LOCK_TIMEOUT, then copies", async () => {
    const path = v11Copy();
    const dest = join(dirname(path), "copy.db");
    const release = await holdWholeFile(path);
    const released = setTimeout(release, 300);
    try {
      const run = await runCli(["--db", path, "backup", dest], {
        env: { HERMES_STATE_LOCK_TIMEOUT: "10" },
      });
      assert.equal(run.code, 0, run.err);
      assert.match(run.out, /42 sessions, 197 messages/);
    } finally {
      clearTimeout(released);
      release();
    }
  });
});

describe("a -wal a writer is writing while it is read", () => {
  test("the scan for commits past a bad frame finds none: a frame half written is no damage", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-wal-live-"));
    const path = join(dir, "state.db");
    const stop = join(dir, "stop");
    try {
      // Small checkpoints: the -wal starts over every few commits, so the writer keeps writing
      // frames in the middle of a -wal longer than what it writes, as a gateway does.
      const writer = spawn("python3", [
        "-c",
        [
          "import os, sqlite3, sys",
          "db = sqlite3.connect(sys.argv[1], isolation_level=None)",
          "db.execute('PRAGMA journal_mode=WAL')",
          "db.execute('PRAGMA wal_autocheckpoint=16')",
          "db.execute('CREATE TABLE t (x BLOB)')",
          "print('ready', flush=True)",
          "while not os.path.exists(sys.argv[2]):",
          "    db.execute('BEGIN')",
          "    for _ in range(4): db.execute('INSERT INTO t VALUES (randomblob(6000))')",
          "    db.execute('COMMIT')",
          "    db.execute('DELETE FROM t WHERE rowid < (SELECT max(rowid) - 40 FROM t)')",
        ].join("\n"),
        path,
        stop,
      ], { stdio: ["ignore", "pipe", "inherit"] });
      const exited = new Promise((resolve) => writer.on("exit", resolve));
      await new Promise<void>((resolve) => writer.stdout!.once("data", () => resolve()));
      const found: string[] = [];
      const until = Date.now() + 3_000;
      let scans = 0;
      while (Date.now() < until) {
        const seen = walCommitsPastBreak(`${path}-wal`);
        scans++;
        if (seen !== undefined) found.push(`frame ${seen.frame}, ${seen.commits} commits`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      writeFileSync(stop, "");
      await exited;
      assert.ok(scans > 20, `only ${scans} scans`);
      assert.deepEqual(found, [], `${found.length} of ${scans} scans saw a break`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
