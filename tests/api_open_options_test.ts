// Opening a store with the options misspelt, as an agent builder fresh from Python (or from
// JavaScript, where no compiler looks at them) may write them: `readOnly` for `readonly`, `pth`
// for `path`, `new SessionDB(path)` for `await SessionDB.open(...)`. Each was ignored, so the
// open went on with the defaults: for writing (an older file upgraded in place) or on
// ~/.hermes/state.db. Each is now an error naming the option, with nothing created or changed;
// and `SessionDB.open(path)`, Python's `SessionDB(db_path)`, opens that path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { doctor } from "../lib/health/doctor.ts";
import { backupDatabase } from "../lib/health/backup.ts";
import { recoverDatabase } from "../lib/health/recover.ts";
import { saveTrajectory } from "../lib/files/trajectory.ts";
import { copyFixture, tempDir } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any -- the wrong options are what is tested
type Loose = any;

function digest(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

test("SessionDB.open(path) opens that path, as Python's SessionDB(db_path) does", async () => {
  const path = join(tempDir(), "given.db");
  {
    using db = await SessionDB.open(path);
    assert.equal(db.path, path);
    db.createSession("s1", "cli");
  }
  using reader = await SessionDB.open({ path, readonly: true });
  assert.equal(reader.getSession("s1")?.source, "cli");
});

test("SessionDB.open() refuses a misspelt option, naming it and the one meant; nothing is created", async () => {
  const path = join(tempDir(), "never.db");
  const names = "the options are path, readonly, synchronous, retry, clock and openDriver";
  await assert.rejects(SessionDB.open({ path, readOnly: true } as Loose), {
    name: "TypeError",
    message: `Cannot open database: no option "readOnly" (did you mean "readonly"?); ${names}`,
  });
  await assert.rejects(SessionDB.open({ pth: path } as Loose), {
    message: `Cannot open database: no option "pth" (did you mean "path"?); ${names}`,
  });
  await assert.rejects(SessionDB.open({ db_path: path } as Loose), { // Python's name
    message: `Cannot open database: no option "db_path" (did you mean "path"?); ${names}`,
  });
  await assert.rejects(SessionDB.open({ path, wal: true } as Loose), {
    message: `Cannot open database: no option "wal"; ${names}`,
  });
  await assert.rejects(SessionDB.open(42 as Loose), {
    name: "TypeError",
    message: "Cannot open database: options must be an object: current value is 42",
  });
  assert.equal(existsSync(path), false);
});

test("a read-only open with readOnly misspelt leaves an older file as it was (it would upgrade it)", async () => {
  const path = copyFixture("hermes-v6.db");
  const before = digest(path);
  await assert.rejects(SessionDB.open({ path, readOnly: true } as Loose), TypeError);
  await assert.rejects(openStore(path, { readOnly: true } as Loose), TypeError);
  assert.equal(digest(path), before);
  assert.equal(existsSync(`${path}-wal`), false);
});

test("new SessionDB(path) says how to open a file instead of failing at the first call", () => {
  const path = join(tempDir(), "new.db");
  assert.throws(() => new (SessionDB as Loose)(path), {
    name: "TypeError",
    message:
      "SessionDB has no public constructor: open a file with `await SessionDB.open({ path })`",
  });
  assert.equal(existsSync(path), false);
});

test("openStore() refuses an option neither engine takes, and options that are not an object", async () => {
  const path = join(tempDir(), "never.db");
  await assert.rejects(openStore(path, { readOnly: true } as Loose), {
    name: "TypeError",
    message:
      /^Cannot open store: no option "readOnly" \(did you mean "readonly"\?\); the options are readonly, synchronous, retry, clock, openDriver, max, maxAttempts, sleep, random and schema$/,
  });
  await assert.rejects(openStore(path, "readonly" as Loose), {
    name: "TypeError",
    message: "Cannot open store: options must be an object: current value is readonly",
  });
  assert.equal(existsSync(path), false);
  // Either engine's options are taken for either target (the CLI gives a server `retry` too).
  await using store = await openStore(path, { schema: "hermes", retry: { timeoutMs: 100 } });
  assert.equal(await store.messageCount(), 0);
});

test("SessionDB.open() refuses a URL, which it would have made a folder tree of, and reads sqlite:PATH", async () => {
  const dir = tempDir();
  const url = `postgres://hermes@127.0.0.1/${dir.replace(/^\//, "")}`;
  await assert.rejects(SessionDB.open(url), {
    name: "OpenError",
    message: `Cannot open database "${url}": a PostgreSQL store opens with openStore(url); ` +
      "SessionDB opens a state.db file",
  });
  await assert.rejects(SessionDB.open({ path: `file:${dir}/a.db` }), {
    name: "OpenError",
    message: /SQLite URIs \(file:\) are not taken: give the file's path instead/,
  });
  await assert.rejects(SessionDB.open({ path: `sqlite://${dir}/a.db` }), {
    message: /write sqlite:PATH without the slashes/,
  });
  assert.equal(existsSync("postgres:"), false, "no folder named after the URL");
  assert.equal(existsSync(`${dir}/a.db`), false);
  using db = await SessionDB.open(`sqlite:${dir}/b.db`);
  assert.equal(db.path, `${dir}/b.db`);
  assert.equal(existsSync(`${dir}/b.db`), true);
});

test("doctor, backup, recover and saveTrajectory refuse an option they do not take; nothing is made", async () => {
  const path = join(tempDir(), "state.db");
  (await SessionDB.open(path)).close();
  const before = digest(path);
  const dest = join(tempDir(), "copy.db");
  await assert.rejects(doctor(path, { fixx: true } as Loose), {
    name: "TypeError",
    message:
      /^Cannot check database: no option "fixx" \(did you mean "fix"\?\); the options are fix, /,
  });
  await assert.rejects(backupDatabase(path, dest, { overwrite: true } as Loose), {
    message: /^Cannot back up database: no option "overwrite"; the options are force, /,
  });
  await assert.rejects(recoverDatabase(path, dest, { forse: true } as Loose), {
    message: /^Cannot recover database: no option "forse" \(did you mean "force"\?\)/,
  });
  const filename = join(tempDir(), "t.jsonl");
  await assert.rejects(
    async () => await saveTrajectory([], { model: "m", completed: true, file: filename } as Loose),
    { message: /^Cannot save trajectory: no option "file"/ },
  );
  assert.equal(existsSync(dest), false);
  assert.equal(existsSync(filename), false);
  assert.equal(digest(path), before);
});
