/**
 * `import` stopped by another process's lock, kept past
 * `HERMES_STATE_LOCK_TIMEOUT`, wherever it meets it: opening the database,
 * writing a line, linking the children read before a parent, linking at the
 * end. Each says what is in and what to run once the lock is free (with
 * `--replace`, that the same import writes again what it wrote); `--json`
 * prints the counts first, with `not_imported_from_line`. The lock is taken
 * at a set point of the run, never after a timed wait.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { interruptibleIo, runCli, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { tempDbPath, tempDir, waitedAnyTime } from "./_helpers.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { LockHolder } from "./_write_lock_holder.ts";

const ENV = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };

/** The id of an export line. */
function idOf(line: string): string {
  return JSON.parse(line).id;
}

/**
 * An export file of `ids` (`parents` maps a child to its parent), its lines
 * in the order of `ids`.
 */
async function exportFile(ids: readonly string[], parents: Record<string, string> = {}) {
  const source = tempDbPath();
  await withDb(source, (db) => {
    // Parents first: a child names one that is there.
    const children = (id: string) => id in parents ? 1 : 0;
    for (const id of [...ids].sort((a, b) => children(a) - children(b))) {
      db.createSession(id, "cli", { parentSessionId: parents[id] });
      db.appendMessage(id, { role: "user", content: `message of ${id}` });
    }
  });
  const run = await runCli(["--db", source, "export"]);
  assert.equal(run.code, 0, run.err);
  const file = `${tempDir()}/export.jsonl`;
  const lines = run.out.trimEnd().split("\n");
  lines.sort((a, b) => ids.indexOf(idOf(a)) - ids.indexOf(idOf(b)));
  writeFileSync(file, lines.join("\n") + "\n");
  return { file, lines };
}

/** An existing, empty target database. */
async function emptyTarget(): Promise<string> {
  const path = tempDbPath();
  await withDb(path, () => {});
  return path;
}

/** Each of `ids` in `path` with its parent (`null`: none), or left out when not there. */
async function parentsIn(
  path: string,
  ids: readonly string[] = ["s0", "s1", "s2", "p", "c"],
): Promise<Record<string, string | null>> {
  return await withDb(path, (db) => {
    const found = ids.map((id) => [id, db.getSession(id)] as const).filter(([, s]) => s);
    return Object.fromEntries(found.map(([id, s]) => [id, s!.parent_session_id ?? null]));
  });
}

/**
 * Runs `fn` while `SessionDB.prototype[method]` has `holder` take the lock
 * when `when(args)` says so, before (`restoreParentLinks`) or after
 * (`importSession`) the call itself.
 */
async function lockingAt<T>(
  method: "importSession" | "restoreParentLinks",
  when: (args: unknown[]) => boolean,
  holder: LockHolder,
  fn: () => Promise<T>,
): Promise<T> {
  const original = SessionDB.prototype[method] as (...args: unknown[]) => unknown;
  (SessionDB.prototype as unknown as Record<string, unknown>)[method] = function (
    this: SessionDB,
    ...args: unknown[]
  ) {
    if (method === "restoreParentLinks" && when(args)) holder.take();
    const result = original.apply(this, args);
    if (method === "importSession" && when(args)) holder.take();
    return result;
  };
  try {
    return await fn();
  } finally {
    (SessionDB.prototype as unknown as Record<string, unknown>)[method] = original;
    holder.release();
  }
}

/** After the record of `id` is imported. */
const afterImporting = (id: string) => (args: unknown[]) => (args[0] as { id: string }).id === id;
/** When there are links to make. */
const linking = (args: unknown[]) => (args[0] as unknown[]).length > 0;

describe("import stopped by a lock", () => {
  test("--json prints the counts and the first line not in before the error", async () => {
    const { file } = await exportFile(["s0", "s1", "s2"]);
    const target = await emptyTarget();
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      "importSession",
      afterImporting("s0"),
      holder,
      () => runCli(["--db", target, "--json", "import", file], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    assert.deepEqual(JSON.parse(run.out), {
      imported: 1,
      replaced: 0,
      skipped: 0,
      messages: 1,
      failed: 0,
      linked: 0,
      waiting: 0,
      dropped_columns: [],
      renamed: [],
      failures: [],
      stopped_at_line: null,
      not_imported_from_line: 2,
    });
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: Cannot import line 2: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; the same import again goes on)\n`,
    );
    assert.equal(Object.keys(await parentsIn(target)).length, 1);
  });

  test("a lock at opening: nothing was imported, the same import again (text and --json)", async () => {
    const { file } = await exportFile(["s0", "s1"]);
    const target = await emptyTarget();
    for (const json of [false, true]) {
      const holder = await LockHolder.on(target);
      holder.take();
      let run;
      try {
        const argv = ["--db", target, ...(json ? ["--json"] : []), "import", file];
        run = await runCli(argv, { env: ENV });
      } finally {
        holder.release();
      }
      assert.equal(run.code, 1, run.err);
      assert.equal(
        waitedAnyTime(run.err),
        `hermes-state: nothing was imported: database is locked by another process (waited 0 ` +
          `s): ${target} (once it is free, run the same import again)\n`,
      );
      if (!json) assert.equal(run.out, "");
      else {
        const counts = JSON.parse(run.out);
        assert.equal(counts.imported, 0);
        assert.equal(counts.not_imported_from_line, 1);
      }
    }
    assert.deepEqual(await parentsIn(target), {});
  });

  test("--replace: the hint says the same import writes again what this run wrote", async () => {
    const { file } = await exportFile(["s0", "s1", "s2"]);
    const target = await emptyTarget();
    assert.equal((await runCli(["--db", target, "import", file])).code, 0);
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      "importSession",
      afterImporting("s1"),
      holder,
      () => runCli(["--db", target, "--json", "import", "--replace", file], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.equal(counts.replaced, 2);
    assert.equal(counts.not_imported_from_line, 3);
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: Cannot import line 3: database is locked by another process (waited 0 s): ` +
        `${target} (every session before it is in, each whole; the same import --replace again ` +
        `goes on, after writing again the 2 sessions this run wrote)\n`,
    );
  });

  test("a lock at linking the children read before their parent: the same import links them", async () => {
    // The child before its parent, as an export lists them.
    const { file } = await exportFile(["c", "p"], { c: "p" });
    const target = await emptyTarget();
    const holder = await LockHolder.on(target);
    const run = await lockingAt(
      "restoreParentLinks",
      linking,
      holder,
      () => runCli(["--db", target, "--json", "import", file], { env: ENV }),
    );
    assert.equal(run.code, 1, run.err);
    const counts = JSON.parse(run.out);
    assert.deepEqual(
      [counts.imported, counts.linked, counts.waiting, counts.not_imported_from_line],
      [2, 0, 1, 3],
    );
    assert.equal(
      waitedAnyTime(run.err),
      `hermes-state: the session of line 2 is in, its children read before it not yet linked ` +
        `to it: database is locked by another process (waited 0 s): ${target} (every session ` +
        `up to it is in, each whole; once it is free, the same import again goes on, linking ` +
        `them)\n`,
    );
    assert.deepEqual(await parentsIn(target), { p: null, c: null });
    const again = await runCli(["--db", target, "import", file]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(await parentsIn(target), { p: null, c: "p" });
  });

  test("a lock at the last links: every line is in, the same import links them", async () => {
    // The child alone: its parent is not in the file.
    const { lines } = await exportFile(["p", "c"], { c: "p" });
    const file = `${tempDir()}/child.jsonl`;
    writeFileSync(file, lines.filter((line) => idOf(line) === "c").join("\n") + "\n");
    const target = await emptyTarget();
    for (const replace of [false, true]) {
      const holder = await LockHolder.on(target);
      const argv = ["--db", target, "--json", "import", ...(replace ? ["--replace"] : []), file];
      const run = await lockingAt(
        "restoreParentLinks",
        linking,
        holder,
        () => runCli(argv, { env: ENV }),
      );
      assert.equal(run.code, 1, run.err);
      const counts = JSON.parse(run.out);
      assert.deepEqual(
        [counts.imported + counts.replaced, counts.waiting, counts.not_imported_from_line],
        [1, 1, null],
      );
      assert.equal(
        waitedAnyTime(run.err),
        `hermes-state: every line was read (1 session written, 0 skipped already present, each ` +
          `whole), but 1 session naming a parent not in this file is not linked: database is ` +
          `locked by another process (waited 0 s): ${target}; once it is free, the same import ` +
          `again${
            replace ? " without --replace (which would write every session again)" : ""
          } links those whose parent is in by then\n`,
      );
    }
  });
});

describe("import --replace stopped by Ctrl-C", () => {
  test("says the same import writes again what this run wrote", async () => {
    const { file } = await exportFile(["s0", "s1", "s2"]);
    const target = await emptyTarget();
    assert.equal((await runCli(["--db", target, "import", file])).code, 0);
    // Ctrl-C as soon as the command listens: the first line is written, then it stops.
    const io = interruptibleIo();
    const listen = io.onInterrupt!;
    io.onInterrupt = (listener) => {
      const stop = listen(listener);
      listener("SIGINT");
      return stop;
    };
    assert.equal(await main(["--db", target, "import", "--replace", file], io), 130, io.err);
    assert.match(
      io.err,
      /interrupted by SIGINT: stopped after line 1: every session before it is in, each whole; the same import --replace again goes on, after writing again the 1 session this run wrote\n$/,
    );
  });
});
