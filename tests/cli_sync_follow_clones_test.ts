/**
 * `sync --follow` on a machine cloned from another's disk, refused as a
 * second file of the origin: named once, looked at again at each pass, the
 * run exits 1 when stopped while it is refused; a follower started with a
 * host name of its own ships the file as a new origin.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../lib/cli/main.ts";
import { addSessions } from "./_helpers.ts";
import { interruptibleIo, runCli } from "./_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { delay } from "./reliability/_runtimes.ts";

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 50) {
    if (waited > 30_000) throw new Error("timed out");
    await delay(50);
  }
}

/** A new folder of its own. */
function folder(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), "hermes-clones-")));
}

/** Puts a copy of `file` at `place` (a machine's file at the path both machines use). */
function putAt(file: string, place: string): string {
  for (const suffix of ["-wal", "-shm"]) rmSync(`${place}${suffix}`, { force: true });
  copyFileSync(file, place);
  return place;
}

describe("sync --follow on a cloned machine", { skip: PG_SKIP }, () => {
  test("refused once, looked at again at each pass, exit 1; --host NAME ships it", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const place = join(folder(), "state.db");
    const original = await addSessions(join(folder(), "original.db"), "s1", "s2");
    const once = async (file: string) => {
      const run = await runCli(["sync", putAt(file, place), "--to", url, "--host", "ubuntu"]);
      assert.equal(run.code, 0, run.err);
    };
    await once(original);
    const a = putAt(original, join(folder(), "a.db"));
    const b = putAt(original, join(folder(), "b.db"));
    await addSessions(a, "a1");
    await addSessions(b, "b1");
    await once(a);
    await once(b);
    // Machine a's follower: its file would bring a1 back and delete b1.
    await addSessions(a, "a2");
    putAt(a, place);
    const io = interruptibleIo();
    const run = main(["sync", place, "--to", url, "--host", "ubuntu", "--follow=0.1"], io);
    await until(() => io.err.includes("is shipped by two files"));
    await delay(500);
    assert.equal(io.err.match(/is shipped by two files/g)?.length, 1, io.err);
    assert.match(io.err, /--host NAME.*\(looked at again at each pass\)\n$/);
    assert.equal(io.out, "");
    io.interrupt();
    assert.equal(await run, 1, "stopped while refused");
    const own = await runCli(["--json", "sync", place, "--to", url, "--host", "vm-a"]);
    assert.equal(own.code, 0, own.err);
    const pass = JSON.parse(own.out);
    assert.deepEqual([pass.origin, pass.created, pass.deleted], ["vm-a", 4, 0]);
  });
});
