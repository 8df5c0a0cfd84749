import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { folderWithFixture, tempDbPath, tempDir } from "../_helpers.ts";
import { snapshot } from "./_checks.ts";
import { type StartOptions, startWorker, workerRuntimes } from "./_runtimes.ts";
import { isRoot, openAs, unprivileged } from "./_unprivileged.ts";

/** A session of the v11 fixture. */
const KNOWN = "20251221_090000_9738df";

/** Start options for an unprivileged child, or the reason this machine cannot have one. */
async function setup(): Promise<{ dir: string; as: StartOptions | string }> {
  const dir = tempDir();
  return { dir, as: await unprivileged(dir) };
}

const asRoot = isRoot() ? " (root runs it without its file privileges)" : "";

test(`SessionDB.open() in a folder without write permission fails with a one-line error naming the path${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const locked = join(dir, "locked");
  mkdirSync(locked);
  chmodSync(locked, 0o555);
  const path = join(locked, "state.db");
  const report = await openAs(as, { path });
  assert.equal(report, `error OpenError Cannot open database "${path}": permission denied`);
  chmodSync(locked, 0o700);
  assert.deepEqual(readdirSync(locked), []);
});

test(`SessionDB.open() of a file the user may not write fails with a clear error, and readonly: true reads it${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "open", 0o777, 0o444);
  const before = snapshot(join(dir, "open"));
  const report = await openAs(as, { path, session: KNOWN });
  assert.equal(
    report,
    `error OpenError Cannot open database "${path}": permission denied (the file is read-only; open it with readonly: true to read it)`,
  );
  assert.deepEqual(snapshot(join(dir, "open")), before, "nothing created or changed");
  const read = await openAs(as, { path, readonly: true, session: KNOWN });
  assert.match(read, /^ok found=yes /);
  assert.equal(snapshot(join(dir, "open"))["state.db"], before["state.db"]);
});

test(`SessionDB.open() of a writable file in a read-only folder explains that SQLite needs the folder; readonly: true reads it as immutable, and both leave it alone${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "closed", 0o555, 0o666);
  const before = snapshot(join(dir, "closed"));
  const write = await openAs(as, { path });
  assert.equal(
    write,
    `error OpenError Cannot open database "${path}": permission denied (the folder is read-only; SQLite keeps the -wal and -shm files there)`,
  );
  // No -wal or -journal can appear in a read-only folder, so no process can
  // change the file: it is read as immutable, without any sidecar.
  const read = await openAs(as, { path, readonly: true, session: KNOWN });
  assert.match(read, /^ok found=yes /);
  assert.deepEqual(snapshot(join(dir, "closed")), before);
  chmodSync(join(dir, "closed"), 0o755); // so that the temporary folder can be removed
});

test("SessionDB.open() in a child process with umask 022 creates the db, -wal and -shm as 0600 and the folder as 0700", async () => {
  const dir = tempDir();
  for (const runtime of workerRuntimes(["deno", "bun", "node"])) {
    const path = join(dir, runtime, "nested", "state.db");
    const child = startWorker(runtime, "_open_child.ts", [JSON.stringify({ path, write: true })], {
      wrapper: ["sh", "-c", 'umask 022 && exec "$@"', "sh"],
    });
    const [report] = await child.succeeded();
    assert.equal(report, "ok found=no modes=600,600,600 dir=700", runtime);
  }
});

test("SessionDB.open() in a child process with umask 022 recreates -wal and -shm of an existing file as 0600", async () => {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  assert.deepEqual(readdirSync(join(path, "..")), ["state.db"], "the WAL was removed on close");
  for (const runtime of workerRuntimes(["deno", "bun", "node"])) {
    const child = startWorker(runtime, "_open_child.ts", [JSON.stringify({ path, write: true })], {
      wrapper: ["sh", "-c", 'umask 022 && exec "$@"', "sh"],
    });
    const [report] = await child.succeeded();
    assert.match(report, /^ok found=no modes=600,600,600 /, runtime);
  }
});
