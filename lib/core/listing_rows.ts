/**
 * A session's entry in a listing, for every engine: its preview, and what
 * a compression chain's tip lends the entry of its root.
 *
 * @module
 */
import { codePointLength, codePointSlice, pythonStrip } from "./python_text.ts";
import type { RichSessionRow } from "./types.ts";

/** The longest preview, in code points, before the `...`. */
const PREVIEW_LENGTH = 60;

/**
 * A listing preview from the start of the first user message (the engine
 * has cut it to 63 characters, newlines as spaces, as Python's SQL does):
 * trimmed, then 60 code points and `...` when longer.
 *
 * @param text The start of the first user message.
 * @returns The preview; `""` when nothing is left.
 *
 * @example
 * ```ts
 * import { previewText } from "./listing_rows.ts";
 * console.assert(previewText("  hello ") === "hello");
 * console.assert(previewText("x".repeat(61)) === "x".repeat(60) + "...");
 * ```
 */
export function previewText(text: string): string {
  const raw = pythonStrip(text);
  if (raw === "") return "";
  return codePointSlice(raw, PREVIEW_LENGTH) + (codePointLength(raw) > PREVIEW_LENGTH ? "..." : "");
}

/** The keys a compression tip lends to its chain's entry (Python's list). */
const TIP_KEYS = [
  "id",
  "ended_at",
  "end_reason",
  "message_count",
  "tool_call_count",
  "title",
  "last_active",
  "preview",
  "model",
  "system_prompt",
] as const;

/**
 * The listing entry of a compression root that shows its chain's tip: the
 * root's row with the tip's id, end, counts, title, activity, preview, model
 * and prompt, and `_lineage_root_id` naming the root.
 *
 * @param root The root's listing row.
 * @param tip The tip's listing row.
 * @returns A new row; neither argument changes.
 */
export function withTipLent(root: RichSessionRow, tip: RichSessionRow): RichSessionRow {
  const merged: RichSessionRow = { ...root };
  for (const key of TIP_KEYS) {
    if (key in tip) (merged as Record<string, unknown>)[key] = tip[key];
  }
  merged._lineage_root_id = root.id;
  return merged;
}
