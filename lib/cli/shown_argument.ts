/**
 * How the CLI's error and usage messages name an argument the user typed:
 * as they always did when it is short, cut by {@linkcode clippedText} when
 * long, so that a 2 MB argument never makes a 2 MB line on stderr. The cut
 * is made here, where a message is built, never in
 * {@linkcode visibleInline}, which also renders transcripts.
 *
 * @module
 */
import { clippedText } from "../core/shown_value.ts";
import { visibleInline } from "../render/transcript.ts";

/**
 * An argument made printable ({@linkcode visibleInline}) between `quote`s,
 * cut when long (the whole length then follows the closing quote).
 *
 * @param text The argument as typed.
 * @param quote The quote around it (none by default).
 * @returns `'aaaa…' (200,000 characters)` for a long one in single quotes.
 *
 * @example
 * ```ts
 * import { printableArgument } from "./shown_argument.ts";
 * console.assert(printableArgument("a\tb", "'") === "'a␉b'");
 * ```
 */
export function printableArgument(text: string, quote = ""): string {
  return clippedText(text, (shown) => `${quote}${visibleInline(shown)}${quote}`);
}

/**
 * An argument between `quote`s as typed (the messages that always wrote
 * `"${text}"`), cut when long (the whole length then follows the closing quote).
 *
 * @param text The argument as typed.
 * @param quote The quote around it (`"` by default).
 * @returns `"aaaa…" (200,000 characters)` for a long one.
 *
 * @example
 * ```ts
 * import { quotedArgument } from "./shown_argument.ts";
 * console.assert(quotedArgument("hour") === '"hour"');
 * ```
 */
export function quotedArgument(text: string, quote = '"'): string {
  return clippedText(text, (shown) => `${quote}${shown}${quote}`);
}
