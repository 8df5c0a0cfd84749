/**
 * Asking before a destructive step: the question goes to standard error,
 * the answer comes from standard input; only "y" or "yes" goes ahead, and
 * the end of input means no.
 *
 * @module
 */
import type { Io } from "./io.ts";

/**
 * Asks a yes/no question.
 *
 * @param io The streams.
 * @param question The question, ending with `[y/N] `.
 * @returns True only for `y` or `yes` (any case, spaces ignored).
 *
 * @example
 * ```ts ignore
 * if (!(await confirm(io, "Delete it? [y/N] "))) return 1;
 * ```
 */
export async function confirm(io: Io, question: string): Promise<boolean> {
  io.stderr(question);
  const answer = await io.readLine();
  if (answer === null) {
    io.stderr("\n");
    return false;
  }
  return ["y", "yes"].includes(answer.trim().toLowerCase());
}
