/**
 * Searching a file written by an older Hermes as it is: a v1–v9 file has no
 * trigram index (and a v1 file may have no full-text index at all). A read
 * never creates one, so a plan that needs a missing index is answered by
 * substring matching over the same words, read with the same operators. So is a plan whose index
 * misses messages: marked stale after damage (`fts_stale:<table>`, see
 * `fts_stale.ts`), or still being filled after the v11 step of an old file
 * (`fts_backfill:<table>`, see `schema/fts_backfill.ts`), or laid out by a newer
 * Hermes to leave some out (its trigram table holds no tool rows: see
 * `schema/fts_layout.ts`).
 *
 * @module
 */
import type { Store } from "../store.ts";
import { SqliteError } from "../driver/sqlite_error.ts";
import { FTS_STALE_PREFIX } from "../fts_stale.ts";
import { FTS_BACKFILL_PREFIX } from "../schema/fts_backfill.ts";
import type { FtsTable } from "../schema/schema_sql.ts";
import { leavesMessagesOut } from "../schema/fts_layout.ts";
import { planSearch, type SearchIndex, type SearchPlan } from "../../core/search/plan.ts";

/** The FTS5 table of each index a plan names. */
export const FTS_TABLE_OF: Readonly<Record<SearchIndex, FtsTable>> = {
  words: "messages_fts",
  trigram: "messages_fts_trigram",
};

/**
 * The substring plan for `query`: its words and operators read as on every
 * other path (every word must be present unless OR joins them; NOT leaves
 * out what follows), matched as substrings.
 *
 * @param query What the user typed.
 * @returns A substring plan, or `{ kind: "nothing" }` when no word is left.
 */
export function substringPlan(query: string): SearchPlan {
  return planSearch(query, { fts: false, trigram: false });
}

/** The keys that mark a full-text table as missing messages. */
const UNINDEXED_SQL = "SELECT 1 AS one FROM state_meta WHERE key IN (?, ?)";

/** False when `table` is marked stale or still being filled (two primary-key lookups). */
function fullyIndexed(store: Store, table: FtsTable): boolean {
  try {
    const row = store.statement(UNINDEXED_SQL).get(
      `${FTS_STALE_PREFIX}${table}`,
      `${FTS_BACKFILL_PREFIX}${table}`,
    );
    return row === undefined;
  } catch (error) {
    // An old file read as it is may have no state_meta: nothing is marked.
    if (error instanceof SqliteError && /no such table/.test(error.message)) return true;
    throw error;
  }
}

/**
 * `plan`, or a substring plan when the full-text table it needs is not in
 * this file, or misses messages (marked, or by the layout of a newer Hermes).
 *
 * @param store The open store.
 * @param plan The plan of `query`.
 * @param query What the user typed.
 * @returns A plan this file can answer.
 */
export function withIndexesPresent(store: Store, plan: SearchPlan, query: string): SearchPlan {
  if (plan.kind !== "ranked") return plan;
  const table = FTS_TABLE_OF[plan.index];
  if (store.hasTable(table) && fullyIndexed(store, table) && !leavesMessagesOut(store.db, table)) {
    return plan;
  }
  return substringPlan(query);
}
