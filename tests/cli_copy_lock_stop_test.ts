/**
 * `copy` stopped by another process's lock, kept past
 * `HERMES_STATE_LOCK_TIMEOUT`, wherever it meets it: opening SRC or DEST,
 * writing a session into DEST, reading SRC, linking at the end; file to
 * file, file to PostgreSQL and PostgreSQL to file. Each says what is in and
 * what to run once the lock is free (with `--replace`, that the same copy
 * writes again what it wrote); `--json` prints the counts first, with
 * `not_copied`. The lock is taken at a set point of the run, never after a
 * timed wait.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, interruptibleIo, runCli, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { tempDbPath, waitedAnyTime } from "./_helpers.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { LockHolder } from "./_write_lock_holder.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

const ENV = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };

/**
 * A file of sessions `s2`, `s1`, `s0` in the order `copy` reads them (and,
 * with `lineage`, a child `z` read before its parent `a`), one message each.
 */
async function sourceFile(lineage = false): Promise<string> {
  return await buildDb((db) => {
    for (const id of ["s0", "s1", "s2"]) {
      db.createSession(id, "cli");
      db.appendMessage(id, { role: "user", content: `message of ${id}` });
    }
    if (lineage) {
      db.createSession("a", "cli");
      db.createSession("z", "cli", { parentSessionId: "a" });
    }
  });
}

/** An existing, empty target file. */
async function emptyTarget(): Promise<string> {
  const path = tempDbPath();
  await withDb(path, () => {});
  return path;
}

async function sessionIds(path: string): Promise<string[]> {
  return await withDb(
    path,
    (db) => ["s0", "s1", "s2", "a", "z"].filter((id) => db.getSession(id) !== undefined),
  );
}

type Method = "importSession" | "restoreParentLinks";

/**
 * Runs `fn` while `proto[method]` has `holder` take the lock when
 * `when(args)` says so: before `restoreParentLinks`, after `importSession`.
 */
async function lockingAt<T>(
  proto: object,
  method: Method,
  when: (args: unknown[]) => boolean,
  holder: LockHolder,
  fn: () => Promise<T>,
): Promise<T> {
  const methods = proto as Record<Method, (...args: unknown[]) => unknown>;
  const original = methods[method];
  methods[method] = function (this: unknown, ...args: unknown[]) {
    if (method === "restoreParentLinks" && when(args)) holder.take();
    const result = original.apply(this, args);
    if (method !== "importSession" || !when(args)) return result;
    // The PostgreSQL store's answer is a promise: the lock is taken once it is written.
    if (result instanceof Promise) return result.then((value) => (holder.take(), value));
    holder.take();
    return result;
  };
  try {
    return await fn();
  } finally {
    methods[method] = original;
    holder.release();
  }
}

/** After the record of `id` is written. */
const afterWriting = (id: string) => (args: unknown[]) => (args[0] as { id: string }).id === id;
/** When there are links to make. */
const linking = (args: unknown[]) => (args[0] as unknown[]).length > 0;

const FILE_PROTO = SessionDB.prototype;

describe("copy file → file stopped by a lock", () => {
  test("DEST locked at opening: nothing was copied, the same copy again (text and --json)", async () => {
    const source = await sourceFile();
    const target = await emptyTarget();
    for (const json of [false, true]) {
      const holder = await LockHolder.on(target);
      holder.take();
      let run;
      try {
        run = await runCli([...(json ? ["--json"] : []), "copy", source, target], { env: ENV });
      } finally {
        holder.release();
      }
      assert.equal(run.code, 1, run.err);
      assert.equal(
        waitedAnyTime(run.err),
        `hermes-state: nothing was copied: database is locked by another process (waited 0 s): ` +
          `${target} (once it is free, run the same copy again)\n`,
      );
      if (!json) assert.equal(run.out, "");
      else {
        const counts = JSON.parse(run.out);
        assert.deepEqual([counts.copied, counts.not_copied], [0, 3]);
      }
    }
    assert.deepEqual(await sessionIds(target), []);
  });

  test("SRC held whole at opening: nothing was copied, not_copied unknown", async () => {
    const source = await sourceFile();
    const target = await emptyTarget();
    const holder = await LockHolder.on(source, { whole: true });
    holder.take();
    let run;
    try {
      run = await runCli(["--json", "copy", source, target], { env: ENV });
    } finally {
      holder.release();
    }
    assert.equal(run.code, 1, run.err);
    assert.match(
      run.err,
      new RegExp(
        `^hermes-state: nothing was copied: database is locked by another process .*: ` +
          `${source} \\(once it is free, run the same copy again\\)\\n$`,
      ),
    );
    const counts = JSON.parse(run.out);
    assert.deepEqual([counts.copied, counts.not_copied], [0, null]);
  });

  test("--json prints the counts and not_copied before the error", async () => {
    const source = await sourceFile();
    const target = await emptyTarget();
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      FILE_PROTO,
      "importSession",
      afterWriting("s2"),
      holder,
      () => runCli(["--json", "copy", source, target], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    assert.deepEqual(JSON.parse(run.out), {
      copied: 1,
      replaced: 0,
      skipped: 0,
      messages: 1,
      failed: 0,
      linked: 0,
      meta_keys: 0,
      dropped_columns: [],
      renamed: [],
      failures: [],
      not_copied: 2,
    });
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: Cannot copy s1: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; run the copy again to go on)\n`,
    );
    assert.deepEqual(await sessionIds(target), ["s2"]);
    const again = await runCli(["copy", source, target]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(await sessionIds(target), ["s0", "s1", "s2"]);
  });

  test("--replace: the hint says the same copy writes again what this run wrote", async () => {
    const source = await sourceFile();
    const target = await emptyTarget();
    assert.equal((await runCli(["copy", source, target])).code, 0);
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      FILE_PROTO,
      "importSession",
      afterWriting("s1"),
      holder,
      () => runCli(["--json", "copy", "--replace", source, target], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.deepEqual([counts.replaced, counts.not_copied], [2, 1]);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: Cannot copy s0: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; the same copy --replace again ` +
        `goes on, after writing again the 2 sessions this run wrote)\n`,
    );
  });

  test("a lock at the end's parent links: every session is in, the same copy links them", async () => {
    const source = await sourceFile(true);
    const target = await emptyTarget();
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      FILE_PROTO,
      "restoreParentLinks",
      linking,
      holder,
      () => runCli(["--json", "copy", "--replace", source, target], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.deepEqual([counts.copied, counts.linked, counts.not_copied], [5, 0, 0]);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: every session is in (5 sessions written, 0 skipped already present, each ` +
        `whole), but 1 session copied before its parent is not linked: database is locked by ` +
        `another process (waited 0 s): ${target}; once it is free, the same copy again without ` +
        `--replace (which would write every session again) links them\n`,
    );
    const again = await runCli(["copy", source, target]);
    assert.equal(again.code, 0, again.err);
    const parent = await withDb(target, (db) => db.getSession("z")?.parent_session_id);
    assert.equal(parent, "a");
  });
});

describe("copy between a file and PostgreSQL stopped by a lock", { skip: PG_SKIP }, () => {
  test("file → PostgreSQL, SRC held whole: nothing was copied, --json says so too", {
    timeout: 60_000,
  }, async () => {
    const source = await sourceFile();
    const url = schemaUrl(freshSchema());
    const holder = await LockHolder.on(source, { whole: true });
    holder.take();
    let run;
    try {
      run = await runCli(["--json", "copy", source, url], { env: ENV });
    } finally {
      holder.release();
    }
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.deepEqual([counts.copied, counts.not_copied], [0, null]);
    assert.match(
      run.err,
      new RegExp(
        `^hermes-state: nothing was copied: database is locked by another process .*: ` +
          `${source} \\(once it is free, run the same copy again\\)\\n$`,
      ),
    );
    const again = await runCli(["--json", "copy", source, url]);
    assert.equal(again.code, 0, again.err);
    assert.equal(JSON.parse(again.out).copied, 3);
  });

  test("PostgreSQL → file, DEST locked part-way: --json prints the counts and not_copied", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", await sourceFile(), url])).code, 0);
    const target = await emptyTarget();
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      FILE_PROTO,
      "importSession",
      afterWriting("s2"),
      holder,
      () => runCli(["--json", "copy", url, target], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.deepEqual([counts.copied, counts.not_copied], [1, 2]);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: Cannot copy s1: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; run the copy again to go on)\n`,
    );
  });
});

describe("copy --replace stopped by Ctrl-C", () => {
  test("says the same copy writes again what this run wrote", async () => {
    const source = await sourceFile();
    const target = await emptyTarget();
    assert.equal((await runCli(["copy", source, target])).code, 0);
    // Ctrl-C once the first session is written: the copy stops before the next.
    const io = interruptibleIo();
    const original = FILE_PROTO.importSession;
    FILE_PROTO.importSession = function (this: SessionDB, ...args) {
      const result = original.apply(this, args);
      io.interrupt();
      return result;
    };
    let code;
    try {
      code = await main(["copy", "--replace", source, target], io);
    } finally {
      FILE_PROTO.importSession = original;
    }
    assert.equal(code, 130, io.err);
    assert.equal(
      io.err,
      "hermes-state copy: interrupted by SIGINT: stopped after 1 session, each written whole or " +
        "not at all; the same copy --replace again goes on, after writing again the 1 session " +
        "this run wrote\n",
    );
  });
});
