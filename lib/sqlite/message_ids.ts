/**
 * Message ids as the search's per-connection figures read them: the last
 * one, and a mark in `state_meta` that messages were given ids below it. Hermes appends messages with growing ids (`AUTOINCREMENT`);
 * only `importSession` writes an id of its own (the original one, when it
 * is free), which may lie below the last. A connection that keeps figures
 * read in id order (the search timeline) takes in only what is above the
 * last id it saw, and so reads everything again when this mark changes.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { getMeta, setMeta } from "./meta.ts";

/** The `state_meta` key: a count of the imports that wrote below the last id. */
const KEY = "hermes_state_ids_below_last";

const LAST_ID_SQL = "SELECT coalesce(max(id), 0) AS id FROM messages";

const FIRST_ID_SQL = "SELECT coalesce(min(id), 1) AS id FROM messages";

/**
 * The first message id the connection sees (1 when there is none): Hermes
 * gives ids from 1, but a row written by hand may have 0 or below.
 *
 * @param store The open store.
 * @returns The id.
 * @throws {SqliteError} On a storage failure.
 */
export function firstMessageId(store: Store): number {
  return Number(store.statement(FIRST_ID_SQL).get()?.id ?? 1);
}

/**
 * The last message id the connection sees (0 when there is none).
 *
 * @param store The open store.
 * @returns The id.
 * @throws {SqliteError} On a storage failure.
 */
export function lastMessageId(store: Store): number {
  return Number(store.statement(LAST_ID_SQL).get()?.id ?? 0);
}

/**
 * Bumps the mark, inside the caller's write transaction, when one of `ids`
 * lies below the file's last message id.
 *
 * @param store The open store, in a write transaction.
 * @param ids The ids about to be inserted.
 * @throws {SqliteError} On a storage failure.
 */
export function noteIdsBelowLast(store: Store, ids: readonly (number | bigint)[]): void {
  const last = lastMessageId(store);
  if (!ids.some((id) => id < last)) return;
  setMeta(store, KEY, String(Number(getMeta(store, KEY) ?? 0) + 1));
}

/**
 * The mark as the connection sees it now (`""` when never set).
 *
 * @param store The open store.
 * @returns The mark.
 * @throws {SqliteError} On a storage failure.
 */
export function idsBelowLastMark(store: Store): string {
  return getMeta(store, KEY) ?? "";
}
