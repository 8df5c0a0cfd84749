/**
 * What the trigram index may lack, found by id range, only where a search
 * needs it: the messages whose indexed text an older SQLite cut at a
 * U+0000, and whether any message is missing from it altogether.
 *
 * SQLite 3.40 (Python's, which wrote the fixtures) stopped indexing a text
 * at its first U+0000, so in a file Python wrote, the tool name and tool
 * calls after a U+0000 in the content (or in the tool name) may be missing
 * from the full-text index. No index names such rows; reading a message is
 * the only test. A search that walks its candidates newest first needs them
 * only inside the id window it walks, so the connection scans just the id
 * ranges asked for and remembers which ranges it has scanned: messages are
 * appended with ever larger ids (`AUTOINCREMENT`) and deleted, never updated
 * in place, so a range once scanned stays known. (A row written later at a
 * reused id, by an import that keeps ids or a `--replace`, is written by
 * this library's SQLite, which indexes past a U+0000: it needs no scan.)
 *
 * The same windows are checked for completeness: the trigram index must
 * hold a row for every message of the window (a table recreated without a
 * backfill does not). Counting both in an id range costs what the range
 * holds, or for a range of most of the file what lies outside it, not the
 * file; a complete range is remembered while the schema
 * cookie stays the same (the triggers keep the index in step, and anything
 * that sets them aside or recreates the table moves the cookie).
 *
 * @module
 */
import type { Store } from "../store.ts";

/**
 * Messages in an id range whose content or tool name holds U+0000 and that
 * have a tool name or tool calls (LIKE, too, stops at U+0000, so only text
 * after the content can be missing from the index). Searching the bytes is
 * the quickest test SQLite offers.
 */
const NUL_ROWS_SQL = `SELECT id FROM messages WHERE id >= ? AND id <= ?
  AND (tool_name IS NOT NULL OR tool_calls IS NOT NULL)
  AND (instr(CAST(content AS BLOB), x'00') > 0 OR instr(CAST(tool_name AS BLOB), x'00') > 0)`;

/**
 * Whether the trigram index has as many rows as there are messages in an
 * id range: the messages counted by a walk of their rows in the range.
 */
const COMPLETE_SQL = `SELECT
  (SELECT count(*) FROM messages WHERE id >= ?1 AND id <= ?2) =
  (SELECT count(*) FROM messages_fts_trigram_docsize WHERE id >= ?1 AND id <= ?2) AS complete`;

/**
 * The same for a range that holds most of the ids: every message (which
 * SQLite counts in the table's smallest b-tree, an index, without reading
 * a row) less those outside the range, so the rows walked are the fewer
 * side's. The whole file's range, which a walk that finds nothing reaches,
 * walks none: at 1,000,000 messages 12 ms instead of 165–230.
 */
const COMPLETE_MOST_SQL = `SELECT
  (SELECT count(*) FROM messages) - (SELECT count(*) FROM messages WHERE id < ?1) -
    (SELECT count(*) FROM messages WHERE id > ?2) =
  (SELECT count(*) FROM messages_fts_trigram_docsize WHERE id >= ?1 AND id <= ?2) AS complete`;

/** The first and last message ids (one seek each; `min` and `max` in one SELECT would scan). */
const ENDS_SQL = `SELECT (SELECT min(id) FROM messages) AS first,
  (SELECT max(id) FROM messages) AS last`;

/**
 * The statement that tells whether the range `from` to `to` is complete:
 * {@linkcode COMPLETE_MOST_SQL} when it spans more than half of the ids
 * messages have, else {@linkcode COMPLETE_SQL}. Both give the same answer.
 *
 * @param store The open store.
 * @param from The first id.
 * @param to The last id.
 * @returns The SQL; its parameters are `from` and `to`.
 */
function completeSql(store: Store, from: number, to: number): string {
  const ends = store.statement(ENDS_SQL).get();
  if (ends?.first == null || ends.last == null) return COMPLETE_SQL;
  const [first, last] = [Number(ends.first), Number(ends.last)];
  const inside = Math.min(to, last) - Math.max(from, first);
  return 2 * inside > last - first ? COMPLETE_MOST_SQL : COMPLETE_SQL;
}

const COOKIE_SQL = "PRAGMA schema_version";

/** An inclusive id range. */
export type IdRange = readonly [from: number, to: number];

/** Disjoint inclusive id ranges, in id order, none adjacent to the next. */
class IdRanges {
  #ranges: IdRange[] = [];

  /** The ranges. */
  get ranges(): readonly IdRange[] {
    return this.#ranges;
  }

  /** The parts of `from..to` not covered. */
  gaps(from: number, to: number): IdRange[] {
    const gaps: IdRange[] = [];
    let next = from;
    for (const [lo, hi] of this.#ranges) {
      if (hi < next) continue;
      if (lo > to) break;
      if (lo > next) gaps.push([next, lo - 1]);
      next = hi + 1;
      if (next > to) break;
    }
    if (next <= to) gaps.push([next, to]);
    return gaps;
  }

  /** Covers `from..to`, merging it with the ranges it touches. */
  add(from: number, to: number): void {
    let lo = from, hi = to;
    const kept: IdRange[] = [];
    for (const range of this.#ranges) {
      if (range[1] < lo - 1 || range[0] > hi + 1) {
        kept.push(range);
      } else {
        lo = Math.min(lo, range[0]);
        hi = Math.max(hi, range[1]);
      }
    }
    kept.push([lo, hi]);
    this.#ranges = kept.sort((a, b) => a[0] - b[0]);
  }

  /** Forgets every range. */
  clear(): void {
    this.#ranges = [];
  }
}

/** One connection's knowledge of what its trigram index lacks, by id range (owned by the store). */
export class TrigramGaps {
  /** The ranges scanned for U+0000. */
  readonly #scanned = new IdRanges();
  /** The ids found in them. */
  readonly #ids = new Set<number>();
  /** The ranges found complete, under the schema cookie `#cookie`. */
  readonly #complete = new IdRanges();
  #cookie: number | undefined;

  /** The id ranges scanned for U+0000 so far, in id order (merged where they touch). */
  get scanned(): readonly IdRange[] {
    return this.#scanned.ranges;
  }

  /** The id ranges found complete so far (under the current schema cookie). */
  get checked(): readonly IdRange[] {
    return this.#complete.ranges;
  }

  /**
   * Whether the trigram index has a row for every message from `from` to
   * `to` (inclusive), counting only the parts not found complete before.
   * Inside a write transaction nothing is remembered.
   *
   * @param store The open store.
   * @param from The first id.
   * @param to The last id.
   * @returns `false` when a message of the range may be missing from the index.
   * @throws {SqliteError} On a storage failure.
   */
  complete(store: Store, from: number, to: number): boolean {
    if (from > to) return true;
    const cookie = Number(store.statement(COOKIE_SQL).get()?.schema_version);
    if (cookie !== this.#cookie) {
      this.#complete.clear();
      this.#cookie = cookie;
    }
    const remember = !store.writing;
    for (const [lo, hi] of this.#complete.gaps(from, to)) {
      if (store.statement(completeSql(store, lo, hi)).get(lo, hi)?.complete !== 1) return false;
      if (remember) this.#complete.add(lo, hi);
    }
    return true;
  }

  /**
   * The ids of such messages from `from` to `to` (inclusive; `to` at most
   * the last id, `lastMessageId` of `message_ids.ts`), scanning the parts
   * of the range not scanned before. Call it inside the search's read transaction.
   * Inside a write transaction the scan is not remembered (a rollback may
   * free ids for reuse).
   *
   * @param store The open store.
   * @param from The first id.
   * @param to The last id.
   * @returns The ids, unordered.
   * @throws {SqliteError} On a storage failure.
   */
  nulRows(store: Store, from: number, to: number): number[] {
    if (from > to) return [];
    const remember = !store.writing;
    const found: number[] = [];
    for (const id of this.#ids) if (id >= from && id <= to) found.push(id);
    for (const [lo, hi] of this.#scanned.gaps(from, to)) {
      for (const row of store.statement(NUL_ROWS_SQL).all(lo, hi)) {
        const id = Number(row.id);
        found.push(id);
        if (remember) this.#ids.add(id);
      }
      if (remember) this.#scanned.add(lo, hi);
    }
    return found;
  }
}

const NUL_ROWS = Symbol("U+0000 rows");

/**
 * The connection's {@linkcode TrigramGaps} (owned by the store).
 *
 * @param store The open store.
 * @returns Its U+0000 rows.
 */
export function trigramGapsOf(store: Store): TrigramGaps {
  return store.derived(NUL_ROWS, () => new TrigramGaps());
}
