/**
 * The digests `sync` records of what the server holds of a session
 * (`sync_sessions`), and compares with the file's on the next pass: of the
 * session row, of its messages' ids and times, and of its messages' newer
 * columns (a newer Hermes's file).
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import { MESSAGE_COLUMN_SET, SESSION_COLUMN_NAMES } from "./_rows.ts";
import { extraColumnsJson } from "./_extra.ts";
import { exactInteger } from "./_sync_exact.ts";

/** The modulus of {@linkcode MESSAGE_DIGEST_SQL}: a prime below 2^31. */
const DIGEST_MODULUS = 2147483647;

/**
 * A digest of a set of message rows from what the file's index
 * `idx_messages_session (session_id, timestamp)` holds (the id is its
 * rowid), so that it costs what a count does: a sum, exact and in any
 * order, of each row's id and timestamp (to the microsecond), mixed and
 * reduced. Count and highest id alone miss a transcript rewritten to the
 * same count and highest id (a backup restored and written on, whose new
 * messages take the ids of the lost ones; a clear and an append in a file
 * without `AUTOINCREMENT`); its new rows' times differ.
 */
export const MESSAGE_DIGEST_SQL: string =
  `coalesce(sum((id * 1000003 + CAST(timestamp * 1000000 AS INTEGER)) % ${DIGEST_MODULUS}), 0)
   % ${DIGEST_MODULUS}`;

/**
 * Digests of a session's messages' newer columns (`active`, `compacted`…,
 * which a newer Hermes changes in place on a rewind or a compaction),
 * ordered by id: of those the server holds (ids up to its last synced one),
 * and of all of them up to the snapshot.
 */
export interface ExtraDigests {
  /** Of the rows with ids up to the server's last synced one. */
  readonly held: string;
  /** Of every row given. */
  readonly all: string;
}

/**
 * {@linkcode ExtraDigests} built row by row, so that a session's rows can
 * be given a page at a time (in id order, across pages).
 */
export class ExtraDigester {
  readonly #hash: Hash = createHash("sha1");
  readonly #heldUpTo: number | bigint;
  #held: string | undefined;

  /**
   * @param heldUpTo The server's last synced message id of the session (0: none).
   */
  constructor(heldUpTo: number | bigint) {
    this.#heldUpTo = heldUpTo;
  }

  /**
   * Adds one row (the next in id order).
   *
   * @param row The row as the file gives it: its id and any other columns.
   */
  add(row: Record<string, unknown>): void {
    if (this.#held === undefined && exactInteger(row.id) > this.#heldUpTo) {
      this.#held = this.#hash.copy().digest("hex");
    }
    this.#hash.update(`${row.id} ${extraColumnsJson(row, MESSAGE_COLUMN_SET)}\n`);
  }

  /**
   * The digests of the rows added (call once).
   *
   * @returns Both digests.
   */
  finish(): ExtraDigests {
    const all = this.#hash.digest("hex");
    return { held: this.#held ?? all, all };
  }
}

/**
 * {@linkcode ExtraDigests} of one session's message rows.
 *
 * @param rows The rows, in id order.
 * @param heldUpTo The server's last synced message id of the session.
 * @returns Both digests.
 */
export function extraDigests(
  rows: Iterable<Record<string, unknown>>,
  heldUpTo: number | bigint,
): ExtraDigests {
  const digester = new ExtraDigester(heldUpTo);
  for (const row of rows) digester.add(row);
  return digester.finish();
}

/**
 * A digest of a session row: its v11 columns, then (a newer Hermes's file)
 * the others, as `extra_columns` JSON. Exported for the test of the upgrade
 * from whole-row digests. A value read exactly as a `bigint` (beyond 2^53)
 * changes the digest of its row only: a server an earlier release synced,
 * which holds that value rounded, gets the row again, exact.
 *
 * @param row The row as the file gives it.
 * @param extra Its newer columns' JSON, or `null`.
 * @param usage Its per-model usage rows as one text (`readModelUsageDigests`), if it has any.
 * @returns The hex digest.
 */
export function digestOf(
  row: Record<string, unknown>,
  extra: string | null,
  usage: string | null = null,
): string {
  let exact = false;
  const values: unknown[] = SESSION_COLUMN_NAMES.map((c) => {
    const value = row[c] ?? null;
    exact ||= typeof value === "bigint";
    return value;
  });
  if (extra !== null) values.push(extra);
  // A newer Hermes's per-model usage rows, when it has any: a session without them digests as
  // before they were carried, and a change to them ships the session again.
  if (usage !== null) values.push({ usage });
  // An integer beyond 2^53 (read exactly) as `{"integer": "digits"}`, which no value read as a
  // number or text digests as; every other row digests as releases before it did.
  const json = exact ? JSON.stringify(values, exactIntegers) : JSON.stringify(values);
  return createHash("sha1").update(json).digest("hex");
}

/** A `JSON.stringify` replacer that writes a `bigint` as `{"integer": "digits"}`. */
function exactIntegers(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? { integer: String(value) } : value;
}

/** One per-session `state_meta` key of a session (its goal): the key's prefix and its value. */
export interface SessionMetaEntry {
  /** The prefix (`goal:`), the key being the prefix and the session id. */
  readonly prefix: string;
  /** The value (`null` as the file may hold it). */
  readonly value: string | null;
}

/**
 * A digest of a session's per-session `state_meta` keys, recorded as
 * `sync_sessions.meta_digest`: `null` for a session without any, so that
 * the records of sessions without a goal stay as an earlier release wrote
 * them.
 *
 * @param entries The session's keys, in prefix order.
 * @returns The hex digest, or `null`.
 */
export function metaDigestOf(entries: readonly SessionMetaEntry[]): string | null {
  if (entries.length === 0) return null;
  const values = entries.map((entry) => [entry.prefix, entry.value]);
  return createHash("sha1").update(JSON.stringify(values)).digest("hex");
}
