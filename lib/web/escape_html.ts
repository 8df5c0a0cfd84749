/**
 * Text made safe for HTML: every markup character escaped, control
 * characters and bidirectional overrides made visible, so stored text is
 * shown and never read as markup or allowed to reorder the page.
 *
 * @module
 */

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes `&`, `<`, `>`, `"` and `'`.
 *
 * @param text Any text.
 * @returns Text that is inert inside an element or a quoted attribute.
 *
 * @example
 * ```ts
 * import { escapeHtml } from "./escape_html.ts";
 * console.assert(escapeHtml(`<a href="x">'</a>`) === "&lt;a href=&quot;x&quot;&gt;&#39;&lt;/a&gt;");
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * Control characters as their visible symbols (`␀`, `␛`), and the
 * bidirectional controls (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) as
 * `⟦U+202E⟧` labels; newlines and tabs stay.
 *
 * @param text Any text.
 * @returns The text with nothing invisible that could change how it reads.
 *
 * @example
 * ```ts
 * import { visibleText } from "./escape_html.ts";
 * console.assert(visibleText("a\u0000b\u202Ec") === "a␀b⟦U+202E⟧c");
 * ```
 */
export function visibleText(text: string): string {
  return text.replace(
    // deno-lint-ignore no-control-regex -- matching control characters is the point
    /[\u0000-\u0008\u000b-\u001f\u007f]|[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => {
      const code = c.charCodeAt(0);
      if (code < 0x20) return String.fromCodePoint(0x2400 + code);
      if (code === 0x7f) return "\u2421";
      return `⟦U+${code.toString(16).toUpperCase().padStart(4, "0")}⟧`;
    },
  );
}

/**
 * {@linkcode visibleText} then {@linkcode escapeHtml}: the one way stored text reaches HTML.
 *
 * @param text Any text.
 * @returns Safe HTML text.
 *
 * @example
 * ```ts
 * import { safeHtml } from "./escape_html.ts";
 * console.assert(safeHtml("<b>\u0000") === "&lt;b&gt;␀");
 * ```
 */
export function safeHtml(text: string): string {
  return escapeHtml(visibleText(text));
}
