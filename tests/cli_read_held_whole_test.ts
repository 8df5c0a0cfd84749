/**
 * The read commands on a file another process (Python's sqlite3) holds
 * whole: held before the command opens it (a WAL file in `locking_mode =
 * EXCLUSIVE`, as a WAL recovery holds it; a rollback-journal file being
 * written), or taken part-way, between two of its reads (a rollback-journal
 * file: a WAL file cannot be taken while a reader has it open). Each waits
 * `HERMES_STATE_LOCK_TIMEOUT` and then says `database is locked by another
 * process (waited N s): PATH`; let go meanwhile, it prints what it prints
 * on a file no one holds. `copy` stops at its read of SRC with its "stopped
 * reading" line. The file is taken and let go at set points (a read of the
 * store), never after a timed wait. The driver's side of the wait runs on the three
 * runtimes in reliability/read_held_whole_test.ts; here each command's case
 * runs under one of Deno, Bun and Node (`caseSkip`).
 */
import { afterEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli, withDb } from "./_cli_io.ts";
import { tempDbPath, waitedAnyTime } from "./_helpers.ts";
import { type HeldAs, toRollbackJournal, WholeFileHolder } from "./_held_whole_child.ts";
import { StoreSlot } from "../lib/sqlite/store_slot.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { caseSkip } from "./reliability/_runtimes.ts";

/** Gives up at once (0.2 s): the lock line says "waited 0 s" (`waitedAnyTime`: or more, loaded). */
const GIVE_UP = { HERMES_STATE_LOCK_TIMEOUT: "0.2" };
/** A wait no test reaches: the holder lets go at the command's next try. */
const WAIT_LONG = { HERMES_STATE_LOCK_TIMEOUT: "120" };

/** The read commands, each as run on the file (`--db PATH` first). */
const COMMANDS: readonly (readonly string[])[] = [
  ["list"],
  ["show", "s1"],
  ["search", "hello"],
  ["export", "-"],
  ["stats"],
  ["usage"],
  ["info"],
  ["lineage", "s2"],
];

/** A state.db of sessions `s1` (two messages, a child `s2`) and `s3`; `journal`: in DELETE mode. */
async function stateDb(as: HeldAs): Promise<string> {
  const path = await buildDb((db) => {
    db.createSession("s1", "cli", { model: "m1" });
    db.appendMessage("s1", { role: "user", content: "hello held world" });
    db.appendMessage("s1", { role: "assistant", content: "an answer" });
    db.createSession("s2", "cli", { parentSessionId: "s1" });
    db.createSession("s3", "telegram");
  });
  if (as === "journal") await toRollbackJournal(path);
  return path;
}

/** The lock line of `path`, as the CLI prints it after a wait of 0.2 s. */
function lockLine(path: string): string {
  return `hermes-state: database is locked by another process (waited 0 s): ${path}\n`;
}

/**
 * Runs `fn` while every read of a store (its `StoreSlot.current()`) is counted, and
 * `onRead(n)` is called before read number `n` (1 for the first).
 */
async function onEachRead<T>(onRead: (n: number) => void, fn: () => Promise<T>): Promise<T> {
  const proto = StoreSlot.prototype as unknown as { current: (...a: unknown[]) => unknown };
  const original = proto.current;
  let reads = 0;
  proto.current = function (this: unknown, ...args: unknown[]) {
    onRead(++reads);
    return original.apply(this, args);
  };
  try {
    return await fn();
  } finally {
    proto.current = original;
  }
}

/** The `skip` of the next command's case (see the module's words). */
let cases = 0;
const nextCase = () => ({ skip: caseSkip(cases++) });

let holder: WholeFileHolder | undefined;
afterEach(async () => {
  await holder?.stop();
  holder = undefined;
});

for (const as of ["wal", "journal"] as const) {
  describe(`read commands on a ${as === "wal" ? "WAL" : "rollback-journal"} file held whole`, () => {
    for (const command of COMMANDS) {
      test(
        `${command[0]} waits HERMES_STATE_LOCK_TIMEOUT, then names the file`,
        nextCase(),
        async () => {
          const path = await stateDb(as);
          holder = await WholeFileHolder.start(path, as);
          holder.take();
          const run = await runCli(["--db", path, ...command], { env: GIVE_UP });
          assert.equal(waitedAnyTime(run.err), lockLine(path));
          assert.equal(run.code, 1);
          assert.equal(run.out, "");
        },
      );
    }
  });
}

// Taken after the open, at the command's last read of the store (`usage` and `info` make one,
// `search` eight), counted on a run on the file no one holds.
describe("read commands on a rollback-journal file taken part-way", () => {
  for (const command of COMMANDS) {
    const argv = (path: string) => ["--db", path, ...command];

    test(
      `${command[0]} taken at its last read waits, then names the file`,
      nextCase(),
      async () => {
        const path = await stateDb("journal");
        // How many reads the command makes on a file no one holds.
        let reads = 0;
        await onEachRead((n) => reads = n, () => runCli(argv(path)));
        holder = await WholeFileHolder.start(path, "journal");
        const run = await onEachRead(
          (n) => n === reads && holder!.take(),
          () => runCli(argv(path), { env: GIVE_UP }),
        );
        assert.equal(waitedAnyTime(run.err).endsWith(lockLine(path)), true, run.err);
        assert.equal(run.code, 1);
      },
    );

    test(
      `${
        command[0]
      } taken at its last read and let go at its next try prints what it prints unheld`,
      nextCase(),
      async () => {
        const path = await stateDb("journal");
        let reads = 0;
        const unheld = await onEachRead((n) => reads = n, () => runCli(argv(path)));
        assert.equal(unheld.code, 0, unheld.err);
        holder = await WholeFileHolder.start(path, "journal");
        const run = await onEachRead((n) => {
          if (n === reads) holder!.take();
          // The try after the one that met the held file: let go (rolled back) first.
          if (n === reads + 1) holder!.release();
        }, () => runCli(argv(path), { env: WAIT_LONG }));
        assert.equal(run.err, unheld.err);
        assert.equal(run.code, 0);
        assert.equal(run.out, unheld.out);
      },
    );
  }
});

describe("copy with SRC taken part-way", () => {
  test("stops at its read of SRC with the stopped-reading line", async () => {
    const source = await stateDb("journal");
    const target = tempDbPath();
    await withDb(target, () => {});
    holder = await WholeFileHolder.start(source, "journal");
    const proto = SessionDB.prototype as unknown as {
      getMeta: (this: SessionDB, ...a: unknown[]) => unknown;
    };
    const original = proto.getMeta;
    // Copy reads each session's goal from SRC once the session is written: taken there.
    proto.getMeta = function (this: SessionDB, ...args: unknown[]) {
      if (this.path === source) holder!.take();
      return original.apply(this, args);
    };
    let run;
    try {
      run = await runCli(["copy", source, target], { env: GIVE_UP });
    } finally {
      proto.getMeta = original;
    }
    assert.equal(
      waitedAnyTime(run.err),
      "hermes-state: copied part of the sessions (1 session written, 0 skipped already " +
        "present, each whole), then stopped reading: database is locked by another process " +
        `(waited 0 s): ${source} (run the copy again to go on)\n`,
    );
    assert.equal(run.code, 1);
    holder.release();
    const copied = await withDb(
      target,
      (db) => ["s1", "s2", "s3"].filter((id) => db.getSession(id) !== undefined),
    );
    assert.equal(copied.length, 1);
  });
});
