import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { OpenError } from "../../lib/core/errors.ts";
import { SqliteError } from "../../lib/sqlite/driver/sqlite_error.ts";
import { isDiskFull } from "../../lib/sqlite/disk_space.ts";
import { tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { isRoot } from "./_unprivileged.ts";

/** Mounts a 2 MiB tmpfs; the reason it cannot be done otherwise. */
function smallDisk(): { dir: string; unmount: () => void } | string {
  if (process.platform !== "linux" || !isRoot()) return "mounting a tmpfs needs root on Linux";
  const dir = join(tempDir(), "small");
  mkdirSync(dir);
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir], {
    encoding: "utf8",
  });
  if (mount.status !== 0) return `mount is not allowed here: ${mount.stderr.trim()}`;
  return { dir, unmount: () => spawnSync("umount", ["-l", dir]) };
}

/** Fills the device with files of 64 KiB until it has no space left. */
function fill(dir: string): string[] {
  const files: string[] = [];
  for (let i = 0;; i++) {
    const file = join(dir, `filler-${i}`);
    try {
      writeFileSync(file, new Uint8Array(64 * 1024).fill(7));
      files.push(file);
    } catch (error) {
      assert.equal((error as { code?: string }).code, "ENOSPC");
      rmSync(file, { force: true });
      // The last bytes too, so not even one page fits.
      try {
        writeFileSync(join(dir, "filler-last"), new Uint8Array(4096));
      } catch { /* the device is full */ }
      return files;
    }
  }
}

/**
 * Why these tests cannot run here (checked once, by mounting and unmounting),
 * or false. Under CI=true they never skip: CI runs as root, so a mount that
 * fails there fails the tests.
 */
const skip = (() => {
  const disk = smallDisk();
  if (typeof disk === "string") return process.env.CI === "true" ? false : disk;
  disk.unmount();
  return false;
})();

/** A fresh 2 MiB device for one test. */
function mounted(): { dir: string; unmount: () => void } {
  const disk = smallDisk();
  if (typeof disk === "string") throw new Error(disk);
  return disk;
}

test(
  "a write on a full disk fails with SQLITE_FULL, rolls back, and the same connection writes again once space is freed",
  { skip },
  async () => {
    const disk = mounted();
    try {
      const path = join(disk.dir, "state.db");
      using db = await SessionDB.open({ path });
      db.createSession("s1", "cli");
      db.appendMessage("s1", { role: "user", content: "before the disk filled" });
      const fillers = fill(disk.dir);
      const big = "x".repeat(256 * 1024);
      let failure: unknown;
      try {
        for (let i = 0; i < 20; i++) db.appendMessage("s1", { role: "user", content: big });
      } catch (error) {
        failure = error;
      }
      assert.ok(failure instanceof SqliteError, String(failure));
      assert.ok(isDiskFull(failure, path), failure.message);
      const kept = db.getMessages("s1").length;
      assert.equal(db.getSession("s1")?.message_count, kept, "a half-written message");
      // Opening on the full disk names the cause.
      await assert.rejects(SessionDB.open({ path: join(disk.dir, "other.db") }), (error) => {
        assert.ok(error instanceof OpenError, String(error));
        assert.match(error.message, /no space left on the device holding .*other\.db/);
        return true;
      });
      for (const file of fillers) rmSync(file);
      rmSync(join(disk.dir, "filler-last"), { force: true });
      db.appendMessage("s1", { role: "user", content: "after space was freed" });
      assert.equal(db.getMessages("s1").length, kept + 1);
      assert.deepEqual(db.inspect({ searchIndexes: true }).integrity, ["ok"]);
    } finally {
      disk.unmount();
    }
  },
);

/**
 * A CLI run that filled the disk holding `path`, writing 40 one-message sessions: it exits 1 with
 * one error line matching `line`, and `path` holds some of the sessions, each whole.
 */
async function assertStoppedWhole(
  run: { code: number; err: string },
  line: RegExp,
  path: string,
): Promise<void> {
  assert.equal(run.code, 1);
  const errors = run.err.trim().split("\n");
  assert.equal(errors.length, 1, run.err);
  assert.match(errors[0], line);
  using after = await SessionDB.open({ path, readonly: true });
  assert.ok(after.sessionCount() > 0 && after.sessionCount() < 40);
  for (const session of after.searchSessions({ limit: 100 })) {
    assert.equal(after.messageCount(session.id), 1, `${session.id} is cut`);
  }
}

test("import on a full disk stops at the first disk-full error with one line", {
  skip,
}, async () => {
  const again = mounted();
  try {
    const path = join(again.dir, "state.db");
    using db = await SessionDB.open({ path });
    db.close();
    // The input lives elsewhere: only the database's device fills up.
    const input = join(tempDir(), "big.jsonl");
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: `s${i}`,
        source: "cli",
        started_at: 1000 + i,
        messages: [{ role: "user", timestamp: 1000 + i, content: "y".repeat(200 * 1024) }],
      }));
    writeFileSync(input, lines.join("\n") + "\n");
    await assertStoppedWhole(
      await runCli(["--db", path, "import", input]),
      /^hermes-state: .*Cannot import line \d+: no space left on the device holding /,
      path,
    );
  } finally {
    again.unmount();
  }
});

test("copy onto a full disk stops at the first disk-full error with one line", {
  skip,
}, async () => {
  const again = mounted();
  try {
    const dest = join(again.dir, "state.db");
    {
      using db = await SessionDB.open({ path: dest });
      db.close();
    }
    // The source lives elsewhere: only the destination's device fills up.
    const src = join(tempDir(), "big.db");
    {
      using db = await SessionDB.open({ path: src });
      for (let i = 0; i < 40; i++) {
        db.createSession(`s${i}`, "cli");
        db.appendMessage(`s${i}`, { role: "user", content: "y".repeat(200 * 1024) });
      }
      db.close();
    }
    await assertStoppedWhole(
      await runCli(["copy", src, dest]),
      /^hermes-state: .*Cannot copy s\d+: no space left on the device holding /,
      dest,
    );
  } finally {
    again.unmount();
  }
});

test("recover onto a full disk names the scratch file its rows wait in, and leaves nothing there", {
  skip,
}, async () => {
  const again = mounted();
  try {
    // The source lives elsewhere: 5,000 messages of 1 KB go to the scratch file beside DEST.
    const src = join(tempDir(), "big.db");
    {
      using db = await SessionDB.open({ path: src });
      db.createSession("s", "cli");
      for (let i = 0; i < 5_000; i++) {
        db.appendMessage("s", { role: "user", content: `${i} ${"y".repeat(1024)}` });
      }
      db.close();
    }
    const dest = join(again.dir, "new.db");
    const run = await runCli(["recover", src, dest]);
    assert.equal(run.code, 1, run.out + run.err);
    assert.match(
      run.err,
      /^hermes-state: Cannot keep the rows read in .*\.new\.db\.\d+\.recover-rows \(beside the new file\): no space left on the device holding /,
    );
    assert.equal(run.err.trim().split("\n").length, 1, run.err);
    assert.deepEqual(readdirSync(again.dir).filter((name) => !name.startsWith("filler")), []);
  } finally {
    again.unmount();
  }
});
