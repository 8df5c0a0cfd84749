/**
 * What one connection knows about where message timestamps lie along the
 * id axis, so that a search sorted by time can walk the full-text index in
 * id order and stop after a page, and still give exactly the answer of the
 * full sort.
 *
 * Two bounds are asked for: the latest timestamp of any message below an
 * id, and the earliest of any message above one. Every message belongs to
 * a session, and the session index (`session_id, timestamp`) finds a
 * session's latest and earliest message in one seek each; so the connection
 * keeps, per session, its latest (for the first bound) or earliest (for the
 * second) timestamp, each side read the first time it is asked for. The
 * latest timestamp below `id` is then the largest, over the sessions taken
 * latest first, of one seek for each one's latest message below `id`; the
 * answer is known as soon as the next session's latest cannot beat it, so
 * only the sessions active where the walk is, and one more, are sought.
 * Nothing assumes that timestamps grow with ids: where they do not
 * (imports, backdated rows), more sessions are looked at and the walk goes
 * on further, or the caller falls back to the full sort.
 *
 * A side is read once per connection, two index seeks per session (never a
 * pass over the messages; the session ids come from the index too, so a
 * message whose session row is missing still counts), then kept current:
 * when this connection or another one has written since the last look,
 * only messages above the last id seen are read. A deleted message leaves
 * its session's figures as they were, which stay true bounds. Two
 * assumptions, both true of the Hermes file: message ids only grow
 * (`AUTOINCREMENT`; checked), and a message's timestamp is never updated in
 * place (Python and this library delete and re-insert instead). The one
 * writer of ids below the last, `importSession` (original ids kept when
 * free), leaves a mark (`message_ids.ts`); a changed mark makes the
 * connection read its figures again.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { idsBelowLastMark, lastMessageId } from "../message_ids.ts";

/** Changes since the last look: this connection's and everyone else's. */
const VERSION_SQL =
  "SELECT total_changes() AS mine, (SELECT data_version FROM pragma_data_version) AS theirs";

const SCHEMA_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'";

/** The session ids of the messages, walked through the session index (one seek each). */
const SESSION_IDS_SQL = `WITH RECURSIVE ids(sid) AS (
  SELECT (SELECT min(session_id) FROM messages)
  UNION ALL
  SELECT (SELECT min(session_id) FROM messages WHERE session_id > ids.sid)
  FROM ids WHERE ids.sid IS NOT NULL
)`;

/** Every session that has messages, with its latest (or earliest) timestamp: one more seek each. */
function sideSql(side: Side): string {
  return `${SESSION_IDS_SQL}
SELECT sid, (SELECT ${side === "latest" ? "max" : "min"}(timestamp) FROM messages
  WHERE session_id = ids.sid) AS t
FROM ids WHERE sid IS NOT NULL`;
}

/** The messages above an id, per session: their latest and earliest. */
const NEW_ROWS_SQL = `SELECT session_id AS sid,
  max(timestamp) AS hi, min(timestamp) AS lo
FROM messages WHERE id > ? GROUP BY session_id`;

/** A session's latest timestamp below an id (a seek down its index range). */
const LATEST_BELOW_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id < ? ORDER BY timestamp DESC LIMIT 1`;

/** A session's earliest timestamp above an id. */
const EARLIEST_ABOVE_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id > ? ORDER BY timestamp ASC LIMIT 1`;

/** A session's latest timestamp below an id and before a time. */
const LATEST_BELOW_BEFORE_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id < ? AND timestamp < ? ORDER BY timestamp DESC LIMIT 1`;

/** A session's earliest timestamp above an id and at or after a time. */
const EARLIEST_ABOVE_AFTER_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id > ? AND timestamp >= ? ORDER BY timestamp ASC LIMIT 1`;

/** How far a bound looks, and which messages it leaves out. */
export interface BoundOptions {
  /** Sessions looked into at most; past them the bound gives up (see each method). */
  readonly maxSeeks?: number;
  /**
   * Leave out messages at or after this time (a search's `until`), and pass
   * over, without a seek, the sessions whose earliest message is that late,
   * when the connection knows the sessions' earliest ends already.
   */
  readonly before?: number | null;
  /**
   * Leave out messages before this time (a search's `since`), passing over
   * the sessions whose latest message is earlier, when those are known.
   */
  readonly after?: number | null;
}

/** Which end of each session's messages a side keeps. */
type Side = "latest" | "earliest";

/**
 * One end of every session's messages: its latest timestamp (or a later
 * one: messages may have been deleted), or its earliest (or an earlier one).
 */
class SessionEnds {
  readonly #side: Side;
  readonly #ends = new Map<string, number>();
  /** The sessions, the latest (earliest) end first; `undefined` after a change. */
  #order: [string, number][] | undefined;

  constructor(store: Store, side: Side) {
    this.#side = side;
    for (const row of store.statement(sideSql(side)).all()) {
      if (row.t !== null && row.t !== undefined) this.#ends.set(String(row.sid), Number(row.t));
    }
  }

  /** Takes in one session's new messages' latest and earliest timestamps. */
  add(sid: string, hi: number, lo: number): void {
    const t = this.#side === "latest" ? hi : lo;
    const known = this.#ends.get(sid);
    const later = this.#side === "latest"
      ? known === undefined || t > known
      : known === undefined || t < known;
    if (later) this.#ends.set(sid, t);
    this.#order = undefined;
  }

  /** One session's end, if it has messages. */
  of(sid: string): number | undefined {
    return this.#ends.get(sid);
  }

  /** The sessions in the side's order. */
  order(): readonly [string, number][] {
    const sign = this.#side === "latest" ? -1 : 1;
    this.#order ??= [...this.#ends].sort((a, b) => sign * (a[1] - b[1]));
    return this.#order;
  }
}

/** The per-connection state; see the module documentation. */
export class MessageTimeline {
  #version = "";
  /** The mark of imports below the last id, when last looked at. */
  #reused = "";
  /** Every message up to this id is reflected in the sides read so far. */
  #seen = -1;
  /** False when ids may be reused (no AUTOINCREMENT): no bound can be trusted. */
  #usable = true;
  #latest: SessionEnds | undefined;
  #earliest: SessionEnds | undefined;

  /**
   * Brings the figures up to date with the file as this connection now
   * sees it (call it inside the read transaction that the search runs in).
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
    const reused = idsBelowLastMark(store);
    if (reused !== this.#reused) {
      this.#reused = reused;
      this.#latest = this.#earliest = undefined;
    }
    // The last id first: a message appended meanwhile is read next time.
    const last = lastMessageId(store);
    if (this.#seen >= 0 && (this.#latest !== undefined || this.#earliest !== undefined)) {
      for (const row of store.statement(NEW_ROWS_SQL).all(this.#seen)) {
        const [sid, hi, lo] = [String(row.sid), Number(row.hi), Number(row.lo)];
        this.#latest?.add(sid, hi, lo);
        this.#earliest?.add(sid, hi, lo);
      }
    }
    this.#seen = Math.max(this.#seen, last);
  }

  /**
   * The latest timestamp of any message whose id is below `id` (or more:
   * it is a bound), `-Infinity` when there is none. The first call of a
   * connection reads every session's latest timestamp (one seek each).
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @param options `maxSeeks` (past them the bound is `Infinity`), and
   *   `before`: only messages earlier than it count.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  latestBelow(store: Store, id: number, options: BoundOptions = {}): number {
    this.#latest ??= new SessionEnds(store, "latest");
    const { maxSeeks = Infinity, before = null } = options;
    // A session whose earliest message is at or after `before` has none that counts.
    const passOver = before === null ? undefined : this.#earliest;
    let bound = -Infinity;
    let seeks = 0;
    for (const [sid, hi] of this.#latest.order()) {
      if (hi <= bound) break;
      // Unknown: it may be early.
      if (before !== null && (passOver?.of(sid) ?? -Infinity) >= before) continue;
      if (++seeks > maxSeeks) return Infinity;
      const t = before === null
        ? store.statement(LATEST_BELOW_SQL).get(sid, id)?.t
        : store.statement(LATEST_BELOW_BEFORE_SQL).get(sid, id, before)?.t;
      if (t !== null && t !== undefined) bound = Math.max(bound, Number(t));
    }
    return bound;
  }

  /**
   * The earliest timestamp of any message whose id is above `id` (or less:
   * it is a bound), `Infinity` when there is none. The first call of a
   * connection reads every session's earliest timestamp (one seek each).
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @param options `maxSeeks` (past them the bound is `-Infinity`), and
   *   `after`: only messages at or after it count.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  earliestAbove(store: Store, id: number, options: BoundOptions = {}): number {
    this.#earliest ??= new SessionEnds(store, "earliest");
    const { maxSeeks = Infinity, after = null } = options;
    // A session whose latest message is before `after` has none that counts.
    const passOver = after === null ? undefined : this.#latest;
    let bound = Infinity;
    let seeks = 0;
    for (const [sid, lo] of this.#earliest.order()) {
      if (lo >= bound) break;
      // Unknown: it may be late.
      if (after !== null && (passOver?.of(sid) ?? Infinity) < after) continue;
      if (++seeks > maxSeeks) return -Infinity;
      const t = after === null
        ? store.statement(EARLIEST_ABOVE_SQL).get(sid, id)?.t
        : store.statement(EARLIEST_ABOVE_AFTER_SQL).get(sid, id, after)?.t;
      if (t !== null && t !== undefined) bound = Math.min(bound, Number(t));
    }
    return bound;
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
