import { test } from "node:test";
import process from "node:process";
import assert from "node:assert/strict";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { folderWithFixture, rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { snapshot } from "./_checks.ts";
import { type StartOptions, startWorker, workerRuntimes } from "./_runtimes.ts";
import { isRoot, openAs, unprivilegedSetup } from "./_unprivileged.ts";

/** A session of the v11 fixture. */
const KNOWN = "20251221_090000_9738df";

/** A fresh folder of the test's own, and how to run as an unprivileged user (found once). */
const setup = unprivilegedSetup(tempDir);

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
  // Read as immutable: SQLite's read-only mode would leave a -wal and -shm of this user's
  // in the owner's folder, which the owner's Hermes could then not write.
  const read = await openAs(as, { path, readonly: true, session: KNOWN });
  assert.match(read, /^ok found=yes modes=444,none,none /);
  assert.deepEqual(snapshot(join(dir, "open")), before, "no sidecar left behind");
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
  // SQLite's read-only mode cannot make its -wal and -shm here: it is read as immutable.
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

test(`SessionDB.open() read-only of another user's file beside its -wal, in a folder the reader may write, leaves no file of the reader's, even when that -wal goes just before the first read${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  if (isRoot() && !as.wrapper?.some((arg) => arg.startsWith("--reuid"))) {
    return t.skip("the reader runs as root here, the owner of the file and of what it makes");
  }
  const path = folderWithFixture(dir, "busy", 0o777, 0o444);
  // The owner's Hermes, live: its -wal holds a commit (so the open's check of it runs).
  if (!isRoot()) chmodSync(path, 0o644);
  using owner = await SessionDB.open({ path });
  owner.appendMessage(KNOWN, { role: "user", content: "in the owner's -wal" });
  if (!isRoot()) chmodSync(path, 0o444);
  // SQLite's read-only mode would make a -wal and -shm of the reader's once those are gone,
  // which the owner's Hermes could not write: it is read immutable, what the owner checkpointed.
  const read = await openAs(as, { path, readonly: true, session: KNOWN, vanishingWal: true });
  assert.match(read, /^ok found=yes /);
  const owners = readdirSync(dirname(path)).map((name) => statSync(join(dirname(path), name)).uid);
  assert.deepEqual(
    owners.filter((uid) => uid !== process.getuid?.()),
    [],
    "no file of the reader's",
  );
  chmodSync(dirname(path), 0o755);
});

/**
 * Runs `_paused_read.ts` with `config` as the unprivileged user; at its pause
 * (the file read, the work not yet done) the owner appends 200 messages.
 *
 * @returns The worker's report, its last line.
 */
async function pausedWhileOwnerWrites(
  as: StartOptions,
  dir: string,
  config: { tool: string; path: string; dest?: string },
  write: () => Promise<void> = () => ownerAppends(config.path, 200),
): Promise<string> {
  const child = startWorker(runtimeName(), "_paused_read.ts", [JSON.stringify(config)], as);
  await child.waitFor((line) => line === "paused", "the pause before the work");
  await write();
  writeFileSync(join(dir, "go"), "");
  return (await child.succeeded()).at(-1)!;
}

/**
 * What the owner's checkpoint may leave in place of the file at `path`: a
 * copy with every other message deleted, its pages laid out anew (`VACUUM`),
 * made beside it.
 *
 * @returns The copy's path and how many sessions and messages it holds.
 */
async function rewrittenCopy(path: string): Promise<{ copy: string; counts: string }> {
  const copy = `${dirname(dirname(path))}/rewritten.db`;
  copyFileSync(path, copy);
  using raw = await rawOpen(copy);
  raw.exec(
    "DELETE FROM messages WHERE id % 2 = 0; CREATE TABLE pad (x); " +
      "INSERT INTO pad SELECT randomblob(3000) FROM messages; VACUUM",
  );
  const count = (table: string) =>
    Number(raw.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n);
  return { copy, counts: `${count("sessions")} ${count("messages")}` };
}

/**
 * The file's owner (this process) appends `count` messages to the known
 * session and closes, as a Hermes run would; the folder and file are made
 * writable for it meanwhile when it is not root.
 */
async function ownerAppends(path: string, count: number): Promise<void> {
  const folder = dirname(path);
  const modes = [statSync(folder).mode & 0o777, statSync(path).mode & 0o777];
  if (!isRoot()) {
    chmodSync(folder, 0o755);
    chmodSync(path, 0o644);
  }
  try {
    using db = await SessionDB.open({ path });
    const text = "the owner wrote this while a reader of another user's kept the file open ";
    for (let i = 0; i < count; i++) db.appendMessage(KNOWN, { role: "user", content: text + i });
  } finally {
    chmodSync(folder, modes[0]);
    chmodSync(path, modes[1]);
  }
}

for (
  const [place, folderMode, fileMode] of [
    ["a file the user may not write", 0o777, 0o444],
    ["a file in a folder the user may not write", 0o555, 0o666],
  ] as const
) {
  test(`A read-only SessionDB that lives on sees what the owner writes later, in ${place}${asRoot}`, async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "shared", folderMode, fileMode);
    let known: number;
    {
      using db = await SessionDB.open({ path, readonly: true });
      known = db.messageCount(KNOWN);
    }
    const before = snapshot(dirname(path));
    const config = { path, session: KNOWN, until: known + 300 };
    const reader = startWorker(runtimeName(), "_follow_reader.ts", [JSON.stringify(config)], as);
    try {
      const first = await reader.waitFor((line) => line.startsWith("count "), "first count");
      assert.equal(first.split(" ")[1], String(known));
      assert.deepEqual(snapshot(dirname(path)), before, "the open reader left nothing beside it");
      await ownerAppends(path, 300);
      const end = await reader.waitFor(
        (line) => line !== first && !line.startsWith("count "),
        "end",
      );
      assert.equal(end, "done", reader.lines.join(" | "));
      const last = reader.lines.at(-2)!.split(" ");
      assert.equal(last[1], String(known + 300));
      assert.notEqual(last[2], first.split(" ")[2], "the live marker moved with the data");
    } finally {
      reader.kill("SIGKILL");
      await reader.exited;
      chmodSync(dirname(path), 0o755); // so that the temporary folder can be removed
    }
  });
}

test(`backupDatabase() of a file the user may not write copies it again when its owner wrote during the copy${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "owned", 0o777, 0o444);
  let known: { sessions: number; messages: number };
  {
    using db = await SessionDB.open({ path, readonly: true });
    known = { sessions: db.sessionCount(), messages: db.messageCount(KNOWN) };
  }
  const out = join(dir, "out");
  mkdirSync(out, { mode: 0o777 });
  chmodSync(out, 0o777);
  const dest = join(out, "copy.db");
  const report = await pausedWhileOwnerWrites(as, dir, { tool: "backup", path, dest });
  const source = await rawOpen(path, true);
  const total = Number(source.prepare("SELECT count(*) AS n FROM messages").get()?.n);
  source.close();
  assert.equal(report, `ok ${known.sessions} ${total}`);
  using copy = await SessionDB.open({ path: dest, readonly: true });
  assert.equal(copy.messageCount(KNOWN), known.messages + 200, "the copy holds the owner's write");
});

test(`doctor() of a file the user may not write checks it again when its owner wrote during the checks${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "owned", 0o777, 0o444);
  const report = await pausedWhileOwnerWrites(as, dir, { tool: "doctor", path });
  // The fixture's own warnings, as a check of the quiet file gives them: no damage.
  assert.equal(report, "ok true fts:messages_fts_trigram,wal,files");
});

for (
  const [tool, what] of [
    ["export", "An export in pieces (the CLI's export)"],
    ["iterate", "SessionDB.iterateExport()"],
  ] as const
) {
  test(`${what} of a file the user may not write reads a session again, on the file opened anew, when the owner wrote the file during its read${asRoot}`, async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "owned", 0o777, 0o444);
    const { copy, counts } = await rewrittenCopy(path);
    // The owner's checkpoint writes the pages in place, under the reader's cached ones: SQLite
    // takes the mix for a malformed file, and the export failed.
    const report = await pausedWhileOwnerWrites(
      as,
      dir,
      { tool, path },
      () => Promise.resolve(writeFileSync(path, readFileSync(copy))),
    );
    assert.equal(report, `ok ${counts}`, "every session, with the messages of the file as it is");
  });
}

test(`SessionDB.inspect() of a file the user may not write checks it again when its owner wrote during the check${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "owned", 0o777, 0o444);
  const report = await pausedWhileOwnerWrites(as, dir, { tool: "info", path });
  assert.equal(report, "ok ok", "no damage reported for the owner's write");
});

test(`backupDatabase() and recoverDatabase() of another user's file in a folder the reader may write keep the commits its -wal holds${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "held", 0o777, 0o444);
  if (!isRoot()) chmodSync(path, 0o644);
  let known: number;
  {
    using db = await SessionDB.open({ path, readonly: true });
    known = db.messageCount(KNOWN);
  }
  // The owner's Hermes, still open: its last commits are in the -wal only.
  using owner = await SessionDB.open({ path });
  for (let i = 0; i < 5; i++) {
    owner.appendMessage(KNOWN, { role: "user", content: `in the -wal ${i}` });
  }
  if (!isRoot()) chmodSync(path, 0o444);
  const out = join(dir, "out");
  mkdirSync(out, { mode: 0o777 });
  chmodSync(out, 0o777);
  writeFileSync(join(dir, "go"), ""); // backup's pause ends at once
  for (const tool of ["backup", "recover"]) {
    const dest = join(out, `${tool}.db`);
    const config = { tool, path, dest };
    const child = startWorker(runtimeName(), "_paused_read.ts", [JSON.stringify(config)], as);
    const lines = await child.succeeded();
    assert.match(lines.at(-1)!, /^ok /, `${tool}: ${lines.join(" | ")}`);
    using copy = await SessionDB.open({ path: dest, readonly: true });
    assert.equal(copy.messageCount(KNOWN), known + 5, tool);
  }
});
