/**
 * Titles `recover` must change: the new file has the unique title index,
 * and a damaged file may hold two sessions of one title (its index dropped
 * or damaged). The later session gets the next free title of the title's
 * lineage (`"notes"` → `"notes #2"`), as Hermes numbers a continued
 * session, so both stay findable by title and the change is reported.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { nextLineageTitle, titleStem } from "../core/titles.ts";

/** A session whose title was taken by another recovered session. */
export interface RetitledSession {
  /** The session id. */
  readonly session: string;
  /** Its title in the damaged file. */
  readonly from: string;
  /** Its title in the new file. */
  readonly to: string;
}

/**
 * The next title of `title`'s lineage that no session of `db` holds.
 *
 * @param db The new file.
 * @param title The title already taken.
 * @returns A free title (`"<stem> #N"`).
 */
export function freeTitleLike(db: SqliteConnection, title: string): string {
  const stem = titleStem(title);
  const taken = db.prepare(
    `SELECT title FROM sessions
     WHERE title = ?1 OR substr(title, 1, length(?1) + 2) = ?1 || ' #'`,
  ).all(stem).map((row) => row.title);
  // The stem itself is taken when `title` is the stem; count it so that numbering starts at #2.
  return nextLineageTitle(stem, taken.length === 0 ? [stem] : taken);
}
