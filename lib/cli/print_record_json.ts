/**
 * `show --json` of a long session, piece by piece: the document of 200,000
 * messages is over 100 MB of text, which as one string (and again as bytes
 * on the way out) doubled what `show` held. Here the session's fields and
 * each message are written as `printJson` writes the whole document (two
 * spaces of indent), the same text byte for byte, in pieces of about
 * {@linkcode JSON_PIECE_CHARS}, each awaited out before the next.
 *
 * @module
 */
import { jsonText } from "../render/json_line.ts";
import type { Io } from "./io.ts";
import { printJson } from "./json.ts";

/** About how many characters go out at once (a longer message goes whole). */
export const JSON_PIECE_CHARS = 1 << 20;

/**
 * Prints `record` (a session with its `messages` last) as `printJson`
 * would, the messages a few at a time. A record whose `messages` is not its
 * last key, or is empty, is printed by `printJson` itself.
 *
 * @param io Where to print.
 * @param record The session and its messages (the shape of one export line).
 *
 * @example
 * ```ts ignore
 * await printRecordJson(ctx.io, await store.exportSession(id));
 * ```
 */
export async function printRecordJson(
  io: Io,
  record: { readonly messages: readonly unknown[] },
): Promise<void> {
  const { messages, ...fields } = record;
  if (Object.keys(record).at(-1) !== "messages" || messages.length === 0) {
    printJson(io, record);
    return;
  }
  // The document with no message ends in `"messages": []\n}`: they go between the brackets.
  const empty = jsonText({ ...fields, messages: [] }, 2);
  const open = empty.lastIndexOf("[]");
  let piece = `${empty.slice(0, open)}[\n`;
  for (let i = 0; i < messages.length; i++) {
    // Two levels down: each line four spaces further in (JSON strings hold no line break).
    piece += `    ${jsonText(messages[i], 2).replaceAll("\n", "\n    ")}`;
    piece += i < messages.length - 1 ? ",\n" : "\n";
    if (piece.length >= JSON_PIECE_CHARS) {
      io.stdout(piece);
      piece = "";
      await io.drain();
    }
  }
  io.stdout(`${piece}  ${empty.slice(open + 1)}\n`);
}
