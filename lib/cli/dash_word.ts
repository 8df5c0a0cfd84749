/**
 * The hint after "unknown option" for a command that takes free text
 * (a search query, a title): a word that starts with `-` is read as an
 * option, as grep reads it, and the hint says how to give it as text.
 *
 * @module
 */
import { printableArgument } from "./shown_argument.ts";
import { shellWord } from "../core/shell_word.ts";

/** `word` as a POSIX shell reads it back (re-exported: the hints of this module use it). */
export { shellWord };

/**
 * What the command would do with `word` taken as text, as the start of the
 * hint: `to search for "--dry-run"`.
 *
 * @param word The word read as an unknown option, quoted and made printable.
 * @param before The positional arguments given before it.
 */
export type DashWordPurpose = (word: string, before: readonly string[]) => string;

/** Where the word read as an unknown option stands on the command line. */
export interface DashWordPlace {
  /** The options (and their values) given before it, as typed. */
  readonly options: readonly string[];
  /** The positional arguments given before it. */
  readonly before: readonly string[];
  /** The word, as typed. */
  readonly word: string;
}

/**
 * The hint for a word read as an unknown option by a command that takes
 * free text: what the command would do with it, and the command line with
 * `--` that does it (the options and positional arguments typed before it
 * kept in place).
 *
 * @param command The command name.
 * @param purpose What the command would do with the word.
 * @param place The word and what was typed before it.
 * @returns One line, no trailing period.
 *
 * @example
 * ```ts
 * import { dashWordHint } from "./dash_word.ts";
 * const hint = dashWordHint("search", (w) => `to search for ${w}`, {
 *   options: [],
 *   before: [],
 *   word: "--dry-run",
 * });
 * console.assert(
 *   hint === 'to search for "--dry-run", put -- before it: hermes-state search -- --dry-run',
 * );
 * ```
 */
export function dashWordHint(
  command: string,
  purpose: DashWordPurpose,
  place: DashWordPlace,
): string {
  const words = [...place.options, "--", ...place.before, place.word].map((word) =>
    printableArgument(shellWord(word))
  );
  const line = ["hermes-state", command, ...words].join(" ");
  const what = purpose(printableArgument(place.word, '"'), place.before);
  return `${what}, put -- before it: ${line}`;
}
