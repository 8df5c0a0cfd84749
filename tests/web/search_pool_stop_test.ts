// Stopping the search pool while a long search runs, or while a worker starts in place of one
// whose search was abandoned: each worker closes its connection before it is stopped, so a
// read-only server leaves the folder as it found it (no -wal, no -shm) and its process holds no
// descriptor on the file. A worker stopped mid-search after two seconds kept its connection open
// (on Deno), as did one stopped just after it opened the file (on Deno, Node and Bun), and the
// server's own close then left both files behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { openStore } from "../../lib/open_store.ts";
import { startSearchPool } from "../../lib/web/search_pool.ts";
import { v11Copy } from "../_cli_io.ts";
import { descriptorsOn } from "./_descriptors.ts";
import { dropTrigramTriggers } from "./_words_index_only.ts";

/** The sidecars beside `path` (`-wal`, `-shm`, `-journal`) that exist. */
function sidecars(path: string): string[] {
  return ["-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix));
}

/**
 * A copy of the v11 fixture with two tool results of "logline zebra " repeated: a search for
 * "zebra" cuts a snippet of each, a few seconds in all on this machine. Only the words index, which
 * that search reads, is filled: half the build's time (`_words_index_only.ts`).
 */
async function slowSearchDb(): Promise<string> {
  const path = v11Copy();
  await dropTrigramTriggers(path);
  await using store = await openStore(path);
  await store.createSession("huge_log", "cli");
  for (let i = 0; i < 2; i++) {
    await store.appendMessage("huge_log", {
      role: "tool",
      content: "logline zebra ".repeat(3_000_000),
    });
  }
  return path;
}

test("SearchPool.close() during a long search waits for it: no -wal, -shm or descriptor is left", {
  timeout: 300_000,
}, async () => {
  const path = await slowSearchDb();
  assert.deepEqual(sidecars(path), [], "the WAL file starts without sidecars");
  // As `serve` holds it: the server's read-only store, and the pool's workers beside it.
  const store = await openStore(path, { readonly: true });
  const pool = await startSearchPool(path, { workers: 1 });
  const started = performance.now();
  const search = pool.search("zebra", { limit: 21 }).then(
    (hits) => `answered ${hits.length}`,
    (error: Error) => error.message,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  await pool.close();
  const closedAfter = performance.now() - started;
  await store.close();
  // The search ran to its end on its worker (it answers, or is told the pool closed).
  assert.match(await search, /^(answered 2|The search pool was closed)$/);
  assert.deepEqual(
    sidecars(path),
    [],
    `sidecars left after the pool closed in ${Math.round(closedAfter)} ms`,
  );
  const open = descriptorsOn(path);
  if (open !== undefined) assert.equal(open, 0, "descriptors left on the file");
});

test(
  "SearchPool.close() just after a search is abandoned: the worker starting in its place closes its file too",
  {
    timeout: 300_000,
  },
  async () => {
    const path = v11Copy();
    assert.deepEqual(sidecars(path), [], "the WAL file starts without sidecars");
    const store = await openStore(path, { readonly: true });
    const pool = await startSearchPool(path, { workers: 1 });
    // A search abandoned while it runs retires its worker and starts another, which the close
    // finds still opening the file.
    const controller = new AbortController();
    const search = pool.search("docker", { limit: 21 }, controller.signal).catch(() => {});
    controller.abort(new Error("gone"));
    await search;
    await pool.close();
    await store.close();
    assert.deepEqual(sidecars(path), [], "sidecars left after the pool closed");
    const open = descriptorsOn(path);
    if (open !== undefined) assert.equal(open, 0, "descriptors left on the file");
  },
);
