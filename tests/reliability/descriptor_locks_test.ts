import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { ROOT, tempDbPath } from "../_helpers.ts";
import { startWorker, workerRuntimes } from "./_runtimes.ts";

/**
 * Another process opens the file, writes and closes, as Python Hermes does
 * after each turn. It is Python's own sqlite3 (SQLite 3.40 on Debian): the
 * SQLite our runtimes link also looks at the -shm before deleting the WAL,
 * which hides the dropped lock, but Python's does not, and it is the
 * process that shares the file in the field. Then the runtimes' workers.
 */
async function otherProcessWrites(path: string, key: string): Promise<void> {
  const script = [
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1], timeout=5)",
    "c.execute(\"INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, 'other')\", (sys.argv[2],))",
    "c.commit()",
    "c.close()",
  ].join("\n");
  const python = spawnSync("python3", ["-c", script, path, key], { encoding: "utf8" });
  assert.equal(python.status, 0, python.stderr);
  for (const runtime of workerRuntimes(["bun", "deno", "node"])) {
    const worker = startWorker(runtime, "_write_once.ts", [JSON.stringify({ path, key })]);
    await worker.succeeded();
    assert.ok(worker.lines.includes("wrote"));
  }
}

test("a second open in the same process keeps the first connection's locks: another process's close leaves -wal and -shm in place", async () => {
  const path = tempDbPath();
  using first = await SessionDB.open({ path });
  first.createSession("s1", "cli");
  first.appendMessage("s1", { role: "user", content: "written before the second open" });
  assert.ok(existsSync(`${path}-wal`) && existsSync(`${path}-shm`));
  // A second connection in this process, opened after the first has written:
  // any descriptor it opened and closed on the file would drop the first's locks.
  using second = await SessionDB.open({ path });
  await using store = await openStore(path);
  using readonly = await SessionDB.open({ path, readonly: true });
  await otherProcessWrites(path, "other");
  assert.ok(existsSync(`${path}-wal`), "the -wal file was deleted under a live connection");
  assert.ok(existsSync(`${path}-shm`), "the -shm file was deleted under a live connection");
  first.appendMessage("s1", { role: "assistant", content: "written after the other process" });
  assert.equal(second.getMessages("s1").length, 2);
  assert.equal(await store.getMeta("other"), "other");
  assert.equal(readonly.getMeta("other"), "other");
  assert.deepEqual(first.inspect({ searchIndexes: true }).integrity, ["ok"]);
  readonly.close();
  await store.close();
  second.close();
  first.close();
  using reopened = await SessionDB.open({ path });
  assert.equal(reopened.getMessages("s1").length, 2);
  assert.deepEqual(reopened.inspect({ searchIndexes: true }).integrity, ["ok"]);
});

/** Calls that open a file descriptor (or a stream over one) in node:fs. */
const DESCRIPTOR_OPEN =
  /\b(openSync|createReadStream|createWriteStream|readFileSync|writeFileSync|appendFileSync|truncateSync|copyFileSync|open)\s*\(/;

/** Each allowed descriptor open, by file, with why it never touches a live database. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  // Creates a file that did not exist: no connection of this process holds it.
  "lib/sqlite/open.ts": ['openSync(path, "wx", 0o600)'],
  // A fresh temporary file beside the output, which is checked not to be the database; or
  // an output that is no regular file (a device, a pipe), which no connection can hold.
  "lib/cli/commands/export.ts": [
    'openSync(temp, "w", 0o600)',
    "createWriteStream(temp, { fd, autoClose: false })",
    'open(path, "w", (error, fd) => error === null ? resolve(fd) : reject(error))',
    "closeSync(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));",
  ],
  // The header of an existing export target, read after isDatabaseFile() ruled out the
  // database and its sidecars (the only file a connection of the CLI holds); or the start of
  // a file the CLI's open of it refused as not a database (so no connection holds it).
  "lib/cli/sqlite_header.ts": ['openSync(path, "r")'],
  // The import input, read only after the command refused the database or one of its sidecars.
  "lib/cli/jsonl_input.ts": ["createReadStream(source"],
  // The libpq password file of a server login, read once before the store's first connection;
  // a file beside a -wal or -shm (a SQLite database in use) is never read.
  "lib/postgres/_pgpass.ts": ['readFileSync(path, "utf8")'],
  // The kernel's status of this process (its capabilities), never a database.
  "lib/files/may_write.ts": ['readFileSync("/proc/self/status", "utf8")'],
  // The kernel's table of this process's mounts, never a database.
  "lib/files/read_only_mount.ts": ['readFileSync("/proc/self/mountinfo", "utf8")'],
  // Trajectory JSON Lines files, never a database.
  "lib/files/trajectory.ts": ["appendFileSync(filename"],
  // recover's raw page reads: it runs before recover opens its own connection
  // on the damaged file, and the file is one the operator stopped writing;
  // the same for the -wal of an emptied main file, read whole before any connection.
  "lib/health/_page_scan.ts": ['openSync(path, "r")', "readFileSync(walPath)"],
  // recover's scratch file of the rows it read: created new ("wx") beside DEST, mode 0600,
  // before its own connection opens it; no other connection ever holds it.
  "lib/health/_recover_rows.ts": ['writeFileSync(this.#path, "", { mode: 0o600, flag: "wx" })'],
  // The frames of a -wal, read to tell one of another database: SQLite locks the main file
  // and the -shm, never the -wal, so closing this descriptor drops no lock of a connection.
  "lib/sqlite/wal_commits.ts": ['openSync(walPath, "r")'],
  // The same, to count the commits a -wal holds past a frame that fails its checksum.
  "lib/health/wal_break.ts": ['openSync(walPath, "r")'],
  // recover's image of the commits past a broken -wal frame: the -wal (never locked), and the
  // damaged file copied into a new temporary file, both before recover opens its connection
  // on the damaged file (as _page_scan.ts); then that temporary file, which no connection
  // holds until it is written.
  "lib/health/_recover_wal_salvage.ts": ["readFileSync(walPath)"],
  "lib/health/wal_salvage.ts": ["copyFileSync(main, out)", 'openSync(out, "r+")'],
  // backup: a new, empty temporary file; then reading and writing the
  // verified copy, whose connection was closed, and a new gzip file.
  "lib/health/backup.ts": [
    'openSync(temp, "wx", 0o600)',
    "createReadStream(copy)",
    "createWriteStream(gz,",
  ],
};

function libFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return libFiles(rel);
    return entry.name.endsWith(".ts") ? [rel] : [];
  });
}

test("no module of lib/ opens a descriptor on a database path, except where the scan's allow list says why", () => {
  const found: string[] = [];
  for (const file of libFiles("lib")) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "").trim();
      if (code.startsWith("*") || code.startsWith("/*")) return;
      if (!DESCRIPTOR_OPEN.test(code)) return;
      if (/\.open\(|openDriver\(|openStore\(|openConnection\(|async open\(/.test(code)) return;
      if ((ALLOWED[file] ?? []).some((allowed) => code.includes(allowed))) return;
      found.push(`${file}:${i + 1}: ${code}`);
    });
  }
  assert.deepEqual(
    found,
    [],
    "a new descriptor open in lib/: make sure it can never be a database a connection of this process holds, then list it in ALLOWED",
  );
});
