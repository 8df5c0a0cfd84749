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
 * keeps, per session, its latest and earliest timestamp and the id of a
 * message that has it. The latest timestamp below `id` is then the largest
 * of: each session's latest, where that message lies below `id`; and, for
 * the few sessions whose latest message lies at or above `id` (the ones
 * active where the walk is), one seek for their latest message below `id`.
 * Sessions are taken latest first, and the answer is known as soon as the
 * next session cannot beat it. Nothing assumes that timestamps grow with
 * ids: where they do not (imports, backdated rows), more sessions are
 * looked at and the walk goes on further, or the caller falls back to the
 * full sort.
 *
 * The sessions are read once per connection, one index seek per session
 * (never a pass over the messages; the session ids come from the index
 * too, so a message whose session row is missing still counts), then kept
 * current: when this connection or another one has written since the last
 * look, only messages above the last id seen are read. A deleted message
 * leaves its session's figures as they were, which stay true bounds. Two
 * assumptions, both true of the Hermes file: message ids only grow
 * (`AUTOINCREMENT`; checked), and a message's timestamp is never updated in
 * place (Python and this library delete and re-insert instead).
 *
 * @module
 */
import type { Store } from "../store.ts";

/** Changes since the last look: this connection's and everyone else's. */
const VERSION_SQL =
  "SELECT total_changes() AS mine, (SELECT data_version FROM pragma_data_version) AS theirs";

const SCHEMA_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'";

/**
 * Every session that has messages (its ids walked through the session
 * index, one seek each), with its latest and earliest message.
 */
const SESSIONS_SQL = `WITH RECURSIVE ids(sid) AS (
  SELECT (SELECT min(session_id) FROM messages)
  UNION ALL
  SELECT (SELECT min(session_id) FROM messages WHERE session_id > ids.sid)
  FROM ids WHERE ids.sid IS NOT NULL
)
SELECT sid,
  (SELECT timestamp FROM messages WHERE session_id = ids.sid
    ORDER BY timestamp DESC, id DESC LIMIT 1) AS hi,
  (SELECT id FROM messages WHERE session_id = ids.sid
    ORDER BY timestamp DESC, id DESC LIMIT 1) AS hi_id,
  (SELECT timestamp FROM messages WHERE session_id = ids.sid
    ORDER BY timestamp ASC, id ASC LIMIT 1) AS lo,
  (SELECT id FROM messages WHERE session_id = ids.sid
    ORDER BY timestamp ASC, id ASC LIMIT 1) AS lo_id
FROM ids WHERE sid IS NOT NULL`;

const LAST_ID_SQL = "SELECT coalesce(max(id), 0) AS id FROM messages";

/** The messages above an id, per session: their latest and earliest. */
const NEW_ROWS_SQL = `SELECT session_id AS sid,
  max(timestamp) AS hi, min(timestamp) AS lo, max(id) AS last
FROM messages WHERE id > ? GROUP BY session_id`;

/** A session's latest timestamp below an id (a seek down its index range). */
const LATEST_BELOW_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id < ? ORDER BY timestamp DESC LIMIT 1`;

/** A session's earliest timestamp above an id. */
const EARLIEST_ABOVE_SQL = `SELECT timestamp AS t FROM messages
WHERE session_id = ? AND id > ? ORDER BY timestamp ASC LIMIT 1`;

/** What the connection knows of one session's messages. */
interface SessionSpan {
  readonly sid: string;
  /** Its latest timestamp (or a later one: messages may have been deleted). */
  hi: number;
  /** The id of a message with timestamp `hi`. */
  hiId: number;
  /** Its earliest timestamp (or an earlier one). */
  lo: number;
  /** The id of a message with timestamp `lo`. */
  loId: number;
}

/** The per-connection state; see the module documentation. */
export class MessageTimeline {
  #version = "";
  /** Every message up to this id has been looked at. */
  #seen = -1;
  /** False when ids may be reused (no AUTOINCREMENT): no bound can be trusted. */
  #usable = true;
  readonly #spans = new Map<string, SessionSpan>();
  /** The spans, latest first; `undefined` after a change. */
  #byLatest: SessionSpan[] | undefined;
  /** The spans, earliest first; `undefined` after a change. */
  #byEarliest: SessionSpan[] | undefined;

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
    if (this.#seen < 0) {
      // The last id first: a message appended meanwhile is read next time.
      const last = Number(store.statement(LAST_ID_SQL).get()?.id ?? 0);
      for (const row of store.statement(SESSIONS_SQL).all()) {
        if (row.hi === null || row.hi === undefined) continue;
        const span: SessionSpan = {
          sid: String(row.sid),
          hi: Number(row.hi),
          hiId: Number(row.hi_id),
          lo: Number(row.lo),
          loId: Number(row.lo_id),
        };
        this.#spans.set(span.sid, span);
      }
      this.#seen = last;
    } else {
      for (const row of store.statement(NEW_ROWS_SQL).all(this.#seen)) {
        const sid = String(row.sid);
        const hi = Number(row.hi);
        const lo = Number(row.lo);
        const last = Number(row.last);
        const span = this.#spans.get(sid);
        // A message of the new ones with the timestamp: its id is above #seen; the last one
        // will do as a witness only for the bound's direction it can answer (see below).
        if (span === undefined) {
          this.#spans.set(sid, { sid, hi, hiId: Infinity, lo, loId: -Infinity });
        } else {
          if (hi >= span.hi) [span.hi, span.hiId] = [hi, Infinity];
          if (lo < span.lo) [span.lo, span.loId] = [lo, -Infinity];
        }
        this.#seen = Math.max(this.#seen, last);
      }
    }
    this.#byLatest = undefined;
    this.#byEarliest = undefined;
  }

  /**
   * The latest timestamp of any message whose id is below `id` (or more:
   * it is a bound), `-Infinity` when there is none.
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  latestBelow(store: Store, id: number): number {
    this.#byLatest ??= [...this.#spans.values()].sort((a, b) => b.hi - a.hi);
    let bound = -Infinity;
    for (const span of this.#byLatest) {
      if (span.hi <= bound) break;
      if (span.hiId < id) {
        bound = span.hi;
        break;
      }
      const t = store.statement(LATEST_BELOW_SQL).get(span.sid, id)?.t;
      if (t !== null && t !== undefined) bound = Math.max(bound, Number(t));
    }
    return bound;
  }

  /**
   * The earliest timestamp of any message whose id is above `id` (or less:
   * it is a bound), `Infinity` when there is none.
   *
   * @param store The open store (in the same read transaction as {@linkcode refresh}).
   * @param id An id.
   * @returns The bound.
   * @throws {SqliteError} On a storage failure.
   */
  earliestAbove(store: Store, id: number): number {
    this.#byEarliest ??= [...this.#spans.values()].sort((a, b) => a.lo - b.lo);
    let bound = Infinity;
    for (const span of this.#byEarliest) {
      if (span.lo >= bound) break;
      if (span.loId > id) {
        bound = span.lo;
        break;
      }
      const t = store.statement(EARLIEST_ABOVE_SQL).get(span.sid, id)?.t;
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
