import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OpenError, ReadonlyError, StorageError } from "../lib/core/errors.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { WriteBusyError } from "../lib/sqlite/write_busy_error.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { copyFixture, tempDbPath, tempDir } from "./_helpers.ts";

test("SqliteError is a StorageError whose kind follows from the result code, with the code's name", () => {
  const cases: [number, string, string][] = [
    [5, "busy", "SQLITE_BUSY"],
    [6, "busy", "SQLITE_LOCKED"],
    [8, "readonly", "SQLITE_READONLY"],
    [10, "io", "SQLITE_IOERR"],
    [11, "corrupt", "SQLITE_CORRUPT"],
    [13, "full", "SQLITE_FULL"],
    [19, "constraint", "SQLITE_CONSTRAINT"],
    [26, "corrupt", "SQLITE_NOTADB"],
    [1, "other", "SQLITE_ERROR"],
  ];
  for (const [code, kind, name] of cases) {
    const error = new SqliteError("x", code);
    assert.ok(error instanceof StorageError);
    assert.equal(error.kind, kind, name);
    assert.equal(error.codeName, name);
  }
  const busy = new WriteBusyError(3, new SqliteError("database is locked", 5));
  assert.equal(busy.kind, "busy");
});

test("a missing session's foreign-key failure reaches the caller as a StorageError of kind constraint", async () => {
  await using store = await openStore(tempDbPath());
  await assert.rejects(
    store.appendMessage("no-such-session", { role: "user", content: "hi" }),
    (error) => error instanceof StorageError && error.kind === "constraint",
  );
});

test("OpenError and ReadonlyError are StorageErrors: a file that is not a database is corrupt, a folder io, a read-only write readonly", async () => {
  const dir = tempDir();
  const junk = join(dir, "junk.db");
  writeFileSync(
    junk,
    "this is not a database file, it is text and long enough to be read".repeat(10),
  );
  await assert.rejects(SessionDB.open({ path: junk }), (error) => {
    assert.ok(error instanceof OpenError && error instanceof StorageError);
    assert.equal(error.kind, "corrupt");
    return true;
  });
  const folder = join(dir, "folder.db");
  mkdirSync(folder);
  await assert.rejects(
    SessionDB.open({ path: folder }),
    (error) => error instanceof OpenError && error.kind === "io",
  );
  await assert.rejects(
    SessionDB.open({ path: join(dir, "missing.db"), readonly: true }),
    (error) => error instanceof OpenError && error.kind === "not_found",
  );
  using db = await SessionDB.open({ path: copyFixture("hermes-v11.db"), readonly: true });
  assert.throws(
    () => db.setMeta("k", "v"),
    (error) => error instanceof ReadonlyError && error.kind === "readonly",
  );
});
