/**
 * Printing a transcript piece by piece: a session of 200,000 messages is a
 * transcript of tens of megabytes (hundreds with `--full`), which as one
 * string cost `show` its size again (and again as bytes on the way out),
 * and printed nothing until all of it was ready. Here each message is
 * rendered alone and the text goes out in pieces of about
 * {@linkcode TRANSCRIPT_PIECE_CHARS}, each awaited out before the next.
 *
 * @module
 */
import type { MessageRow } from "../core/types.ts";
import type { Io } from "./io.ts";

/** About how many characters go out at once (a message longer than this goes whole). */
export const TRANSCRIPT_PIECE_CHARS = 1 << 20;

/**
 * Prints the transcript of `messages` as `"\n" + render(messages)` would be
 * printed (nothing when it is empty), in pieces. `render` must give each
 * message's block ending in a line break, or `""` for a message it leaves
 * out (as `renderTranscript` with a filter does): the blocks of a list are
 * then those of its messages, one blank line between two.
 *
 * @param io Where to print.
 * @param messages The messages, in order.
 * @param render The transcript of some messages.
 * @returns Whether anything was printed.
 *
 * @example
 * ```ts ignore
 * const printed = await printTranscript(ctx.io, messages, (some) => renderTranscript(some, options));
 * if (!printed) ctx.io.stdout("\n(no messages)\n");
 * ```
 */
export async function printTranscript(
  io: Io,
  messages: readonly MessageRow[],
  render: (messages: readonly MessageRow[]) => string,
): Promise<boolean> {
  let piece: string[] = [];
  let size = 0;
  let printed = false;
  const flush = async () => {
    if (piece.length === 0) return;
    io.stdout(`\n${piece.join("\n")}`);
    printed = true;
    piece = [];
    size = 0;
    await io.drain();
  };
  for (const message of messages) {
    const block = render([message]);
    if (block === "") continue;
    piece.push(block);
    size += block.length;
    if (size >= TRANSCRIPT_PIECE_CHARS) await flush();
  }
  await flush();
  return printed;
}
