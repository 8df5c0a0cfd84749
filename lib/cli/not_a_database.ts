/**
 * A JSON Lines file (an export) given where a database goes (`--db`,
 * `copy SRC`, `backup`'s source…): SQLite refuses it as "not a database"
 * and the open's hint is `recover`, which finds nothing in it. The way to
 * read it is `import`.
 *
 * @module
 */
import { OpenError } from "../core/errors.ts";
import { shellWord } from "../core/shell_word.ts";
import { looksLikeJsonLines } from "./sqlite_header.ts";

/**
 * The command that reads the JSON Lines file `path` into a new store.
 *
 * @param path The file, as the user gave it.
 * @returns The command line.
 */
export function importCommand(path: string): string {
  return `hermes-state --db NEW.db import ${shellWord(path)}`;
}

/**
 * The line to report for `error` when it is the refused open of a JSON
 * Lines file, naming `import`.
 *
 * @param error What a command threw.
 * @returns The line, or `undefined` when `error` is another failure or the
 *   file is not JSON Lines.
 */
export function jsonLinesGivenAsDatabase(error: unknown): string | undefined {
  if (!(error instanceof OpenError) || error.kind !== "corrupt") return undefined;
  // The open failed: no connection of this process holds the file (see looksLikeJsonLines).
  if (!looksLikeJsonLines(error.path)) return undefined;
  return `Cannot open database ${JSON.stringify(error.path)}: it is a JSON Lines file ` +
    `(an export?), not a database; nothing was changed. To read it into a store: ` +
    importCommand(error.path);
}
