/**
 * The listing by last activity on PostgreSQL, which seeks a page first among
 * the sessions active since a recent time (`#byLastActive`), against the
 * SQLite engine, which reads every session's activity, on the same generated
 * data: compression chains (whose activity is their newest member's),
 * children of other kinds, sessions without messages, messages dated before
 * their session's start, ties, the "tool" source; pages near the top (found
 * among the recent sessions) and deep ones (the whole listing), with each
 * filter the listing takes.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { ListSessionsOptions } from "../../lib/core/listing_options.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { mulberry32 } from "../_random.ts";
import { openPgStore, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Sessions generated: enough that a page near the top is found among the recent ones. */
const SESSIONS = 400;

/** Import records: parents before their children, times on a coarse grid (ties). */
function generated(seed: number): Record<string, unknown>[] {
  const rnd = mulberry32(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rnd() * items.length)];
  const records: Record<string, unknown>[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const id = `s${String(i).padStart(4, "0")}`;
    const parent = i > 10 && rnd() < 0.3 ? records[Math.floor(rnd() * records.length)] : undefined;
    const parentEnd = parent?.ended_at as number | null | undefined;
    const start = parentEnd != null && rnd() < 0.8
      ? parentEnd + Math.floor(rnd() * 3) * 60
      : 1_700_000_000 + Math.floor(rnd() * 200) * 600;
    const count = rnd() < 0.25 ? 0 : 1 + Math.floor(rnd() * 6);
    const messages = Array.from({ length: count }, (_, k) => ({
      role: k % 2 === 0 ? "user" : "assistant",
      content: `message ${k} of ${id}`,
      // Mostly after the start, on a coarse grid; now and then dated before it.
      timestamp: start + (rnd() < 0.05 ? -3600 : Math.floor(rnd() * 40) * 300),
    }));
    const ends = rnd() < 0.6;
    const last = messages.reduce((m, x) => Math.max(m, x.timestamp), start);
    records.push({
      id,
      source: pick(["cli", "cli", "telegram", "discord", "tool"]),
      started_at: start,
      ended_at: ends ? last + 60 : null,
      end_reason: ends ? pick(["compression", "compression", "cli_close", "branched"]) : null,
      parent_session_id: parent?.id ?? null,
      messages,
    });
  }
  return records;
}

async function fill(store: SessionStore, records: readonly Record<string, unknown>[]) {
  for (const record of records) {
    const result = await store.importSession(record);
    assert.equal(result.deferredParent, null, `${record.id}: parents come first`);
  }
}

describe("listSessionsRich() by last activity on PostgreSQL", { skip: SKIP }, () => {
  const pairs: { pg: SessionStore; sqlite: SessionStore }[] = [];
  before(async () => {
    for (const seed of [11, 12, 13]) {
      const records = generated(seed);
      const pg = await openPgStore();
      const sqlite = await openStore(tempDbPath());
      await fill(pg, records);
      await fill(sqlite, records);
      pairs.push({ pg, sqlite });
    }
  });
  after(async () => {
    for (const { pg, sqlite } of pairs) {
      await pg.close();
      await sqlite.close();
    }
  });

  test("every page, with every filter, lists what the SQLite engine lists, in its order", {
    timeout: 120_000,
  }, async () => {
    const filters: ListSessionsOptions[] = [
      {},
      { excludeSources: ["tool"] },
      { includeChildren: true },
      { hasChildren: true },
      { source: "cli" },
      { startedAfter: 1_700_000_000 + 50 * 600, startedBefore: 1_700_000_000 + 150 * 600 },
      { projectCompressionTips: false },
    ];
    const pages = [[1, 0], [5, 0], [20, 0], [51, 0], [10, 30], [10, 200], [50, 1000], [0, 0]];
    let compared = 0;
    for (const { pg, sqlite } of pairs) {
      for (const filter of filters) {
        for (const [limit, offset] of pages) {
          const options = { ...filter, orderByLastActive: true, limit, offset };
          const want = await sqlite.listSessionsRich(options);
          const got = await pg.listSessionsRich(options);
          assert.deepEqual(
            got.map((row) => [row.id, row.last_active]),
            want.map((row) => [row.id, row.last_active]),
            JSON.stringify(options),
          );
          compared += want.length;
        }
      }
    }
    assert.ok(compared > 1000, `rows compared: ${compared}`);
  });
});
