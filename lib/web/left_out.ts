/**
 * How many rows of a session a transcript leaves out (those a newer Hermes
 * rewound, compacted or hides), counted only where there can be some.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { MessagesOptions } from "../core/session_options.ts";

/** The columns whose values leave a row out of a transcript (`transcriptMarks` reads them). */
const LEAVING_OUT_COLUMNS = ["active", "display_kind"] as const;

/** Every row, as `show --all` prints them. */
const EVERY_ROW = { includeInactive: true } as const satisfies MessagesOptions;

/**
 * The rows a transcript shows. Read so, a SQLite store's statement names a
 * column that leaves rows out exactly when the file has it (`active`,
 * `display_kind`), so a statement prepared before a newer Hermes added one
 * (whose `*` may still list the columns of then) is never the one read.
 */
const SHOWN_ONLY = { excludeHidden: true } as const satisfies MessagesOptions;

/**
 * Whether session `id` can have a row its transcript leaves out. A SQLite
 * file's rows come back with every column of its `messages` table (`NULL`s
 * included), so a row without `active` and `display_kind` says the file has
 * neither column (a v11 or older file): none of its rows is left out. One
 * row is read, by the session's index: the first the transcript shows (a
 * session that shows none may have rows left out, or none at all: true,
 * and the count tells). On PostgreSQL those values live in each row's extra
 * columns, present or not row by row: always true there.
 *
 * @param store The store.
 * @param id The session.
 * @returns False when no row of the session can be left out.
 */
export async function mayLeaveRowsOut(store: SessionStore, id: string): Promise<boolean> {
  if (store.engine !== "sqlite") return true;
  const [row] = await store.getMessages(id, { ...SHOWN_ONLY, limit: 1 });
  if (row === undefined) return true;
  return LEAVING_OUT_COLUMNS.some((column) => Object.hasOwn(row, column));
}

/**
 * How many rows of session `id` its transcript leaves out: every row less
 * those it shows (`shownCount`, the count of the transcript's rows without
 * `all`). 0 without a count of every row where none can be
 * ({@linkcode mayLeaveRowsOut}): a count of a session of 200,000 messages
 * takes some 30 ms.
 *
 * @param store The store.
 * @param id The session.
 * @param shownCount The number of rows the transcript shows, counted (or being counted) by the caller.
 * @returns How many rows `all=1` shows besides those.
 */
export async function leftOutCount(
  store: SessionStore,
  id: string,
  shownCount: () => Promise<number>,
): Promise<number> {
  if (!await mayLeaveRowsOut(store, id)) return 0;
  const [every, shown] = await Promise.all([
    store.countMessages(id, EVERY_ROW),
    shownCount(),
  ]);
  return every - shown;
}
