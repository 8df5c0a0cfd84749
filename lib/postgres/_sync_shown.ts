/**
 * What a newer Hermes's file shows of each session, as `sync` sees it on
 * every pass: a digest of its messages' visibility columns (`active`,
 * `compacted`, `display_kind`, those the file has), which that Hermes
 * changes in place (a rewind, a compaction, a row it hides or shows
 * again) without touching the session's row or adding a message. Only the
 * rows that differ from a shown one (`active = 1`, `compacted = 0`, no
 * `display_kind`) count, so the digest is that of nothing for a session
 * with none, and a file without those columns reads nothing here.
 *
 * Recorded per session (`sync_sessions.shown_digest`), beside the digest
 * of all the newer columns that a write records (`extra_digest`, which
 * reads every row of the session: too dear for every pass).
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import type { Store } from "../sqlite/store.ts";
import { quote } from "./_sync_exact.ts";
import type { FileMessages } from "./_sync_messages.ts";
import type { ServerSession, SourceSession } from "./_sync_source.ts";

/** The visibility columns, each with the test a shown row passes (SQLite's `IS`: NULL-safe). */
const SHOWN_COLUMNS: readonly (readonly [name: string, shown: string])[] = [
  ["active", "IS 1"],
  ["compacted", "IS 0"],
  ["display_kind", "IS NULL"],
];

/** The digest of a session none of whose rows is hidden or marked: the digest of nothing. */
export const NOTHING_HIDDEN: string = createHash("sha1").digest("hex");

/**
 * Reads the digest of each session's visibility columns, in the caller's
 * read transaction: one pass over the messages' table (their rows hold
 * those columns; no index of the file covers them all), returning only the
 * rows not plainly shown. `undefined` for a file without those columns,
 * which pays nothing.
 *
 * @param store The file (in the caller's read transaction).
 * @returns The digest of each session with such rows (the others':
 *   {@linkcode NOTHING_HIDDEN}), or `undefined`.
 */
export function readShownDigests(store: Store): Map<string, string> | undefined {
  const columns = store.columns("messages");
  const present = SHOWN_COLUMNS.filter(([name]) => columns.has(name));
  if (present.length === 0) return undefined;
  // SQLite's quote() writes each value as it is stored (1, 1.0, '1', NULL, X'01'), exactly.
  const values = present.map(([name]) => `quote(${quote(name)})`).join(" || ' ' || ");
  const shown = present.map(([name, test]) => `${quote(name)} ${test}`).join(" AND ");
  const hashes = new Map<string, Hash>();
  // In id order (the table's own: no sort), so each session's rows are digested in it.
  for (
    const row of store.statement(
      `SELECT session_id, CAST(id AS TEXT) AS digits, ${values} AS shown
       FROM messages WHERE NOT (${shown}) ORDER BY id`,
    ).all()
  ) {
    const session = String(row.session_id);
    let hash = hashes.get(session);
    if (hash === undefined) hashes.set(session, hash = createHash("sha1"));
    hash.update(`${row.digits} ${row.shown}\n`);
  }
  const digests = new Map<string, string>();
  for (const [session, hash] of hashes) digests.set(session, hash.digest("hex"));
  return digests;
}

/**
 * Whether the server holds a session's rows as the file shows them,
 * though its record's digest of them differs or is missing (recorded by
 * a release before it, or taken from an earlier snapshot than the rows
 * shipped): the digest of every newer column of the rows it holds
 * (`extra_digest`) is the file's, or, where the record has none (the rows
 * were shipped before the file had those columns, and show on the
 * server), the file hides none of them. Call for a session whose row,
 * messages and goal are unchanged, in a file with those columns.
 *
 * @param session The session in the file.
 * @param known What the server records of it.
 * @param messages The file's messages.
 * @returns `true` when only the record's digest needs writing; `false`
 *   when the session's transcript is to be shipped again.
 */
export function shownAsHeld(
  session: SourceSession,
  known: ServerSession,
  messages: FileMessages,
): boolean {
  if (known.extraDigest === null) return session.shownDigest === NOTHING_HIDDEN;
  const digests = messages.extraDigests(String(session.row.id), session.maxId, known.maxId);
  return digests.held === known.extraDigest;
}
