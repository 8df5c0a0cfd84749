/**
 * The options of `searchMessages` and the check of its `sort`, shared by
 * every engine.
 *
 * @module
 */
import { quotedValue } from "../shown_value.ts";

/** The orders of `searchMessages` hits. */
export type SearchSort = "rank" | "newest" | "oldest";

const SORTS: readonly SearchSort[] = ["rank", "newest", "oldest"];

/** Options of `searchMessages`. */
export interface SearchOptions {
  /** Only these sources (an empty list matches nothing). */
  sourceFilter?: readonly string[] | null;
  /** Never these sources. */
  excludeSources?: readonly string[] | null;
  /** Only these roles (an empty list means any role). */
  roleFilter?: readonly string[] | null;
  /** Only messages of this session (not in Python). */
  sessionId?: string | null;
  /** Only messages at or after this time, in Unix seconds (not in Python). */
  since?: number | null;
  /** Only messages before this time, in Unix seconds (not in Python). */
  until?: number | null;
  /**
   * The most hits to return.
   * @default {20}
   */
  limit?: number;
  /**
   * Hits to skip, for paging.
   * @default {0}
   */
  offset?: number;
  /**
   * In a file from a newer Hermes, also find rewound messages (`active = 0`,
   * not compacted) and scaffolding it never shows (`display_kind =
   * 'hidden'`), which that Hermes leaves out of search.
   * @default {false}
   */
  includeInactive?: boolean;
  /**
   * The order of the hits, as in the newer Python Hermes: `"rank"` by
   * relevance (bm25); `"newest"` / `"oldest"` by timestamp, then relevance
   * (then id). Substring matches (short CJK queries) are always by time:
   * newest first for `"rank"` and `"newest"`, oldest first for `"oldest"`.
   * @default {"rank"}
   */
  sort?: SearchSort;
}

/**
 * `options.sort` checked, `"rank"` when absent or `null`, as every other
 * option reads `null` (shared by the engines).
 *
 * @param sort The option's value.
 * @returns The order.
 * @throws {RangeError} When it is not one of the orders.
 */
export function checkSort(sort: unknown): SearchSort {
  if (sort === undefined || sort === null) return "rank";
  if (typeof sort !== "string" || !(SORTS as readonly string[]).includes(sort)) {
    throw new RangeError(
      `Cannot search messages: sort must be "rank", "newest" or "oldest": current value is ${
        quotedValue(sort)
      }`,
    );
  }
  return sort as SearchSort;
}
