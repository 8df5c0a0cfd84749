/**
 * `import` into a PostgreSQL store whose server goes away part way: the
 * run stops at the line that could not be written, says how far it got,
 * and the same import again goes on. Each line after it was taken for a
 * bad line of the input ("connect ECONNREFUSED") until the twentieth, then
 * the run asked whether the input was an export at all, leaving a hole of
 * sessions it called failed.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { main } from "../lib/cli/main.ts";
import { openStore } from "../lib/open_store.ts";
import { recordingIo } from "./_cli_io.ts";
import { waitUntil } from "./_helpers.ts";
import { adminSql, freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { type PgRelay, startPgRelay } from "./web/_pg_relay.ts";

/** A session record of the export's shape. */
function line(id: string): string {
  return `${JSON.stringify({ id, source: "cli", started_at: 1_700_000_000, messages: [] })}\n`;
}

describe("import into PostgreSQL while the server goes away", { skip: PG_SKIP }, () => {
  let relay: PgRelay | undefined;
  after(async () => {
    await relay?.close();
  });

  test("stops at the line it could not write, says how far it got, and runs again to the end", {
    timeout: 60_000,
  }, async () => {
    relay = await startPgRelay();
    const schema = freshSchema();
    const url = `${relay.url}?schema=${schema}`;
    const io = recordingIo();
    const input = new PassThrough();
    io.stdin = () => input;
    const run = main(["--db", url, "import", "-"], io);
    input.write(line("s1"));
    const direct = await openStore(schemaUrl(schema), { readonly: false });
    try {
      await waitUntil(async () => (await direct.getSession("s1")) !== undefined, "line 1 in");
      await relay.stop();
      for (let i = 2; i <= 30; i++) input.write(line(`s${i}`));
      input.end();
      assert.equal(await run, 1);
      assert.match(
        io.err,
        /^hermes-state: Cannot import line 2: .+ \(1 session before it in; the same import again goes on\)\n$/,
      );
      await relay.start();
      const again = await main(
        ["--db", url, "import", "-"],
        recordingIo({ stdin: Array.from({ length: 30 }, (_, i) => line(`s${i + 1}`)).join("") }),
      );
      assert.equal(again, 0);
      assert.equal(await direct.sessionCount(), 30);
    } finally {
      await direct.close();
    }
  });

  test("into a store that takes no writes (a role that may only read) stops at the first line", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    {
      await using store = await openStore(schemaUrl(schema));
      await store.createSession("kept", "cli");
    }
    const role = `reader_${crypto.randomUUID().slice(0, 8)}`;
    await adminSql(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      await adminSql(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await adminSql(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      const asRole = new URL(schemaUrl(schema));
      asRole.username = role;
      asRole.password = "pw";
      const stdin = Array.from({ length: 30 }, (_, i) => line(`s${i + 1}`)).join("");
      const io = recordingIo({ stdin });
      // Before: 20 lines each called bad ("permission denied"), then "is this an export?".
      assert.equal(await main(["--db", asRole.href, "import", "-"], io), 1);
      assert.match(io.err, /^hermes-state: Cannot import line 1: PostgreSQL: permission denied/);
      assert.equal(io.err.split("\n").filter((l) => l !== "").length, 1, io.err);
    } finally {
      await adminSql(`DROP OWNED BY ${role}`);
      await adminSql(`DROP ROLE ${role}`);
    }
  });
});
