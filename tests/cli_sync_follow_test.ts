/**
 * `sync --follow` as an operator runs it: a FILE missing at start is named
 * once and looked for at each pass while the others go on, the exit status
 * after Ctrl-C is how the files stood then, and a pass waiting for another
 * pass of its origin says so.
 */
import { describe, test } from "node:test";
import { copyFileSync } from "node:fs";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { connectPg } from "../lib/postgres/_client.ts";
import { syncLockName } from "../lib/postgres/sync_origin.ts";
import { interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { freshSchema, PG_SKIP, PG_URL, schemaUrl } from "./store/_pg.ts";
import { delay } from "./reliability/_runtimes.ts";

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 50) {
    if (waited > 30_000) throw new Error("timed out");
    await delay(50);
  }
}

describe("sync --follow, as an operator runs it", { skip: PG_SKIP }, () => {
  test(
    "a FILE missing at start: refused without --follow; with it, named once, then synced when it appears; Ctrl-C then exits 0",
    {
      timeout: 60_000,
    },
    async () => {
      const url = schemaUrl(freshSchema());
      const good = v11Copy();
      const missing = tempDbPath();
      const once = await runCli(["sync", good, missing, "--to", url]);
      assert.equal(once.code, 1);
      assert.match(once.err, /No database at /);

      const io = interruptibleIo();
      const run = main(["--json", "sync", good, missing, "--to", url, "--follow=0.1"], io);
      // Passes of the good file go on while the missing one fails.
      await until(() => io.out.split("\n").filter((l) => l !== "").length >= 3);
      assert.equal(io.err.split("\n").filter((line) => line.includes(missing)).length, 1, io.err);
      assert.ok(
        io.err.includes(
          `hermes-state: sync: No database at ${missing} (looked for again at each pass)\n`,
        ),
        io.err,
      );
      copyFileSync(v11Copy(), missing);
      await until(() => io.out.includes(JSON.stringify(missing)));
      io.interrupt();
      // An error long gone does not make the run fail.
      assert.equal(await run, 0);
    },
  );

  test("a one-shot pass waiting for its origin's pass elsewhere says so once", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const file = v11Copy();
    assert.equal((await runCli(["sync", file, "--to", url, "--origin", "web-1"])).code, 0);
    const other = await connectPg(PG_URL!, schema);
    try {
      const unlock = await other.lock(syncLockName("web-1"));
      const pass = runCli(["sync", file, "--to", url, "--origin", "web-1"]);
      await delay(1500);
      await unlock();
      const done = await pass;
      assert.equal(done.code, 0);
      assert.equal(
        done.err,
        "hermes-state: sync: waiting for the pass of origin web-1 running elsewhere…\n",
      );
    } finally {
      await other.close();
    }
  });

  test("sessions left out are named once while they stay the same, not at every pass", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const file = v11Copy();
    {
      using raw = await rawOpen(file);
      raw.exec(`INSERT INTO sessions (id, source, started_at) VALUES ('odd', 'cli', 'yesterday')`);
    }
    const io = interruptibleIo();
    const run = main(["--json", "sync", file, "--to", url, "--follow=0.1"], io);
    await until(() => io.out.split("\n").filter((l) => l !== "").length >= 4);
    io.interrupt();
    assert.equal(await run, 1, "left out when stopped: the exit says so");
    const named = io.err.split("\n").filter((line) => line.includes("not shipped"));
    assert.equal(named.length, 1, io.err);
    assert.match(named[0], /odd \(its started_at holds "yesterday"/);
  });
});
