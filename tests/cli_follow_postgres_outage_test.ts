/**
 * `show --follow` on a PostgreSQL store whose server goes away and comes
 * back (a restart): said once, looked for again at each look, and followed
 * on, as a file gone for a moment is; it ended the run with exit 1.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { openStore } from "../lib/open_store.ts";
import { interruptibleIo } from "./_cli_io.ts";
import { waitUntil } from "./_helpers.ts";
import { freshSchema, PG_SKIP } from "./store/_pg.ts";
import { type PgRelay, startPgRelay } from "./web/_pg_relay.ts";

describe("show --follow while the PostgreSQL server restarts", { skip: PG_SKIP }, () => {
  let relay: PgRelay | undefined;
  after(async () => {
    await relay?.close();
  });

  test("says it once, looks again, and prints what came after once the server is back", {
    timeout: 60_000,
  }, async () => {
    relay = await startPgRelay();
    const url = `${relay.url}?schema=${freshSchema()}`;
    {
      await using store = await openStore(url);
      await store.createSession("s1", "cli");
      await store.appendMessages("s1", [{ role: "user", content: "before the restart" }]);
    }
    const io = interruptibleIo();
    const run = main(["--db", url, "show", "s1", "--follow=0.05"], io);
    await waitUntil(() => io.out.includes("before the restart"), "the transcript");
    await relay.stop();
    await waitUntil(() => io.out.includes("looking again"), "the note that the server is away");
    await relay.start();
    {
      await using store = await openStore(url);
      await store.appendMessages("s1", [{ role: "assistant", content: "after the restart" }]);
    }
    await waitUntil(
      () => io.out.includes("after the restart") || !io.listening,
      "the message written after the restart",
    );
    assert.ok(io.listening, `the run ended: ${io.err}`);
    io.interrupt();
    assert.equal(await run, 0, io.err);
    assert.match(io.out, /the server can be read again/);
    assert.equal(io.out.match(/looking again/g)?.length, 1, "said once");
  });
});
