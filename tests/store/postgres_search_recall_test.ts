/**
 * Recall on PostgreSQL: the shared cases of tests/_search_cases.ts (what a
 * user types after a conversation with an agent) find on this engine
 * exactly what they find on SQLite (tests/search_recall_test.ts).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { RECALL_QUERIES, writeRecallMessages } from "../_search_cases.ts";
import { openPgStore, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("searchMessages() recall on PostgreSQL", { skip: SKIP }, () => {
  let store: SessionStore;
  let labels: Map<number, string>;
  before(async () => {
    store = await openPgStore();
    labels = await writeRecallMessages(store);
  });
  after(async () => await store?.close());

  for (const [query, want] of RECALL_QUERIES) {
    test(`searchMessages(${JSON.stringify(query)}) finds ${want.join(", ")}`, async () => {
      for (const sort of ["rank", "newest", "oldest"] as const) {
        const hits = await store.searchMessages(query, { limit: 100, sort });
        assert.deepEqual(hits.map((h) => labels.get(h.id)).sort(), [...want].sort(), sort);
      }
    });
  }
});
