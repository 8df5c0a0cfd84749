/**
 * How many columns text takes in a terminal, and text cut or padded to a
 * width: CJK and most emoji take two columns (an approximation of
 * `wcwidth`), and so does an emoji picture of several code points (a ZWJ
 * family 👨‍👩‍👧‍👦, a flag 🇯🇵, a keycap, a skin tone), counted by grapheme
 * cluster, what a reader sees as one character. A cut never splits a
 * cluster (half a flag). Text in which no code point joins another (ASCII,
 * most CJK) is measured code point by code point, without the segmenter.
 *
 * @module
 */

/** Zero-width code points: combining marks, joiners, variation selectors. */
function isZeroWidth(cp: number): boolean {
  return (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x1f3fb && cp <= 0x1f3ff) ||
    (cp >= 0xe0100 && cp <= 0xe01ef) || cp === 0x2060 || cp === 0xfeff;
}

/**
 * The emoji below U+1F000 that terminals draw in two columns (East Asian
 * Width `W` in Unicode's table): `✅`, `❌`, `⭐`, `⚡`, `⏰`…, as
 * `[first, last]` pairs, read from hexadecimal `first-last` words.
 */
const WIDE_SYMBOLS: readonly (readonly [number, number])[] = (
  "231a-231b 2329-232a 23e9-23ec 23f0-23f0 23f3-23f3 25fd-25fe 2614-2615 2648-2653 " +
  "267f-267f 2693-2693 26a1-26a1 26aa-26ab 26bd-26be 26c4-26c5 26ce-26ce 26d4-26d4 " +
  "26ea-26ea 26f2-26f3 26f5-26f5 26fa-26fa 26fd-26fd 2705-2705 270a-270b 2728-2728 " +
  "274c-274c 274e-274e 2753-2755 2757-2757 2795-2797 27b0-27b0 27bf-27bf 2b1b-2b1c " +
  "2b50-2b50 2b55-2b55"
).split(" ").map((range) => {
  const [first, last] = range.split("-").map((hex) => parseInt(hex, 16));
  return [first, last] as const;
});

/** Whether `cp` is one of `WIDE_SYMBOLS`. */
function isWideSymbol(cp: number): boolean {
  return cp >= 0x231a && cp <= 0x2b55 &&
    WIDE_SYMBOLS.some(([first, last]) => cp >= first && cp <= last);
}

/** East Asian wide and fullwidth code points, and emoji: two columns. */
function isWide(cp: number): boolean {
  return isWideSymbol(cp) || (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) || (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    // Mahjong and playing-card emoji, squared letters and CJK, coloured
    // circles and squares, and the newer emoji (🫶, 🪐, 🫠).
    cp === 0x1f004 || cp === 0x1f0cf || cp === 0x1f18e || (cp >= 0x1f191 && cp <= 0x1f19a) ||
    (cp >= 0x1f200 && cp <= 0x1f265) || (cp >= 0x1f7e0 && cp <= 0x1f7f0) ||
    (cp >= 0x1fa70 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd);
}

/**
 * Columns one code point takes in a terminal.
 *
 * @param cp The code point.
 * @returns 0, 1 or 2.
 */
function codePointWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (isZeroWidth(cp)) return 0;
  return isWide(cp) ? 2 : 1;
}

/** ANSI colour sequences (`style.ts`), which take no columns. */
// deno-lint-ignore no-control-regex -- colour codes start with ESC on purpose
const ANSI_SGR = /\x1b\[[0-9;]*m/g;

/** Columns of `text` added code point by code point: right where none joins another. */
function codePointsWidth(text: string): number {
  let width = 0;
  for (const char of text) width += codePointWidth(char.codePointAt(0)!);
  return width;
}

/** `text` cut code point by code point to at most `width` columns, with `…` when cut. */
function codePointsCut(text: string, width: number): Cut {
  const columns = codePointsWidth(text);
  if (columns <= width) return { text, columns };
  let out = "";
  let used = 0;
  for (const char of text) {
    const w = codePointWidth(char.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return { text: `${out}…`, columns: used + 1 };
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Printable ASCII only: one column a character, no cluster to find. */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

/**
 * A code point that may join the one before or after it into a cluster:
 * marks, joiners, variation selectors, skin tones, regional indicators,
 * Hangul jamo, prepended marks, CR. Text without one is one cluster a code
 * point, measured as well code point by code point.
 */
const JOINS =
  /[\r\u200d\p{Grapheme_Extend}\p{Emoji_Modifier}\p{Mc}\p{Regional_Indicator}\u0600-\u0605\u06dd\u070f\u08e2\u0d4e\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]/u;

/**
 * A cluster drawn as one emoji picture: a pictograph with something joined
 * or added to it (ZWJ sequences, skin tones, VARIATION SELECTOR-16), a
 * keycap (`1️⃣`) or a flag (two regional indicators).
 */
const EMOJI_CLUSTER = /\p{Extended_Pictographic}|\u{FE0F}|\u{20E3}|^\p{Regional_Indicator}{2}$/u;

/**
 * Inside a cluster, what takes no column of its own: non-spacing and
 * enclosing marks (drawn on the character before them) and format
 * characters (tag characters, joiners).
 */
const NO_COLUMN = /^[\p{Mn}\p{Me}\p{Cf}]$/u;

/** Columns one grapheme cluster takes. */
function clusterColumns(cluster: string): number {
  if (cluster.length === 1 || (cluster.length === 2 && cluster.codePointAt(0)! > 0xffff)) {
    return codePointsWidth(cluster);
  }
  if (EMOJI_CLUSTER.test(cluster)) return 2;
  let columns = 0;
  for (const char of cluster) columns += NO_COLUMN.test(char) ? 0 : codePointsWidth(char);
  return columns;
}

/** Whether `text` can be measured code point by code point. */
function noClusters(text: string): boolean {
  return PLAIN_ASCII.test(text) || !JOINS.test(text);
}

/**
 * Columns a string takes in a terminal, one grapheme cluster at a time;
 * colour sequences count for nothing.
 *
 * @param text The text.
 * @returns The width in columns.
 *
 * @example
 * ```ts
 * import { displayWidth } from "./width.ts";
 * console.assert(displayWidth("ab") === 2 && displayWidth("记忆") === 4);
 * console.assert(displayWidth("👨‍👩‍👧‍👦") === 2 && displayWidth("🇯🇵 ok") === 5);
 * ```
 */
export function displayWidth(text: string): number {
  if (PLAIN_ASCII.test(text)) return text.length;
  const bare = text.replace(ANSI_SGR, "");
  if (!JOINS.test(bare)) return codePointsWidth(bare);
  let columns = 0;
  for (const { segment } of graphemes.segment(bare)) columns += clusterColumns(segment);
  return columns;
}

/** Text cut to a width, and the columns it takes. */
interface Cut {
  text: string;
  columns: number;
}

/**
 * `text` cut to at most `width` columns, ending with `…` when it was wider,
 * never inside a grapheme cluster; one pass, which stops where the cut falls.
 */
function cutByClusters(text: string, width: number): Cut {
  if (noClusters(text)) return codePointsCut(text, width);
  let kept = 0; // the UTF-16 length of the clusters that fit before a `…`
  let keptColumns = 0;
  let columns = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    const next = columns + clusterColumns(segment);
    if (next <= width - 1) {
      kept = index + segment.length;
      keptColumns = next;
    }
    columns = next;
    if (columns > width) break; // the clusters kept are known
  }
  if (columns <= width) return { text, columns };
  return { text: `${text.slice(0, kept)}…`, columns: keptColumns + 1 };
}

/**
 * Cuts text to at most `width` columns, ending with `…` when it was cut; a
 * cut never splits a grapheme cluster (half a flag, a family without its
 * last member).
 *
 * @param text The text (no colour sequences).
 * @param width The most columns.
 * @returns The text, whole or cut.
 *
 * @example
 * ```ts
 * import { truncate } from "./width.ts";
 * console.assert(truncate("abcdef", 4) === "abc…");
 * console.assert(truncate("🇯🇵🇯🇵🇯🇵", 4) === "🇯🇵…");
 * ```
 */
export function truncate(text: string, width: number): string {
  return cutByClusters(text, width).text;
}

/**
 * Text fitted to `width` columns: cut as {@linkcode truncate} cuts, then
 * padded with spaces.
 *
 * @param text The text (no colour sequences).
 * @param width The columns to fill.
 * @returns The text, whole or cut, padded to `width` (wider only when
 *   `width` is below 1).
 *
 * @example
 * ```ts
 * import { fitToWidth } from "./width.ts";
 * console.assert(fitToWidth("🇯🇵🇯🇵🇯🇵", 4) === "🇯🇵… ");
 * console.assert(fitToWidth("🏳️‍🌈", 4) === "🏳️‍🌈  ");
 * ```
 */
export function fitToWidth(text: string, width: number): string {
  const cut = cutByClusters(text, width);
  return cut.text + " ".repeat(Math.max(0, width - cut.columns));
}

/**
 * Pads text with spaces to `width` columns (never cuts).
 *
 * @param text The text.
 * @param width The columns to fill.
 * @returns The padded text.
 *
 * @example
 * ```ts
 * import { padEnd } from "./width.ts";
 * console.assert(padEnd("记", 4) === "记  ");
 * ```
 */
export function padEnd(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}
