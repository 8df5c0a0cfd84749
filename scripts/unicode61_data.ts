/**
 * Writes `lib/core/search/_unicode61_data.ts`: what SQLite's FTS5 tokenizers
 * do with each code point, measured on the SQLite of the runtime that runs
 * this script (not read from Unicode's tables: FTS5 has its own, of Unicode
 * 6.1), for every code point from U+0001 to U+10FFFF but the surrogates:
 *
 * - which are token characters of `unicode61` (`remove_diacritics 1`, as
 *   the file's `messages_fts` is made: `ftsTableSql`);
 * - what each of them folds to there (case folded, a diacritic removed);
 * - what each code point folds to under `trigram` (case folded, diacritics
 *   kept), token character of `unicode61` or not.
 *
 * Each code point `c` is written as `q` + `c` + `q` in a `unicode61` row
 * (one token `q…q` when `c` is a token character, the middle its fold; two
 * tokens `q` when it separates), and in a run of code points in a `trigram`
 * row (each trigram begins with the fold of its first character); the rows
 * are read back, in order, through `fts5vocab` tables of type `instance`.
 *
 * Usage: `deno run -A scripts/unicode61_data.ts` (a few seconds).
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadDriver, runtimeName } from "../lib/sqlite/driver/load.ts";
import { ftsTableSql } from "../lib/sqlite/schema/schema_sql.ts";

const OUT = fileURLToPath(new URL("../lib/core/search/_unicode61_data.ts", import.meta.url));
const LAST = 0x10ffff;
/** Code points per row. */
const BATCH = 8192;

/** Every code point measured: U+0001 to U+10FFFF without the surrogates. */
function codePoints(): number[] {
  const all: number[] = [];
  for (let cp = 1; cp <= LAST; cp++) if (cp < 0xd800 || cp > 0xdfff) all.push(cp);
  return all;
}

/** What the two tokenizers do with each code point. */
interface Measured {
  readonly version: string;
  /** Token characters of unicode61, ascending. */
  readonly tokens: number[];
  /** unicode61's fold of each token character that changes (0: removed). */
  readonly wordFolds: Map<number, number>;
  /** trigram's fold of each code point that changes. */
  readonly trigramFolds: Map<number, number>;
}

async function measure(): Promise<Measured> {
  const open = await loadDriver();
  using db = open(":memory:");
  const version = String(db.prepare("SELECT sqlite_version() AS v").get()!.v);
  db.exec(ftsTableSql("messages_fts"));
  db.exec(ftsTableSql("messages_fts_trigram"));
  db.exec("CREATE VIRTUAL TABLE words_vocab USING fts5vocab(messages_fts, instance)");
  db.exec("CREATE VIRTUAL TABLE grams_vocab USING fts5vocab(messages_fts_trigram, instance)");
  const all = codePoints();
  const insertWords = db.prepare("INSERT INTO messages_fts (rowid, content) VALUES (?, ?)");
  const insertGrams = db.prepare("INSERT INTO messages_fts_trigram (rowid, content) VALUES (?, ?)");
  db.exec("BEGIN");
  for (let at = 0, row = 1; at < all.length; at += BATCH, row++) {
    const batch = all.slice(at, at + BATCH);
    insertWords.run(row, batch.map((cp) => `q${String.fromCodePoint(cp)}q`).join(" "));
    // Two code points more: the last ones of the batch begin trigrams too.
    const run = all.slice(at, at + BATCH + 2);
    if (run.length < BATCH + 2) run.push(0x61, 0x61);
    insertGrams.run(row, String.fromCodePoint(...run));
  }
  db.exec("COMMIT");

  const tokens: number[] = [];
  const wordFolds = new Map<number, number>();
  const words = db.prepare(
    "SELECT doc, group_concat(term, ' ' ORDER BY offset) AS terms FROM words_vocab GROUP BY doc ORDER BY doc",
  ).all();
  for (const { doc, terms } of words) {
    const batch = all.slice((Number(doc) - 1) * BATCH, Number(doc) * BATCH);
    const list = String(terms).split(" ");
    let j = 0;
    for (const cp of batch) {
      const term = list[j];
      if (term === "q") {
        if (list[j + 1] !== "q") throw new Error(`Cannot read U+${hex(cp)}: ${list[j + 1]}`);
        j += 2;
        continue;
      }
      if (term.length < 2 || term[0] !== "q" || term[term.length - 1] !== "q") {
        throw new Error(`Cannot read U+${hex(cp)}: token is ${JSON.stringify(term)}`);
      }
      const middle = [...term.slice(1, -1)].map((ch) => ch.codePointAt(0)!);
      if (middle.length > 1) throw new Error(`Cannot read U+${hex(cp)}: folds to ${middle}`);
      tokens.push(cp);
      const folded = middle.length === 0 ? 0 : middle[0];
      if (folded !== cp) wordFolds.set(cp, folded);
      j++;
    }
    if (j !== list.length) {
      throw new Error(`Cannot read row ${doc}: ${list.length - j} tokens left`);
    }
  }
  if (words.length !== Math.ceil(all.length / BATCH)) throw new Error("Cannot read every row");

  const trigramFolds = new Map<number, number>();
  const [odd] = db.prepare("SELECT count(*) AS n FROM grams_vocab WHERE length(term) <> 3").all();
  if (Number(odd.n) !== 0) throw new Error(`Cannot read trigrams: ${odd.n} not of 3 characters`);
  const grams = db.prepare(
    "SELECT doc, group_concat(substr(term, 1, 1), '' ORDER BY offset) AS firsts FROM grams_vocab GROUP BY doc ORDER BY doc",
  ).all();
  for (const { doc, firsts } of grams) {
    const batch = all.slice((Number(doc) - 1) * BATCH, Number(doc) * BATCH);
    const folded = [...String(firsts)].map((ch) => ch.codePointAt(0)!);
    if (folded.length !== batch.length) throw new Error(`Cannot read trigram row ${doc}`);
    batch.forEach((cp, i) => {
      if (folded[i] !== cp) trigramFolds.set(cp, folded[i]);
    });
  }
  if (grams.length !== Math.ceil(all.length / BATCH)) throw new Error("Cannot read every row");
  return { version, tokens, wordFolds, trigramFolds };
}

function hex(cp: number): string {
  return cp.toString(16).toUpperCase().padStart(4, "0");
}

/** Ranges of a sorted list of code points, as base-36 `gap+length` pairs (gap from the last end). */
function encodeRanges(points: readonly number[]): string[] {
  const out: string[] = [];
  let end = 0;
  for (let i = 0; i < points.length;) {
    let j = i;
    while (j + 1 < points.length && points[j + 1] === points[j] + 1) j++;
    out.push(`${(points[i] - end).toString(36)}+${(j - i + 1).toString(36)}`);
    end = points[j] + 1;
    i = j + 1;
  }
  return out;
}

/**
 * A fold as runs: `gap:count:stride` then `+delta`/`-delta` (each code point
 * folds to itself plus delta) or `=target` (each folds to target; 0 is
 * removed). The gap is from the previous run's first code point; numbers in
 * base 36.
 */
function encodeFolds(folds: ReadonlyMap<number, number>): string[] {
  const pairs = [...folds].sort((a, b) => a[0] - b[0]);
  const out: string[] = [];
  let previous = 0;
  for (let i = 0; i < pairs.length;) {
    const [start, target] = pairs[i];
    // The longest run from here of each kind, for each stride the next pair offers.
    let best = { count: 1, stride: 1, constant: false };
    for (let k = i + 1; k < Math.min(pairs.length, i + 3); k++) {
      const stride = pairs[k][0] - start;
      for (const constant of [false, true]) {
        let count = 1;
        while (i + count < pairs.length) {
          const [src, dst] = pairs[i + count];
          if (src !== start + count * stride) break;
          if (constant ? dst !== target : dst - src !== target - start) break;
          count++;
        }
        if (count > best.count) best = { count, stride, constant };
      }
    }
    const delta = target - start;
    const value = best.constant || (best.count === 1 && target === 0)
      ? `=${target.toString(36)}`
      : `${delta < 0 ? "-" : "+"}${Math.abs(delta).toString(36)}`;
    const count = best.count === 1 ? "" : `:${best.count.toString(36)}:${best.stride.toString(36)}`;
    out.push(`${(start - previous).toString(36)}${count}${value}`);
    previous = start;
    i += best.count;
  }
  return out;
}

/** Lines of about 100 characters of whitespace-separated items, for a template literal. */
function lines(items: readonly string[]): string {
  const out: string[] = [];
  let line = "";
  for (const item of items) {
    if (line.length + item.length + 1 > 96) {
      out.push(line);
      line = "";
    }
    line += line === "" ? item : ` ${item}`;
  }
  if (line !== "") out.push(line);
  return out.join("\n");
}

function check(measured: Measured): void {
  // Each fold keeps a character's UTF-16 length (the code reads folded text at the offsets of
  // the text), unless it removes the character.
  for (const folds of [measured.wordFolds, measured.trigramFolds]) {
    for (const [src, dst] of folds) {
      if (dst !== 0 && (src > 0xffff) !== (dst > 0xffff)) {
        throw new Error(`Cannot encode U+${hex(src)} → U+${hex(dst)}: the length changes`);
      }
    }
  }
  // ASCII as the fast paths read it: letters and digits, lower-cased.
  for (let cp = 1; cp < 0x80; cp++) {
    const ch = String.fromCodePoint(cp);
    const token = /[A-Za-z0-9]/.test(ch);
    if (measured.tokens.includes(cp) !== token) throw new Error(`Unexpected U+${hex(cp)}`);
    const lower = ch.toLowerCase().codePointAt(0)!;
    const folded = measured.trigramFolds.get(cp) ?? cp;
    if (folded !== lower || (token && (measured.wordFolds.get(cp) ?? cp) !== lower)) {
      throw new Error(`Unexpected fold of U+${hex(cp)}`);
    }
  }
}

const measured = await measure();
check(measured);
// unicode61's folds where they differ from trigram's: the diacritics removed.
const wordOnly = new Map<number, number>();
for (const [cp, folded] of measured.wordFolds) {
  if ((measured.trigramFolds.get(cp) ?? cp) !== folded) wordOnly.set(cp, folded);
}
// And a token character trigram folds that unicode61 keeps as it is (none in SQLite 3.53).
const tokens = new Set(measured.tokens);
for (const cp of measured.trigramFolds.keys()) {
  if (tokens.has(cp) && !measured.wordFolds.has(cp)) wordOnly.set(cp, cp);
}

const source =
  `// Generated by scripts/unicode61_data.ts from SQLite ${measured.version} (${runtimeName()}): do not edit.
// Run \`deno run -A scripts/unicode61_data.ts\` to measure it again.
/**
 * What SQLite's FTS5 tokenizers do with each code point, measured on SQLite
 * ${measured.version} (its tables are of Unicode 6.1), decoded by \`fts5_text.ts\`.
 *
 * @module
 */

/**
 * The token characters of \`unicode61\` (${measured.tokens.length} code points): base-36
 * \`gap+length\` ranges, each gap from the end of the range before.
 */
export const WORD_CHARACTERS = \`
${lines(encodeRanges(measured.tokens))}
\`;

/**
 * The fold of the \`trigram\` tokenizer (case folding, diacritics kept) of
 * every code point it changes (${measured.trigramFolds.size}): runs \`gap:count:stride\` (\`gap\`
 * alone for one code point) then \`+delta\`, \`-delta\` or \`=target\`, in base
 * 36, each gap from the first code point of the run before.
 */
export const TRIGRAM_FOLDS = \`
${lines(encodeFolds(measured.trigramFolds))}
\`;

/**
 * Where \`unicode61\` (\`remove_diacritics 1\`) folds a token character
 * otherwise than \`trigram\` (${wordOnly.size}): its diacritic removed, \`=0\` when
 * nothing is left. Runs as in {@linkcode TRIGRAM_FOLDS}.
 */
export const WORD_FOLDS = \`
${lines(encodeFolds(wordOnly))}
\`;
`;
writeFileSync(OUT, source);
// deno-lint-ignore no-console -- a script's report
console.log(
  `SQLite ${measured.version}: ${measured.tokens.length} token characters, ` +
    `${measured.trigramFolds.size} trigram folds, ${wordOnly.size} word folds besides; ` +
    `${source.length} bytes written to ${OUT}`,
);
