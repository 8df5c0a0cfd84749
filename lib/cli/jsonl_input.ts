/**
 * The lines of a JSON Lines input for `import`: a file (gzip-compressed when
 * its name ends in `.gz`, read with `node:zlib`) or standard input, and the
 * check that it is JSON Lines at all, so that a SQLite file or a compressed
 * stream gets one clear error instead of a report per line of binary.
 *
 * @module
 */
import { createReadStream } from "node:fs";
import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { Io } from "./io.ts";
import { CommandError } from "./usage_error.ts";
import { printableArgument } from "./shown_argument.ts";

/** How the first line of a file that is not JSON Lines starts, and what it is. */
const SIGNATURES: readonly (readonly [readonly string[], string])[] = [
  [["SQLite format 3\u0000"], "a SQLite database (give it with --db, or export it first)"],
  [
    ["\u001f\u008b", "\u001f\ufffd"],
    "gzip-compressed (name it FILE.gz, or pipe it through gunzip)",
  ],
  [["PK\u0003\u0004"], "a zip archive (unzip it first)"],
  [["BZh"], "bzip2-compressed (pipe it through bunzip2)"],
  [["\ufffd7zXZ", "\u00fd7zXZ"], "xz-compressed (pipe it through unxz)"],
];

/**
 * Lines of input, from a file (decompressed when it ends in `.gz`) or from
 * standard input (`-`), each source with the same limit on a line's length.
 *
 * @param io The process streams (standard input).
 * @param source A path, or `-`.
 * @returns The lines, without their line ends; reading fails with a
 *   {@linkcode CommandError} at a line longer than {@linkcode MAX_LINE_LENGTH}.
 */
export function inputLines(io: Io, source: string): AsyncIterable<string> {
  if (source === "-") return limitedLines(io.stdin(), source);
  const file = createReadStream(source);
  if (!/\.gz$/i.test(source)) return limitedLines(file, source);
  const gunzip = createGunzip();
  // A damaged stream fails the line reader rather than the process.
  file.on("error", (error) => gunzip.destroy(error));
  return limitedLines(file.pipe(gunzip), source);
}

/**
 * A line of the input that is not valid UTF-8 (a file in Latin-1 or
 * another encoding): decoding it would put U+FFFD in place of its bytes,
 * silently. `text` is that decoding, for the check of a first line that
 * shows binary data.
 */
export class InvalidTextLineError extends Error {
  /** The line's number, from 1. */
  readonly line: number;
  /** The line with each byte that is not UTF-8 read as U+FFFD. */
  readonly text: string;
  /**
   * @param line The line's number.
   * @param text Its decoding with U+FFFD.
   */
  constructor(line: number, text: string) {
    super(`line ${line} is not valid UTF-8 text`);
    this.name = "InvalidTextLineError";
    this.line = line;
    this.text = text;
  }
}

/** A line's bytes as text; `undefined` when they are not valid UTF-8. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The lines of a byte stream, ended by `\n`, `\r\n` or `\r` only: not by
 * U+2028, U+2029 or U+0085, which JSON writes raw inside a string (as
 * `export` and Python's `ensure_ascii=False` do) and which `node:readline`
 * takes for line ends. A last line without its end is a line; an empty
 * one is none. Each line is decoded as UTF-8 whole (those bytes are never
 * part of a longer UTF-8 sequence, so the line ends are found in the
 * bytes); one that is not valid UTF-8 fails the reading with an
 * {@linkcode InvalidTextLineError}. A line longer than `limit` bytes fails
 * it with a {@linkcode CommandError} naming its number, before it is held
 * whole.
 */
async function* limitedLines(
  stream: Readable,
  source: string,
  limit = MAX_LINE_LENGTH,
): AsyncGenerator<string> {
  // The iteration below fails with a stream's error; Bun also emits it after the
  // iterator has stopped listening, which would end the process.
  stream.on("error", () => {});
  let open: Uint8Array[] = [];
  let openLength = 0;
  let number = 1;
  let endedOnCr = false;
  const lineOf = (parts: Uint8Array[]): string => {
    const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new InvalidTextLineError(number, lenientUtf8.decode(bytes));
    }
  };
  for await (const piece of stream as AsyncIterable<Uint8Array | string>) {
    const chunk = typeof piece === "string" ? Buffer.from(piece) : piece;
    // The `\n` of a `\r\n` that two chunks split ends no second line.
    let start = endedOnCr && chunk[0] === LF ? 1 : 0;
    if (chunk.length > 0) endedOnCr = chunk[chunk.length - 1] === CR;
    for (let at = start; at < chunk.length; at++) {
      const byte = chunk[at];
      if (byte !== LF && byte !== CR) continue;
      open.push(chunk.subarray(start, at));
      // `\r\n`, `\n` or `\r`, as Python's `for line in file` reads them.
      if (byte === CR && chunk[at + 1] === LF) at++;
      start = at + 1;
      const line = lineOf(open);
      open = [];
      openLength = 0;
      number++;
      yield line;
    }
    if (start < chunk.length) {
      open.push(chunk.subarray(start));
      openLength += chunk.length - start;
      if (openLength > limit) {
        throw new CommandError(
          `Cannot import ${inputName(source)}: line ${number} is longer than ${
            limit / 1024 / 1024
          } MiB (it is not JSON Lines)`,
        );
      }
    }
  }
  if (openLength > 0) {
    const last = lineOf(open);
    if (last !== "") yield last;
  }
}

/** The bytes of the line ends. */
const LF = 0x0a;
const CR = 0x0d;

/** How messages name an input: a file's printable name, or "standard input" for `-`. */
function inputName(source: string): string {
  return source === "-" ? "standard input" : printableArgument(source);
}

/**
 * The longest line `import` reads, in bytes: well below the
 * longest string JavaScript can hold (2^29 - 24 in V8), which a line reader
 * fed `/dev/zero` or a binary file without a line end would pass, failing
 * the whole process with "Invalid string length".
 */
export const MAX_LINE_LENGTH = 256 * 1024 * 1024;

/**
 * Refuses input whose first line shows it is not JSON Lines: a SQLite file,
 * a compressed or archived stream, or binary data (a U+0000 or undecodable
 * bytes before any JSON).
 *
 * @param line The first non-empty line.
 * @param source The input's name, for the message.
 * @throws {CommandError} When the input is not JSON Lines.
 *
 * @example
 * ```ts
 * import { checkJsonLines } from "./jsonl_input.ts";
 * checkJsonLines('{"id": "s1"}', "backup.jsonl");
 * let refused = false;
 * try {
 *   checkJsonLines("SQLite format 3\u0000…", "state.db");
 * } catch {
 *   refused = true;
 * }
 * console.assert(refused);
 * ```
 */
export function checkJsonLines(line: string, source: string): void {
  const name = inputName(source);
  for (const [starts, what] of SIGNATURES) {
    if (starts.some((start) => line.startsWith(start))) {
      throw new CommandError(`Cannot import ${name}: it is not JSON Lines but ${what}`);
    }
  }
  const head = line.slice(0, 256);
  if (!line.trimStart().startsWith("{") && (head.includes("\u0000") || head.includes("\ufffd"))) {
    throw new CommandError(`Cannot import ${name}: it is not JSON Lines (binary data on line 1)`);
  }
  const text = textFormat(line.trim());
  if (text !== undefined) {
    throw new CommandError(`Cannot import ${name}: it is not JSON Lines but ${text}`);
  }
}

/**
 * What a text input that is not JSON Lines is, by its first line: one of the
 * other outputs of `hermes-state` (an export in Markdown or HTML, a `--json`
 * document), which gave a report per line, 20 of them, then a stop.
 */
function textFormat(line: string): string | undefined {
  const only = "import reads JSON Lines only: export to a .jsonl file, or with --format jsonl";
  if (/^<(?:!doctype html|html)\b/i.test(line)) return `an HTML page (${only})`;
  if (line.startsWith("# ")) return `Markdown (${only})`;
  if (line === "{" || line.startsWith("[")) {
    return "a JSON document, as --json prints it (import reads JSON Lines, one session a line: " +
      "export to a .jsonl file, with --session-id ID for one session)";
  }
  return undefined;
}

/**
 * Whether an input's read failure is a gzip stream that is damaged or not
 * gzip at all (`node:zlib`'s error codes).
 *
 * @param error What reading threw.
 * @returns `true` for a decompression failure.
 */
export function isGzipError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("Z_");
}
