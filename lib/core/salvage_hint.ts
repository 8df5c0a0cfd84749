/**
 * The `recover` command line the doctor suggests for a damaged file: the
 * file itself, and a new file beside it, each quoted for the shell when
 * it needs to be.
 *
 * @module
 */
import { basename, dirname, extname, join } from "node:path";
import { shellWord } from "./shell_word.ts";

/**
 * Where the doctor suggests `recover` writes: beside the file, its name
 * with `-recovered` before the extension (`state.db` → `state-recovered.db`).
 *
 * @param path The damaged file.
 * @returns The new file's path.
 *
 * @example
 * ```ts
 * import { recoveredPath } from "./salvage_hint.ts";
 * console.assert(recoveredPath("/srv/hermes/state.db") === "/srv/hermes/state-recovered.db");
 * ```
 */
export function recoveredPath(path: string): string {
  const extension = extname(path);
  const stem = basename(path, extension);
  return join(dirname(path), `${stem}-recovered${extension || ".db"}`);
}

/**
 * The command line that salvages `path` into a new file beside it.
 *
 * @param path The damaged file.
 * @returns `hermes-state recover PATH DEST`, each quoted when needed.
 *
 * @example
 * ```ts
 * import { recoverCommand } from "./salvage_hint.ts";
 * console.assert(
 *   recoverCommand("/my files/state.db") ===
 *     "hermes-state recover '/my files/state.db' '/my files/state-recovered.db'",
 * );
 * ```
 */
export function recoverCommand(path: string): string {
  return `hermes-state recover ${shellWord(path)} ${shellWord(recoveredPath(path))}`;
}

/**
 * The fix of a finding that only `recover` can repair: the command, then
 * the new file put in the old one's place.
 *
 * @param path The damaged file.
 * @returns One line.
 */
export function salvageFix(path: string): string {
  return `the file is damaged: ${recoverCommand(path)}, then put ${
    shellWord(recoveredPath(path))
  } in its place with the writers stopped`;
}
