/**
 * `recover`'s use of the commits past a broken `-wal` frame (see
 * `wal_salvage.ts`): the image they make is written to a temporary file
 * beside the new one (never over the damaged file or its `-wal`), checked
 * against the image SQLite honours, and, when it holds up, recovered from
 * instead of the damaged file.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import type { SqliteDriver } from "../sqlite/driver/types.ts";
import { foreignKeyCheck, integrityCheck } from "../sqlite/integrity.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import { salvageWalImage, writeWalImage } from "./wal_salvage.ts";
import { removeWithSidecars, tempName } from "./_temp_files.ts";

/** What the checks of one image found. */
interface ImageFindings {
  /** SQLite's b-tree lines (`["ok"]` when sound). */
  readonly lines: readonly string[];
  /** Lines about the search indexes. */
  readonly fts: ReadonlySet<string>;
  /** Foreign key violations, as `table rowid → parent`. */
  readonly foreignKeys: ReadonlySet<string>;
}

/** An image made into a temporary file, or why none was taken. */
export type WalSalvageFile =
  | { readonly path: string; readonly commits: number }
  | { readonly refused: string };

function check(openDriver: SqliteDriver, path: string): ImageFindings {
  const db = openDriver(path);
  try {
    const integrity = integrityCheck(db, { full: true });
    return {
      lines: integrity.lines,
      fts: new Set(Object.values(integrity.fts).flat()),
      foreignKeys: new Set(foreignKeyCheck(db).map((v) => `${v.table} ${v.rowid} → ${v.parent}`)),
    };
  } finally {
    db.close();
  }
}

function subset(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return [...a].every((item) => b.has(item));
}

/**
 * Makes the image of the commits past the broken frame of `walPath` into
 * a temporary file beside `dest`, and keeps it only when it is sound and
 * no worse than what SQLite honours: the whole-file integrity check (each
 * search index's own included) says ok, and its foreign key violations
 * and search index findings are all found in the honoured image too.
 *
 * @param source The damaged file (only read).
 * @param walPath Its `-wal` (only read).
 * @param dest The new file `recover` writes (the temporary files go beside it).
 * @param openDriver Opens the temporary files.
 * @returns The temporary file (the caller removes it with its sidecars) and
 *   the commits it holds past the break, or why none was taken.
 */
export function salvageWalFile(
  source: string,
  walPath: string,
  dest: string,
  openDriver: SqliteDriver,
): WalSalvageFile {
  const wal = readFileSync(walPath);
  const made = salvageWalImage(wal);
  if ("reason" in made) return { refused: made.reason };
  const honoured = tempName(dest, "walhonoured");
  const salvaged = tempName(dest, "walsalvage");
  let kept = false;
  try {
    writeWalImage(source, wal, made, made.honoured, honoured);
    writeWalImage(source, wal, made, made.salvaged, salvaged);
    let before: ImageFindings;
    let after: ImageFindings;
    try {
      before = check(openDriver, honoured);
      after = check(openDriver, salvaged);
    } catch (error) {
      if (!(error instanceof SqliteError)) throw error;
      return { refused: `the images cannot be checked: ${error.message}` };
    }
    if (after.lines.length !== 1 || after.lines[0] !== "ok") {
      return { refused: `the image past the break fails its integrity check: ${after.lines[0]}` };
    }
    if (!subset(after.foreignKeys, before.foreignKeys)) {
      return { refused: "the image past the break has rows pointing at missing rows" };
    }
    if (!subset(after.fts, before.fts)) {
      return { refused: "the image past the break fails a search index's own check" };
    }
    kept = true;
    return { path: salvaged, commits: made.commits };
  } finally {
    removeWithSidecars(honoured);
    if (!kept) removeWithSidecars(salvaged);
  }
}
