/**
 * The rule both engines share when replaying a conversation with its
 * ancestors: a compression continuation re-records the user prompt it was
 * asked, and the replay shows it once.
 *
 * @module
 */
import { isFalsyLikePython } from "./content.ts";
import type { ConversationMessage } from "./types.ts";

/**
 * True when `message` is a user prompt already in `emitted` since the last
 * assistant turn that said or did something: the prompt a compression
 * continuation re-recorded at its start.
 *
 * @param emitted The conversation so far.
 * @param message The next message.
 * @returns True when it repeats the last user prompt with no assistant turn between.
 */
export function isReplayedPrompt(
  emitted: readonly ConversationMessage[],
  message: ConversationMessage,
): boolean {
  if (message.role !== "user") return false;
  const content = message.content;
  if (typeof content !== "string" || content === "") return false;
  for (let i = emitted.length - 1; i >= 0; i--) {
    const previous = emitted[i];
    if (previous.role === "user" && previous.content === content) return true;
    if (
      previous.role === "assistant" &&
      !(isFalsyLikePython(previous.content) && isFalsyLikePython(previous.tool_calls))
    ) {
      return false;
    }
  }
  return false;
}
