/**
 * `vacuum` and `migrate` on a file another process keeps locked
 * past `HERMES_STATE_LOCK_TIMEOUT`: one line that says what was done (for
 * `migrate`, how far the upgrade went), and what to run once it is free.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli } from "./_cli_io.ts";
import { copyFixture, rawOpen, waitedAnyTime } from "./_helpers.ts";
import { migrate } from "../lib/sqlite/schema/migrate.ts";
import { Writer } from "../lib/sqlite/write.ts";

const ENV = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };

/** Runs `fn` while another connection holds the write lock of `path` (`BEGIN IMMEDIATE`). */
async function whileLocked<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  try {
    return await fn();
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
}

/** The v6 fixture in WAL mode, and with `schemaStep`, the upgrade's first transaction run. */
async function v6Copy(schemaStep: boolean): Promise<string> {
  const path = copyFixture("hermes-v6.db");
  const db = await rawOpen(path);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    // As a migrate stopped after it: the new search tables made, the older messages not in them.
    if (schemaStep) new Writer(db).run(() => migrate(db));
  } finally {
    db.close();
  }
  return path;
}

describe("a write command that a lock stops says what was done and what to run", () => {
  test("vacuum: the file was not rebuilt, run vacuum again", async () => {
    const path = await buildDb((db) => db.createSession("s1", "cli"));
    const run = await whileLocked(path, () => runCli(["--db", path, "vacuum"], { env: ENV }));
    assert.equal(run.code, 1);
    assert.equal(run.out, "");
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: the file was not rebuilt: database is locked by another process (waited ` +
        `0 s): ${path} (stop the gateway, or wait until it is free, then run vacuum again)\n`,
    );
  });

  test("migrate of an untouched older file: nothing was upgraded", async () => {
    const path = await v6Copy(false);
    const run = await whileLocked(path, () => runCli(["--db", path, "migrate"], { env: ENV }));
    assert.equal(run.code, 1);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: nothing was upgraded (schema 6): database is locked by another process ` +
        `(waited 0 s): ${path} (once it is free, run the same migrate again)\n`,
    );
  });

  test("migrate stopped half-way: says so, and the same migrate again finishes", async () => {
    const path = await v6Copy(true);
    const run = await whileLocked(path, () => runCli(["--db", path, "migrate"], { env: ENV }));
    assert.equal(run.code, 1);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: the upgrade of schema 6 stopped half-way: database is locked by another ` +
        `process (waited 0 s): ${path}; the file is whole, its search indexes not yet filled ` +
        `with the older messages (search finds those by plain substring meanwhile); once it is ` +
        `free, the same migrate again goes on from there\n`,
    );
    const again = await runCli(["--db", path, "migrate"]);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.err, "upgraded schema 6 → 11\n");
  });
});
