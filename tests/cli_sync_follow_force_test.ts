/**
 * `sync --force --follow`: `--force` makes a FILE its origin's file once.
 * A later file put in its place (Hermes reinstalled, its new file holding
 * none of the origin's sessions) is refused as it is without `--force`,
 * rather than shipped by the next pass, which deleted every session of the
 * origin from the server.
 */
import { describe, test } from "node:test";
import { renameSync } from "node:fs";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";
import { tempDbPath } from "./_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { delay } from "./reliability/_runtimes.ts";

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 50) {
    if (waited > 30_000) throw new Error("timed out");
    await delay(50);
  }
}

/** The sessions the store holds of `origin`, as `origins --json` counts them. */
async function sessionsOf(url: string, origin: string): Promise<number | undefined> {
  const run = await runCli(["--json", "--db", url, "origins"]);
  assert.equal(run.code, 0, run.err);
  const origins = JSON.parse(run.out) as { origin: string; sessions: number }[];
  return origins.find((o) => o.origin === origin)?.sessions;
}

describe("sync --force --follow", { skip: PG_SKIP }, () => {
  test("forces a FILE once: a new file put in its place later is refused", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const file = v11Copy();
    const io = interruptibleIo();
    const run = main(
      ["--json", "sync", file, "--to", url, "--origin", "web-1", "--force", "--follow=0.1"],
      io,
    );
    await until(() => io.out.includes('"origin":"web-1"'));
    assert.equal(await sessionsOf(url, "web-1"), 42);
    // A new Hermes file in the old one's place, moved there whole.
    const fresh = tempDbPath();
    {
      await using db = await SessionDB.open({ path: fresh });
      db.createSession("fresh", "cli");
      db.appendMessage("fresh", { role: "user", content: "a new install" });
    }
    renameSync(fresh, file);
    await until(() =>
      io.err.includes("holds none of the 42 sessions") || /"deleted":42/.test(io.out)
    );
    // Refused, it is looked at again at each pass until the run is stopped.
    if (io.listening) io.interrupt();
    assert.equal(await run, 1);
    assert.match(
      io.err,
      /holds none of the 42 sessions .*\(looked at again at each pass\)\n/,
    );
    assert.equal(await sessionsOf(url, "web-1"), 42);
  });
});
