/**
 * Two reads of one WAL file open at once in one process leave the folder as
 * they found it: the first read (a read-write connection that never writes)
 * makes the `-wal` and `-shm`; the second, were it SQLite's read-only mode
 * and closed last, could never remove them. Whatever order they close in,
 * and through each way in (`openConnection`, `openStore`, a `SessionDB`
 * that opens its file again when it was written), the last close removes
 * what the first made; a `-wal` that holds a writer's commits, or that
 * another process left, is never folded into the file nor deleted.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { openConnection } from "../lib/sqlite/open.ts";
import { openStore } from "../lib/open_store.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, runPython } from "./_helpers.ts";
import { liveWalOf } from "./health/_damaged_files.ts";

const SESSION = "20251221_090000_9738df";

/** The folder's names, sorted, with the sha256 of each but the `-shm` (SQLite's own index). */
function folderOf(path: string): Record<string, string> {
  const dir = join(path, "..");
  return Object.fromEntries(
    readdirSync(dir).sort().map((name) => [
      name,
      name.endsWith("-shm")
        ? "present"
        : createHash("sha256").update(readFileSync(join(dir, name))).digest("hex"),
    ]),
  );
}

/** The names in the folder of `path`, sorted. */
function namesBeside(path: string): string[] {
  return readdirSync(join(path, "..")).sort();
}

/** Opens two read connections at once, runs `between`, and closes them in `order`. */
async function twoReads(
  path: string,
  order: "first closed first" | "second closed first",
  between: () => void = () => {},
): Promise<string[]> {
  const first = await openConnection({ path, readonly: true });
  first.db.prepare("SELECT count(*) AS n FROM sessions").get();
  between();
  const second = await openConnection({ path, readonly: true });
  second.db.prepare("SELECT count(*) AS n FROM messages").get();
  const accesses = [first.access, second.access];
  if (order === "first closed first") {
    first.db.close();
    second.db.close();
  } else {
    second.db.close();
    first.db.close();
  }
  return accesses;
}

describe("two reads of a WAL file without sidecars, open at once", () => {
  for (const order of ["first closed first", "second closed first"] as const) {
    test(`leave only the file, unchanged (${order})`, async () => {
      const path = copyFixture("hermes-v11.db");
      const before = folderOf(path);
      const accesses = await twoReads(path, order, () => {
        assert.deepEqual(namesBeside(path), ["state.db", "state.db-shm", "state.db-wal"]);
      });
      assert.deepEqual(accesses, ["shared", "shared"]);
      // Before the fix the second read was SQLite's read-only mode: closed last, it left both.
      assert.deepEqual(folderOf(path), before);
    });

    test(`never fold a writer's commits into the file, nor delete its -wal (${order})`, async () => {
      const path = copyFixture("hermes-v11.db");
      let whileOpen: Record<string, string> = {};
      await twoReads(path, order, () => {
        // A writer that starts after the first read and dies with its commit in the -wal.
        liveWalOf(path, `UPDATE sessions SET title = 'only in the wal' WHERE id = '${SESSION}'`);
        whileOpen = folderOf(path);
      });
      assert.deepEqual(folderOf(path), whileOpen);
    });
  }

  test("a -wal and -shm another process left before the first read are left there", async () => {
    const path = copyFixture("hermes-v11.db");
    // A reader that dies without closing leaves an empty -wal and its -shm.
    runPython(
      [
        "import sqlite3, sys, os",
        "c = sqlite3.connect(sys.argv[1])",
        "c.execute('SELECT count(*) FROM sessions').fetchone()",
        "os._exit(0)",
      ],
      path,
    );
    const before = folderOf(path);
    assert.deepEqual(Object.keys(before), ["state.db", "state.db-shm", "state.db-wal"]);
    for (const order of ["first closed first", "second closed first"] as const) {
      assert.deepEqual(await twoReads(path, order), ["readonly", "readonly"]);
      assert.deepEqual(folderOf(path), before, order);
    }
  });
});

describe("the library's read-only stores", () => {
  test("two read-only openStore of one file, closed in the order opened, leave only the file", async () => {
    const path = copyFixture("hermes-v11.db");
    const before = folderOf(path);
    const first = await openStore(path, { readonly: true });
    const second = await openStore(path, { readonly: true });
    assert.ok((await second.getSession(SESSION)) !== undefined);
    await first.close();
    await second.close();
    assert.deepEqual(folderOf(path), before);
  });

  test("a read-only SessionDB that opened its file again after it was touched leaves only the file", async () => {
    const path = copyFixture("hermes-v11.db");
    const db = await SessionDB.open({ path, readonly: true });
    const count = db.messageCount();
    // A tool that restored the file's time (a backup put back in place): the store opens
    // the file again beside the -wal its first connection made, and closes that one after.
    const later = new Date(Date.now() + 60_000);
    utimesSync(path, later, later);
    const before = folderOf(path);
    delete before["state.db-shm"];
    delete before["state.db-wal"];
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(db.messageCount(), count);
    db.close();
    assert.deepEqual(folderOf(path), before);
  });
});
