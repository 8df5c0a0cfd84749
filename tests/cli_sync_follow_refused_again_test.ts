/**
 * `sync --follow` and a FILE refused (it holds none of its origin's
 * sessions on the server): named once, and looked at again at each pass.
 * It was left out of every pass that followed, so that the origin's file
 * put back (Hermes re-created an empty file, then a backup was restored)
 * was not shipped until the run was started again.
 */
import { describe, test } from "node:test";
import { copyFileSync, renameSync, rmSync } from "node:fs";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { interruptibleIo, v11Copy } from "./_cli_io.ts";
import { tempDbPath } from "./_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { delay } from "./reliability/_runtimes.ts";

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 50) {
    if (waited > 30_000) throw new Error("timed out");
    await delay(50);
  }
}

/** Puts `from` at `to` whole, as a restore or a new install does (no stale WAL left beside it). */
function putInPlace(from: string, to: string): void {
  for (const suffix of ["-wal", "-shm"]) rmSync(to + suffix, { force: true });
  renameSync(from, to);
}

/** The passes a `--json` run printed so far. */
function passes(out: string): { file: string; created: number; deleted: number }[] {
  return out.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

describe("sync --follow and a refused FILE", { skip: PG_SKIP }, () => {
  test("ships the origin's file once it is back in place, refusing the other file once", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const file = v11Copy();
    const backup = tempDbPath();
    copyFileSync(file, backup);
    const io = interruptibleIo();
    const run = main(["--json", "sync", file, "--to", url, "--follow=0.1"], io);
    await until(() => passes(io.out).length >= 1);
    assert.equal(passes(io.out)[0].created, 42);
    // Hermes re-creates an empty file where its state.db was.
    const empty = tempDbPath();
    (await SessionDB.open({ path: empty })).close();
    putInPlace(empty, file);
    await until(() => io.err.includes("holds none of the 42 sessions"));
    // Passes go on refusing it, silently.
    await delay(500);
    assert.equal(io.err.match(/holds none of/g)?.length, 1);
    assert.match(io.err, /\(looked at again at each pass\)\n$/);
    // The backup restored: the next pass ships it, deleting nothing.
    const shipped = passes(io.out).length;
    putInPlace(backup, file);
    await until(() => passes(io.out).length > shipped);
    const after = passes(io.out).slice(shipped);
    assert.ok(after.every((pass) => pass.created === 0 && pass.deleted === 0));
    io.interrupt();
    assert.equal(await run, 0, io.err);
    assert.equal(io.err.match(/holds none of/g)?.length, 1);
  });
});
