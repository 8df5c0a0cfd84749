/**
 * Finds the session a user means, in this order:
 *
 * 1. an exact id;
 * 2. an id prefix that exactly one session has (`\`, `%` and `_` are
 *    literal); a prefix several sessions share is an error that lists them;
 * 3. an exact title (case-sensitive);
 * 4. the newest-started session titled `"<title> #N"` (the numbered
 *    continuations of a lineage; `<title>` compared ASCII
 *    case-insensitively, anything after `#`).
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import { formatCount } from "../render/format.ts";
import { CommandError } from "./usage_error.ts";

/** How many sessions an ambiguous prefix error lists. */
const LISTED = 10;

/**
 * Resolves what the user typed to a session id.
 *
 * @param store The open store.
 * @param text An id, a unique id prefix, or a title.
 * @returns The session id.
 * @throws {CommandError} When nothing matches ("not found"), or when the
 *   text is an id prefix of several sessions ("ambiguous", with up to ten
 *   of them).
 *
 * @example
 * ```ts ignore
 * const id = await resolveSession(store, "2026042");
 * ```
 */
export async function resolveSession(store: SessionStore, text: string): Promise<string> {
  const id = await store.resolveSessionId(text) ?? (await store.getSessionByTitle(text))?.id ??
    await store.resolveSessionByTitle(text);
  if (id !== undefined) return id;
  const matches = await store.sessionIdsWithPrefix(text, { limit: LISTED });
  if (matches.count > 1) {
    const more = matches.count > matches.ids.length
      ? `\n  … and ${formatCount(matches.count - matches.ids.length) + " more"}`
      : "";
    throw new CommandError(
      `Session '${text}' is ambiguous: matches ${matches.count} sessions ` +
        `(give more of the id):\n  ${matches.ids.join("\n  ")}${more}`,
    );
  }
  throw new CommandError(
    `Session '${text}' not found (give an id, a unique id prefix or a title)`,
  );
}
