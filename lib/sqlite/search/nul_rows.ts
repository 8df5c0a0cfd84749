/**
 * The messages whose indexed text an older SQLite may have cut at a U+0000,
 * found by id range, only where a search needs them.
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

const LAST_ID_SQL = "SELECT coalesce(max(id), 0) AS id FROM messages";

/** An inclusive id range. */
export type IdRange = readonly [from: number, to: number];

/** One connection's knowledge of its U+0000 messages (owned by the store). */
export class NulRows {
  /** The ranges scanned, disjoint, in id order, none adjacent to the next. */
  #scanned: IdRange[] = [];
  /** The ids found in them. */
  readonly #ids = new Set<number>();

  /** The id ranges scanned so far, in id order (merged where they touch). */
  get scanned(): readonly IdRange[] {
    return this.#scanned;
  }

  /**
   * The ids of such messages from `from` to `to` (inclusive; `to` at most
   * the last id, which {@linkcode lastId} gives), scanning the parts of the
   * range not scanned before. Call it inside the search's read transaction.
   * Inside a write transaction the scan is not remembered (a rollback may
   * free ids for reuse).
   *
   * @param store The open store.
   * @param from The first id.
   * @param to The last id.
   * @returns The ids, unordered.
   * @throws {SqliteError} On a storage failure.
   */
  within(store: Store, from: number, to: number): number[] {
    if (from > to) return [];
    const remember = !store.writing;
    const found: number[] = [];
    for (const id of this.#ids) if (id >= from && id <= to) found.push(id);
    for (const [lo, hi] of this.#gaps(from, to)) {
      for (const row of store.statement(NUL_ROWS_SQL).all(lo, hi)) {
        const id = Number(row.id);
        found.push(id);
        if (remember) this.#ids.add(id);
      }
      if (remember) this.#add(lo, hi);
    }
    return found;
  }

  /** The parts of `from..to` not scanned yet. */
  #gaps(from: number, to: number): IdRange[] {
    const gaps: IdRange[] = [];
    let next = from;
    for (const [lo, hi] of this.#scanned) {
      if (hi < next) continue;
      if (lo > to) break;
      if (lo > next) gaps.push([next, lo - 1]);
      next = hi + 1;
      if (next > to) break;
    }
    if (next <= to) gaps.push([next, to]);
    return gaps;
  }

  /** Records `from..to` as scanned, merging it with the ranges it touches. */
  #add(from: number, to: number): void {
    let lo = from, hi = to;
    const kept: IdRange[] = [];
    for (const range of this.#scanned) {
      if (range[1] < lo - 1 || range[0] > hi + 1) {
        kept.push(range);
      } else {
        lo = Math.min(lo, range[0]);
        hi = Math.max(hi, range[1]);
      }
    }
    kept.push([lo, hi]);
    this.#scanned = kept.sort((a, b) => a[0] - b[0]);
  }
}

/**
 * The last message id the connection sees (0 when there is none).
 *
 * @param store The open store.
 * @returns The id.
 * @throws {SqliteError} On a storage failure.
 */
export function lastId(store: Store): number {
  return Number(store.statement(LAST_ID_SQL).get()?.id ?? 0);
}

const NUL_ROWS = Symbol("U+0000 rows");

/**
 * The connection's {@linkcode NulRows} (owned by the store).
 *
 * @param store The open store.
 * @returns Its U+0000 rows.
 */
export function nulRowsOf(store: Store): NulRows {
  return store.derived(NUL_ROWS, () => new NulRows());
}
