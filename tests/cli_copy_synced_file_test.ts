/**
 * `copy` of a file that `sync` ships from this host into the same store is
 * refused, naming the origin: its sessions are there already as ORIGIN/ID,
 * and the copy stored each a second time under its bare id (titles renamed
 * `#2`), which no later pass removed. Another file copies as before.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, v11Copy } from "./_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

test("copy refuses a file synced into DEST from this host, and leaves DEST as it was", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  const synced = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
  assert.equal(synced.code, 0, synced.err);
  const count = async () => {
    const { sessions, messages } = JSON.parse((await runCli(["--db", url, "--json", "stats"])).out);
    return { sessions, messages };
  };
  const before = await count();
  const refused = await runCli(["copy", file, url]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.err,
    /Cannot copy .* it is the file of origin "web-1" there, .* --to postgres:.*\(hermes-state origins --remove web-1\)\n$/,
  );
  assert.deepEqual(await count(), before);
  // Another file of the same sessions is no origin's: it copies.
  const other = await runCli(["copy", v11Copy(), url]);
  assert.equal(other.code, 0, other.err);
  assert.ok((await count()).sessions > before.sessions);
});
