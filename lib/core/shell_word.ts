/**
 * A word as a POSIX shell reads it back, for the command lines the CLI
 * suggests (`hermes-state recover '/my files/state.db' …`).
 *
 * @module
 */

/** Characters a shell reads as part of a plain word. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `word` as a POSIX shell reads it back: as it is when plain, else in
 * single quotes.
 *
 * @param word The word.
 * @returns The quoted word.
 *
 * @example
 * ```ts
 * import { shellWord } from "./shell_word.ts";
 * console.assert(shellWord("--dry-run") === "--dry-run");
 * console.assert(shellWord("-it's") === "'-it'\\''s'");
 * ```
 */
export function shellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
