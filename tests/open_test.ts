import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { SessionDB, storeOf } from "../lib/sqlite/session_db.ts";
import { OpenError, ReadonlyError } from "../lib/core/errors.ts";
import { defaultDbPath, hermesHome } from "../lib/core/paths.ts";
import { copyFixture, FIXTURES, tempDbPath, tempDir } from "./_helpers.ts";

async function assertOpenFails(path: string, pattern: RegExp): Promise<void> {
  await assert.rejects(SessionDB.open({ path }), (error) => {
    assert.ok(error instanceof OpenError, String(error));
    assert.equal(error.path, path);
    assert.ok(error.message.startsWith(`Cannot open database "${path}": `), error.message);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

test("SessionDB.open() creates the parent folder and a 0600 file with 0600 sidecars", async () => {
  const path = join(tempDir(), "nested", "deeper", "state.db");
  using _db = await SessionDB.open({ path }); // open while its -wal and -shm are checked
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    assert.equal(statSync(file).mode & 0o777, 0o600, file);
  }
});

test("SessionDB.open() fails with a one-line error naming the path when it is a folder", async () => {
  const path = tempDir();
  await assertOpenFails(path, /it is a folder/);
});

test("SessionDB.open() fails on a file that is not SQLite and leaves its bytes alone", async () => {
  const path = join(tempDir(), "state.db");
  const bytes = "this is a text file, not a database\n".repeat(200);
  writeFileSync(path, bytes);
  await assertOpenFails(path, /not a database/);
  assert.equal(readFileSync(path, "utf8"), bytes);
});

test("SessionDB.open() fails on a truncated SQLite file and leaves its bytes alone", async () => {
  const path = join(tempDir(), "state.db");
  const original = readFileSync(join(FIXTURES, "hermes-v11.db"));
  const truncated = original.subarray(0, 4096 * 3);
  writeFileSync(path, truncated);
  await assertOpenFails(path, /malformed|not a database/);
  assert.deepEqual(readFileSync(path), truncated);
});

test("SessionDB.open() fails when the parent path is a file", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "plain"), "x");
  const path = join(dir, "plain", "state.db");
  await assertOpenFails(path, /not a folder|not a directory|ENOTDIR/i);
});

test(
  "SessionDB.open() fails in a folder without write permission",
  {
    skip: process.getuid?.() === 0
      ? "root ignores permissions (covered by the reliability suite)"
      : false,
  },
  async () => {
    const dir = tempDir();
    const locked = join(dir, "locked");
    mkdirSync(locked, { mode: 0o500 });
    await assertOpenFails(join(locked, "state.db"), /permission denied/);
    chmodSync(locked, 0o700);
  },
);

test("SessionDB.open({ readonly }) never creates a missing file", async () => {
  const path = tempDbPath();
  await assert.rejects(SessionDB.open({ path, readonly: true }), /no such file/);
  assert.throws(() => statSync(path));
});

test("SessionDB.open({ readonly }) reads a fixture and refuses writes", async () => {
  const path = copyFixture("hermes-v11.db");
  const before = readFileSync(path);
  using db = await SessionDB.open({ path, readonly: true });
  assert.equal(db.readonly, true);
  assert.throws(() => db.setMeta("k", "v"), ReadonlyError);
  db.close();
  assert.deepEqual(readFileSync(path), before);
});

test("every connection gets a 16 MiB page cache, read-only ones too, and the file is untouched", async () => {
  const path = copyFixture("hermes-v11.db");
  const before = readFileSync(path);
  for (const readonly of [true, false]) {
    using db = await SessionDB.open({ path, readonly });
    const row = storeOf(db).statement("PRAGMA cache_size").get();
    assert.equal(row?.cache_size, -16384, `readonly: ${readonly}`);
    if (readonly) assert.deepEqual(readFileSync(path), before);
  }
});

test("on Windows the home is hermes in LOCALAPPDATA, as Hermes finds it; HERMES_HOME first", () => {
  const home = "C:\\Users\\ada";
  const at = (env: Record<string, string | undefined>) =>
    defaultDbPath({ env, platform: "win32", home });
  assert.equal(
    at({ LOCALAPPDATA: "D:\\Local" }),
    "D:\\Local\\hermes\\state.db",
  );
  // Blank or missing: AppData\Local of the user's home.
  for (const env of [{}, { LOCALAPPDATA: "  " }]) {
    assert.equal(at(env), "C:\\Users\\ada\\AppData\\Local\\hermes\\state.db");
  }
  assert.equal(
    at({ HERMES_HOME: "E:\\hermes", LOCALAPPDATA: "D:\\Local" }),
    "E:\\hermes\\state.db",
  );
  // Elsewhere, ~/.hermes whatever LOCALAPPDATA says.
  assert.equal(
    defaultDbPath({ env: { LOCALAPPDATA: "/x" }, platform: "linux", home: "/home/ada" }),
    "/home/ada/.hermes/state.db",
  );
});

test("defaultDbPath() reads HERMES_HOME at each call and ignores a blank value", () => {
  const saved = process.env.HERMES_HOME;
  try {
    process.env.HERMES_HOME = "/srv/hermes";
    assert.equal(hermesHome(), "/srv/hermes");
    assert.equal(defaultDbPath(), "/srv/hermes/state.db");
    process.env.HERMES_HOME = "   ";
    assert.ok(defaultDbPath().endsWith(join(".hermes", "state.db")));
  } finally {
    if (saved === undefined) delete process.env.HERMES_HOME;
    else process.env.HERMES_HOME = saved;
  }
});

test("SessionDB.open() uses $HERMES_HOME/state.db when no path is given", async () => {
  const saved = process.env.HERMES_HOME;
  const home = join(tempDir(), "home");
  try {
    process.env.HERMES_HOME = home;
    using db = await SessionDB.open();
    assert.equal(db.path, join(home, "state.db"));
    db.close();
    assert.ok(statSync(join(home, "state.db")).isFile());
  } finally {
    if (saved === undefined) delete process.env.HERMES_HOME;
    else process.env.HERMES_HOME = saved;
  }
});

test("SessionDB close() twice is harmless and Symbol.dispose closes", async (t) => {
  const db = await SessionDB.open({ path: tempDbPath() });
  db.close();
  db.close();
  assert.throws(() => db.getMeta("k"), "a closed database answers no call");
  const other = await SessionDB.open({ path: tempDbPath() });
  other[Symbol.dispose]();
  assert.throws(() => other.getMeta("k"), "Symbol.dispose closed the connection");
  other.close();
  {
    using scoped = await SessionDB.open({ path: tempDbPath() });
    scoped.setMeta("k", "v");
    t.after(() =>
      assert.throws(() => scoped.getMeta("k"), "using closed it at the end of the block")
    );
  }
});

test("SessionDB.open() of a file at the current schema writes nothing: no WAL frame, so no sync", async () => {
  const path = copyFixture("hermes-v11.db");
  (await SessionDB.open({ path })).close();
  const before = readFileSync(path);
  const db = await SessionDB.open({ path });
  try {
    // stat only: reading a file through a descriptor while it is open would drop its locks.
    assert.equal(statSync(`${path}-wal`).size, 0, "the open wrote a frame to the -wal");
  } finally {
    db.close();
  }
  assert.deepEqual(readFileSync(path), before);
});

test("SessionDB.open() through a link to nothing fails with a not_found OpenError naming the link, read-only or not", async () => {
  const link = join(tempDir(), "state.db");
  symlinkSync(join(tempDir(), "gone.db"), link);
  for (const readonly of [true, false]) {
    await assert.rejects(SessionDB.open({ path: link, readonly }), (error: Error) => {
      assert.ok(error instanceof OpenError, String(error));
      assert.equal(error.kind, "not_found");
      assert.equal(
        error.message,
        `Cannot open database "${link}": no such file (it is a link to a file that is not there)`,
      );
      return true;
    });
  }
});
