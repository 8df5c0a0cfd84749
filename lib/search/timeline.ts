/**
 * What one connection knows about where message timestamps lie along the
 * id axis, so that a search sorted by time can walk the full-text index in
 * id order and stop after a page, and still give exactly the answer of the
 * full sort.
 *
 * Ids are cut into blocks of 1,024; for each block the smallest and largest
 * timestamp of its messages is kept. From them come two bounds: the latest
 * timestamp of any message below an id, and the earliest of any message
 * above one. A walk downwards from the newest id may stop as soon as the
 * page it holds is strictly newer than every message below it (and
 * symmetrically for the oldest). Nothing assumes that timestamps grow with
 * ids: where they do (the usual file), the walk stops after a page; where
 * they do not (imports, backdated rows), the bounds are wide and the walk
 * goes on further, or the caller falls back to the full sort.
 *
 * The blocks are read once per connection from the session index (which
 * holds every message's id and timestamp and is a fraction of the table),
 * then kept current: when this connection or another one has written since
 * the last look, only messages above the last id seen are read. Deleted
 * messages leave their block's bounds as they were, which stay true bounds.
 * Two assumptions, both true of the Hermes file: message ids only grow
 * (`AUTOINCREMENT`; checked), and a message's timestamp is never updated in
 * place (Python and this library delete and re-insert instead).
 *
 * @module
 */
import type { Store } from "../store.ts";
import { SqliteError } from "../driver/sqlite_error.ts";

/** log2 of the ids per block. */
const BLOCK_BITS = 10;
/** Ids per block. */
const BLOCK = 2 ** BLOCK_BITS;

/** The block of an id (ids may pass 2^31, so no `>>`). */
function blockOf(id: number): number {
  return Math.floor(id / BLOCK);
}

/** Changes since the last look: this connection's and everyone else's. */
const VERSION_SQL =
  "SELECT total_changes() AS mine, (SELECT data_version FROM pragma_data_version) AS theirs";

const SCHEMA_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'";

/** Every block's bounds, from the (smaller) session index, which holds id and timestamp. */
const FIRST_BLOCKS_SQL = `SELECT id >> ${BLOCK_BITS} AS block, min(timestamp) AS lo,
  max(timestamp) AS hi, max(id) AS last
FROM messages INDEXED BY idx_messages_session GROUP BY block`;

/** The bounds of the blocks of messages above an id (a range of the table). */
const NEW_BLOCKS_SQL = `SELECT id >> ${BLOCK_BITS} AS block, min(timestamp) AS lo,
  max(timestamp) AS hi, max(id) AS last
FROM messages WHERE id > ? GROUP BY block`;

/** The latest timestamp in an id range `[from, to)` (a short range of the table). */
const LATEST_IN_SQL = "SELECT max(timestamp) AS t FROM messages WHERE id >= ? AND id < ?";

/** The earliest timestamp in an id range `(from, to]`. */
const EARLIEST_IN_SQL = "SELECT min(timestamp) AS t FROM messages WHERE id > ? AND id <= ?";

/** The per-connection state; see the module documentation. */
export class MessageTimeline {
  #version = "";
  /** Every message up to this id has been looked at. */
  #seen = 0;
  /** False when ids may be reused (no AUTOINCREMENT): no bound can be trusted. */
  #usable = true;
  readonly #lo: number[] = [];
  readonly #hi: number[] = [];
  /** `#below[b]`: the latest timestamp in blocks 0…b; `undefined` until needed. */
  #below: number[] | undefined;
  /** `#above[b]`: the earliest timestamp in blocks b…last; `undefined` until needed. */
  #above: number[] | undefined;

  #asked = 0;

  /**
   * Whether a caller that can do without the bounds should use them: once
   * they are read (or on the second time of asking, a sign of a connection
   * that lives on). A one-shot search then pays no read of the index.
   *
   * @returns `true` when the bounds are, or are now worth being, read.
   */
  worthReading(): boolean {
    return this.#seen > 0 || ++this.#asked >= 2;
  }

  /**
   * Brings the bounds up to date with the file as this connection now sees
   * it (call it inside the read transaction that the search runs in).
   *
   * @param store The open store.
   * @returns `false` when no bound can be trusted (ids may be reused).
   * @throws {SqliteError} On a storage failure.
   */
  refresh(store: Store): boolean {
    const now = store.statement(VERSION_SQL).get();
    const version = `${now?.mine}/${now?.theirs}`;
    if (version === this.#version) return this.#usable;
    const sql = String(store.statement(SCHEMA_SQL).get()?.sql ?? "");
    this.#usable = /\bAUTOINCREMENT\b/i.test(sql);
    if (this.#usable) this.#read(store);
    this.#version = version;
    return this.#usable;
  }

  #read(store: Store): void {
    let rows;
    if (this.#seen === 0) {
      try {
        rows = store.statement(FIRST_BLOCKS_SQL).all();
      } catch (error) {
        // A file without the session index (read-only, never migrated).
        if (!(error instanceof SqliteError) || !/no such index/.test(error.message)) throw error;
        rows = store.statement(NEW_BLOCKS_SQL).all(0);
      }
    } else {
      rows = store.statement(NEW_BLOCKS_SQL).all(this.#seen);
    }
    if (rows.length === 0) return;
    for (const row of rows) {
      const block = Number(row.block);
      const lo = Number(row.lo);
      const hi = Number(row.hi);
      this.#lo[block] = this.#lo[block] === undefined ? lo : Math.min(this.#lo[block], lo);
      this.#hi[block] = this.#hi[block] === undefined ? hi : Math.max(this.#hi[block], hi);
      this.#seen = Math.max(this.#seen, Number(row.last));
    }
    this.#below = undefined;
    this.#above = undefined;
  }

  /**
   * The latest timestamp of any message whose id is below `id` (or more:
   * it is a bound), `-Infinity` when there is none: the blocks wholly
   * below, and the rows of `id`'s own block read from the table.
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  latestBelow(store: Store, id: number): number {
    if (id <= 1) return -Infinity;
    const block = blockOf(id - 1);
    const own = store.statement(LATEST_IN_SQL).get(block * BLOCK, id)?.t;
    const rest = this.#latestInBlocks(block - 1);
    return own === null || own === undefined ? rest : Math.max(rest, Number(own));
  }

  /** The latest timestamp in blocks 0…`block`. */
  #latestInBlocks(block: number): number {
    if (block < 0) return -Infinity;
    if (this.#below === undefined) {
      const below: number[] = [];
      let max = -Infinity;
      for (let b = 0; b < this.#hi.length; b++) {
        if (this.#hi[b] !== undefined && this.#hi[b] > max) max = this.#hi[b];
        below[b] = max;
      }
      this.#below = below;
    }
    return this.#below.length === 0
      ? -Infinity
      : this.#below[Math.min(block, this.#below.length - 1)];
  }

  /**
   * The earliest timestamp of any message whose id is above `id` (or less:
   * it is a bound), `Infinity` when there is none: the rows of `id`'s own
   * block read from the table, and the blocks wholly above. Messages
   * appended since {@linkcode refresh} are not bounded: call both in one
   * read transaction.
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  earliestAbove(store: Store, id: number): number {
    const block = blockOf(id + 1);
    const end = (block + 1) * BLOCK - 1;
    const own = store.statement(EARLIEST_IN_SQL).get(id, end)?.t;
    const rest = this.#earliestInBlocks(block + 1);
    return own === null || own === undefined ? rest : Math.min(rest, Number(own));
  }

  /** The earliest timestamp in blocks `block`…last. */
  #earliestInBlocks(block: number): number {
    if (this.#above === undefined) {
      const above: number[] = [];
      let min = Infinity;
      for (let b = this.#lo.length - 1; b >= 0; b--) {
        if (this.#lo[b] !== undefined && this.#lo[b] < min) min = this.#lo[b];
        above[b] = min;
      }
      this.#above = above;
    }
    return block >= this.#above.length ? Infinity : this.#above[block];
  }
}

const TIMELINE = Symbol("message timeline");

/**
 * The connection's {@linkcode MessageTimeline} (owned by the store).
 *
 * @param store The open store.
 * @returns Its timeline.
 */
export function timelineOf(store: Store): MessageTimeline {
  return store.derived(TIMELINE, () => new MessageTimeline());
}
