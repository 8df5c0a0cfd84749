/**
 * Text decorations for terminal output (bold, colours, the search match),
 * or identity functions when colour is off. Whether colour is wanted is the
 * CLI's decision (`lib/cli/style.ts`).
 *
 * @module
 */

/** Text decorations; identity functions when colour is off. */
export interface Style {
  /** True when colour is on. */
  readonly enabled: boolean;
  /** Bold text. */
  bold(text: string): string;
  /** Dim text (secondary information). */
  dim(text: string): string;
  /** Red text (errors, deletions). */
  red(text: string): string;
  /** Green text (success). */
  green(text: string): string;
  /** Yellow text (warnings). */
  yellow(text: string): string;
  /** Cyan text (ids, roles). */
  cyan(text: string): string;
  /** Magenta text (tools). */
  magenta(text: string): string;
  /** Search match: bold and yellow. */
  highlight(text: string): string;
}

function sgr(open: number, close: number): (text: string) => string {
  return (text) => `\x1b[${open}m${text}\x1b[${close}m`;
}

/**
 * Creates the decorations.
 *
 * @param enabled Whether to colour.
 * @returns The style.
 *
 * @example
 * ```ts
 * import { createStyle } from "./style.ts";
 * console.assert(createStyle(false).bold("x") === "x");
 * console.assert(createStyle(true).bold("x") === "\x1b[1mx\x1b[22m");
 * ```
 */
export function createStyle(enabled: boolean): Style {
  const plain = (text: string) => text;
  if (!enabled) {
    return {
      enabled,
      bold: plain,
      dim: plain,
      red: plain,
      green: plain,
      yellow: plain,
      cyan: plain,
      magenta: plain,
      highlight: plain,
    };
  }
  const bold = sgr(1, 22);
  const yellow = sgr(33, 39);
  return {
    enabled,
    bold,
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow,
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
    highlight: (text) => bold(yellow(text)),
  };
}
