/**
 * With two hosts holding the same session id, `search --origin web-2 --session ID` (the id as that host's
 * Hermes shows it) was refused as ambiguous, listing `web-1/ID` too, though
 * `--origin` already says which host. The origin given now names its own
 * session first; without it the id stays ambiguous, as documented.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, v11Copy } from "./_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

const HOST_ID = "20260425_090019_d38f1d";

test("search --origin NAME --session takes that host's own id", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  for (const origin of ["web-1", "web-2"]) {
    const synced = await runCli(["sync", v11Copy(), "--to", url, "--origin", origin]);
    assert.equal(synced.code, 0, synced.err);
  }
  const narrowed = await runCli([
    "--db",
    url,
    "search",
    "docker",
    "--origin",
    "web-2",
    "--session",
    HOST_ID,
    "--json",
  ]);
  assert.equal(narrowed.code, 0, narrowed.err);
  const hits = JSON.parse(narrowed.out) as { session_id: string }[];
  assert.ok(hits.length > 0);
  assert.deepEqual([...new Set(hits.map((hit) => hit.session_id))], [`web-2/${HOST_ID}`]);
  const both = await runCli(["--db", url, "search", "docker", "--session", HOST_ID]);
  assert.equal(both.code, 1);
  assert.match(both.err, /is ambiguous: matches 2 sessions/);
});
