/**
 * Titles two sessions share, which only a file whose unique title index was
 * dropped can hold: the schema step cannot create the index again (SQLite
 * refuses it, and Python's `SessionDB()` fails on such a file), so the
 * doctor names them and `--fix` gives the later sessions the next title of
 * their lineage (`"notes"` → `"notes #2"`), as Python numbers a lineage.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { nextLineageTitle, titleStem } from "../core/titles.ts";

/** One title several sessions share. */
export interface SharedTitle {
  /** The title. */
  readonly title: string;
  /** The sessions holding it, earliest first (the first keeps it). */
  readonly ids: readonly string[];
}

/** One title given by {@linkcode renameSharedTitles}. */
export interface TitleRename {
  /** The session renamed. */
  readonly id: string;
  /** Its title before. */
  readonly from: string;
  /** Its title now. */
  readonly to: string;
}

/**
 * Finds the titles held by more than one session.
 *
 * @param db The connection.
 * @returns The shared titles, by title; `[]` when every title is unique.
 *
 * @example
 * ```ts
 * import { loadDriver } from "../sqlite/driver/load.ts";
 * import { sharedTitles } from "./title_check.ts";
 * const db = (await loadDriver())(":memory:");
 * db.exec("CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, started_at REAL)");
 * db.exec("INSERT INTO sessions VALUES ('a', 'x', 1), ('b', 'x', 2), ('c', 'y', 3)");
 * console.assert(sharedTitles(db)[0].ids.join() === "a,b");
 * db.close();
 * ```
 */
export function sharedTitles(db: SqliteConnection): SharedTitle[] {
  const rows = db.prepare(
    `SELECT id, title FROM sessions WHERE title IN
       (SELECT title FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1)
     ORDER BY title, started_at, id`,
  ).all();
  const byTitle = new Map<string, string[]>();
  for (const row of rows) {
    const title = String(row.title);
    const ids = byTitle.get(title) ?? [];
    ids.push(String(row.id));
    byTitle.set(title, ids);
  }
  return [...byTitle].map(([title, ids]) => ({ title, ids }));
}

/**
 * Gives every session but the earliest of each shared title the next free
 * title of its lineage. Call inside the write transaction that creates the
 * unique title index.
 *
 * @param db The connection.
 * @returns The renames, in order.
 *
 * @example
 * ```ts
 * import { loadDriver } from "../sqlite/driver/load.ts";
 * import { renameSharedTitles } from "./title_check.ts";
 * const db = (await loadDriver())(":memory:");
 * db.exec("CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, started_at REAL)");
 * db.exec("INSERT INTO sessions VALUES ('a', 'x', 1), ('b', 'x', 2)");
 * console.assert(renameSharedTitles(db)[0].to === "x #2");
 * db.close();
 * ```
 */
export function renameSharedTitles(db: SqliteConnection): TitleRename[] {
  const taken = db.prepare(
    "SELECT title FROM sessions WHERE title = ? OR substr(title, 1, length(?) + 2) = ? || ' #'",
  );
  const rename = db.prepare("UPDATE sessions SET title = ? WHERE id = ?");
  const renames: TitleRename[] = [];
  for (const { title, ids } of sharedTitles(db)) {
    const stem = titleStem(title);
    for (const id of ids.slice(1)) {
      const to = nextLineageTitle(stem, taken.all(stem, stem, stem).map((row) => row.title));
      rename.run(to, id);
      renames.push({ id, from: title, to });
    }
  }
  return renames;
}
