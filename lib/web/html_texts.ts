/**
 * The HTML transcript of a session in pieces (`export --format html`, the
 * web's HTML download): its head, then each message's `<article>` as soon
 * as it can be written, then the end, so that a session of any size is
 * written with a bounded part of it in memory.
 *
 * The transcript draws each tool call's result under the call. Results
 * come after their calls, most often at once, so a message whose calls wait
 * for their results is held, with the messages after it (their order is
 * kept), until the results came, or until what is held passes the bound
 * ({@linkcode HtmlHoldLimits}): then the held messages are written, from
 * the first, with the results come so far. Joined, the pieces are byte for
 * byte `renderSessionHtml` of the whole record, except in the cases
 * {@linkcode htmlTexts} lists.
 *
 * @module
 */
import type { MessageRow, SessionRow } from "../core/types.ts";
import type { SessionTexts } from "../render/export_texts.ts";
import { shownExport, shownMessage } from "../render/shown_export.ts";
import {
  filledMessageHtml,
  messageCountHtml,
  type MessageHtmlParts,
  messageHtmlParts,
  resultIdOf,
  resultSlotHtml,
  SESSION_HTML_END,
  sessionHtmlHead,
  storedMessageCount,
} from "./html_transcript.ts";

/** How much of a session an HTML transcript in pieces holds at most. */
export interface HtmlHoldLimits {
  /**
   * Messages held at most, waiting for a tool call's results. A result
   * comes within a few messages of its call (a handful when calls run in
   * parallel), so a thousand is never reached by a real session.
   * @default {1000}
   */
  readonly messages?: number;
  /**
   * Characters held at most: the held messages' HTML, the results they got
   * so far and the results kept for a call to come. About one chunk of an
   * export (100 messages of 100 KB tool results): memory stays a small
   * multiple of what reading the chunk takes.
   * @default {8000000}
   */
  readonly chars?: number;
  /**
   * Results kept at most for a call that comes after them (a result whose
   * call was not seen yet), the oldest forgotten first.
   * @default {100}
   */
  readonly earlyResults?: number;
}

/** An HTML transcript in pieces, and what it holds now. */
export interface HtmlTexts extends SessionTexts {
  /** The messages held now (written at the latest at the session's end). */
  readonly heldMessages: number;
  /** The characters held now: held messages, the results they got, results kept for later calls. */
  readonly heldChars: number;
}

/** A message not written yet: its HTML, or its parts and the results its calls got so far. */
interface HeldMessage {
  /** `"\n"` before each message but the session's first. */
  readonly before: string;
  /** The whole HTML, when no call of the message waits. */
  html?: string;
  /** The message's parts, while a call waits. */
  readonly parts?: MessageHtmlParts;
  /** What each slot holds so far. */
  readonly slots: string[];
  /** Slots still waiting for a result. */
  waiting: number;
  /** The characters it holds. */
  chars: number;
}

/** Where a waiting call's result goes. */
interface Slot {
  readonly message: HeldMessage;
  readonly index: number;
}

/** A positive integer limit, checked. */
function limitOf(name: string, value: number | undefined, fallback: number): number {
  const limit = value ?? fallback;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(
      `Cannot write HTML: ${name} must be a positive integer: current value is ${limit}`,
    );
  }
  return limit;
}

/**
 * The HTML transcript of a session in pieces: joined, its texts are
 * `renderSessionHtml` of the whole record, byte for byte, but for these
 * cases, which need more than the bound held (or a look ahead):
 *
 * - A call whose result has not come when the held text passes the bound
 *   (more than `messages` messages held, or more than `chars` characters)
 *   is written without it; the result is still drawn as its own message.
 * - A result that comes before its call is drawn under it when it is one of
 *   the last `earlyResults` results not drawn under a call yet, and was not
 *   forgotten to stay within `chars` (kept results are forgotten first, the
 *   oldest first, before a held message is written); otherwise the call is
 *   drawn without it.
 * - `tool_call_id`s that repeat (several results, or several calls, with
 *   one id): the whole rendering draws the session's last result of an id
 *   under every call of that id; here a call gets the last result of its
 *   id kept from before it (as above), else the first that comes after it,
 *   and a result that a waiting call got is not kept for a later call.
 * - A session whose `message_count` is not a count (text in the INTEGER
 *   column, `null`), whose "Messages" row shows the number of messages:
 *   its head is held with the messages; past the bound it is written
 *   without that row, which comes after the last message instead, in a
 *   details list of its own.
 *
 * @param limits The bound; see {@linkcode HtmlHoldLimits}.
 * @returns The session's texts, and what they hold now.
 * @throws {RangeError} When a limit is not a positive integer, naming the value.
 *
 * @example Pieces of a session, as one whole rendering
 * ```ts
 * import { htmlTexts } from "./html_texts.ts";
 * import { renderSessionHtml } from "./html_transcript.ts";
 * import type { MessageRow, SessionRow } from "../core/types.ts";
 * const session = { id: "s", source: "cli", started_at: 0, message_count: 2 } as SessionRow;
 * const call = {
 *   id: 1, role: "assistant", content: null, timestamp: 0,
 *   tool_calls: [{ id: "c", function: { name: "ls", arguments: "{}" } }],
 * } as Partial<MessageRow> as MessageRow;
 * const result = { id: 2, role: "tool", tool_call_id: "c", content: "a.txt" } as MessageRow;
 * const texts = htmlTexts();
 * const html = texts.head(session) + texts.messages([call]) + texts.messages([result]) + texts.tail();
 * console.assert(html === renderSessionHtml({ ...session, messages: [call, result] }));
 * ```
 */
export function htmlTexts(limits: HtmlHoldLimits = {}): HtmlTexts {
  const maxMessages = limitOf("messages", limits.messages, 1_000);
  const maxChars = limitOf("chars", limits.chars, 8_000_000);
  const maxEarly = limitOf("earlyResults", limits.earlyResults, 100);
  /** The session's row, while its head waits for the number of messages. */
  let pendingHead: SessionRow | undefined;
  let countAtEnd = false;
  let count = 0;
  /** The messages not written yet, from `held[first]` on. */
  let held: HeldMessage[] = [];
  let first = 0;
  let heldChars = 0;
  /** The held calls waiting for a result, by the result's id. */
  let waiting = new Map<unknown, Slot[]>();
  /** Results not drawn under a call yet, by id, oldest first: their slot's HTML. */
  let early = new Map<unknown, string>();

  /** The held message's HTML, with the results it got; its waiting calls forgotten. */
  function written(message: HeldMessage): string {
    if (message.html !== undefined) return message.before + message.html;
    const parts = message.parts!;
    parts.callIds.forEach((id, index) => {
      const slots = waiting.get(id);
      if (slots === undefined) return;
      const left = slots.filter((slot) => !(slot.message === message && slot.index === index));
      if (left.length === 0) waiting.delete(id);
      else waiting.set(id, left);
    });
    return message.before + filledMessageHtml(parts, message.slots);
  }

  /** The held messages that can be written now (all of them when `all`), as text. */
  function release(all: boolean): string {
    // The results kept for later calls go first, the oldest first, when over the bound.
    for (const [id, html] of early) {
      if (heldChars <= maxChars) break;
      early.delete(id);
      heldChars -= html.length;
    }
    const over = () => heldChars > maxChars || held.length - first > maxMessages;
    let text = "";
    if (pendingHead !== undefined) {
      if (!all && !over()) return "";
      text += sessionHtmlHead(pendingHead, all ? String(count) : undefined);
      countAtEnd = !all;
      pendingHead = undefined;
    }
    while (first < held.length && (all || held[first].waiting === 0 || over())) {
      const message = held[first];
      held[first++] = undefined as never;
      heldChars -= message.chars;
      text += written(message);
    }
    // The written messages dropped, at most as many as are left (a queue, amortized).
    if (first === held.length) {
      held = [];
      first = 0;
    } else if (first > held.length / 2) {
      held = held.slice(first);
      first = 0;
    }
    return text;
  }

  /** Takes in one message: fills the calls waiting for it, holds it. */
  function add(message: MessageRow): void {
    const before = count++ === 0 ? "" : "\n";
    const resultId = resultIdOf(message);
    if (resultId !== undefined) {
      const slotHtml = resultSlotHtml(message);
      const slots = waiting.get(resultId);
      if (slots !== undefined) {
        waiting.delete(resultId);
        for (const { message: caller, index } of slots) {
          caller.slots[index] = slotHtml;
          caller.waiting--;
          caller.chars += slotHtml.length;
          heldChars += slotHtml.length;
        }
      } else {
        // Kept for a call to come (the newest last); bounded in number here, in size by `release`.
        if (early.has(resultId)) heldChars -= early.get(resultId)!.length;
        early.delete(resultId);
        early.set(resultId, slotHtml);
        heldChars += slotHtml.length;
        for (const [id, html] of early) {
          if (early.size <= maxEarly) break;
          early.delete(id);
          heldChars -= html.length;
        }
      }
    }
    const parts = messageHtmlParts(message);
    const found = parts.callIds.map((id) => early.get(id));
    const slots = found.map((html) => html ?? "");
    const entry: HeldMessage = {
      before,
      parts,
      slots,
      waiting: found.filter((html) => html === undefined).length,
      chars: 0,
    };
    if (entry.waiting === 0) {
      entry.html = filledMessageHtml(parts, slots);
      entry.chars = entry.html.length;
    } else {
      entry.chars = [...parts.texts, ...slots].reduce((sum, text) => sum + text.length, 0);
      found.forEach((html, index) => {
        if (html !== undefined) return;
        const id = parts.callIds[index];
        const slots = waiting.get(id);
        if (slots === undefined) waiting.set(id, [{ message: entry, index }]);
        else slots.push({ message: entry, index });
      });
    }
    heldChars += entry.chars;
    held.push(entry);
  }

  return {
    get heldMessages() {
      return held.length - first;
    },
    get heldChars() {
      return heldChars;
    },
    head(row) {
      count = 0;
      held = [];
      first = 0;
      heldChars = 0;
      waiting = new Map();
      early = new Map();
      countAtEnd = false;
      // The BLOBs an export carries as bytes, shown as their text (as `renderSessionHtml` does).
      const { messages: _none, ...session } = shownExport({ ...row, messages: [] });
      if (storedMessageCount(session) !== undefined) {
        pendingHead = undefined;
        return sessionHtmlHead(session, undefined);
      }
      pendingHead = session;
      return "";
    },
    messages(chunk) {
      let text = "";
      for (const message of chunk) {
        add(shownMessage(message));
        text += release(false);
      }
      return text;
    },
    tail() {
      let text = release(true);
      if (countAtEnd) text += messageCountHtml(count);
      text += SESSION_HTML_END;
      held = [];
      first = 0;
      heldChars = 0;
      waiting = new Map();
      early = new Map();
      return text;
    },
  };
}
