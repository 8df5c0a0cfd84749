/**
 * How many rows of a session a transcript leaves out (those a newer Hermes
 * rewound, compacted or hides), counted only where there can be some.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { MessagesOptions } from "../core/session_options.ts";
import type { MessageRow } from "../core/types.ts";

/** The columns whose values leave a row out of a transcript (`transcriptMarks` reads them). */
const LEAVING_OUT_COLUMNS = ["active", "display_kind"] as const;

/** Every row, as `show --all` prints them (what a transcript shows with `all`). */
export const EVERY_ROW = { includeInactive: true } as const satisfies MessagesOptions;

/**
 * Whether the store's rows can be left out of a transcript, told by a row
 * of it already read. A SQLite file's rows come back with every column of
 * its `messages` table (`NULL`s included, read again after another process
 * changed the schema), so a row without `active` and `display_kind` says
 * the file has neither column (a v11 or older file): none of its rows is
 * left out. Without a row to tell by, true (the count tells). On
 * PostgreSQL those values live in each row's extra columns, present or
 * not row by row: always true there.
 *
 * @param store The store.
 * @param row A row of the store read just now, or `undefined`.
 * @returns False when no row of the store can be left out.
 */
export function mayLeaveRowsOut(store: SessionStore, row: MessageRow | undefined): boolean {
  if (store.engine !== "sqlite" || row === undefined) return true;
  return LEAVING_OUT_COLUMNS.some((column) => Object.hasOwn(row, column));
}

/**
 * How many rows of session `id` its transcript leaves out: every row less
 * those it shows (`shownCount`, the count of the transcript's rows without
 * `all`). 0 without a count of every row where none can be
 * ({@linkcode mayLeaveRowsOut}, asked of a row the page read anyway): a
 * count of a session of 200,000 messages takes some 30 ms.
 *
 * @param store The store.
 * @param id The session.
 * @param lastRow The session's last row, being read by the caller (or `undefined` for none).
 * @param shownCount The number of rows the transcript shows, counted (or being counted) by the caller.
 * @returns How many rows `all=1` shows besides those.
 */
export async function leftOutCount(
  store: SessionStore,
  id: string,
  lastRow: Promise<MessageRow | undefined>,
  shownCount: () => Promise<number>,
): Promise<number> {
  if (!mayLeaveRowsOut(store, await lastRow)) return 0;
  const [every, shown] = await Promise.all([
    store.countMessages(id, EVERY_ROW),
    shownCount(),
  ]);
  return every - shown;
}
