// Searches on worker threads: the same hits as the store's own search, in parallel,
// seeing writes made after the pool started, and a clean stop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { startSearchPool } from "../../lib/web/search_pool.ts";
import { V11, v11Copy } from "../_cli_io.ts";

const QUERIES = [
  "docker",
  "记忆",
  "数据库迁移",
  "chat-send",
  '"unbalanced (',
  "🚀",
  "kubernetes OR helm",
];

test("startSearchPool() answers exactly what the store's searchMessages answers", async () => {
  const path = v11Copy();
  await using store = await openStore(path);
  const pool = await startSearchPool(path, { workers: 2 });
  try {
    const pooled = await Promise.all(QUERIES.map((q) => pool.search(q, { limit: 10 })));
    for (const [i, query] of QUERIES.entries()) {
      assert.deepEqual(pooled[i], await store.searchMessages(query, { limit: 10 }), query);
    }
    await assert.rejects(() => pool.search("x", { limit: -1 }), { name: "RangeError" });
  } finally {
    await pool.close();
  }
});

test("startSearchPool() workers see messages written after they started", async () => {
  const path = v11Copy();
  await using store = await openStore(path);
  const pool = await startSearchPool(path, { workers: 1 });
  try {
    assert.deepEqual(await pool.search("zanzibar"), []);
    await store.appendMessage(V11.live, { role: "user", content: "a trip to zanzibar" });
    assert.equal((await pool.search("zanzibar")).length, 1);
  } finally {
    await pool.close();
  }
});

test("createHandler() with a pool's search answers the search API as without one", async () => {
  const path = v11Copy();
  await using store = await openStore(path);
  const pool = await startSearchPool(path, { workers: 1 });
  try {
    const plain = createHandler(store);
    const pooled = createHandler(store, { search: (q, o) => pool.search(q, o) });
    for (const query of QUERIES) {
      const url = `http://127.0.0.1:8787/api/search?q=${encodeURIComponent(query)}`;
      const a = await (await plain(new Request(url))).json();
      const b = await (await pooled(new Request(url))).json();
      assert.deepEqual(b, a, query);
    }
  } finally {
    await pool.close();
  }
});

test("startSearchPool() fails with the reason when the file cannot be opened", async () => {
  // The worker tells the reason; it does not throw it (Deno printed it as uncaught as well).
  await assert.rejects(
    () => startSearchPool("/nonexistent/folder/state.db", { workers: 1 }),
    (error: Error) => error.name === "OpenError" && /no such file/.test(error.message),
  );
});
