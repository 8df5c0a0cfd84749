/**
 * One step down a compression chain: the session that continues a session a
 * compression ended, as `getCompressionTip` steps (the newest child started
 * at or after the end). What `show --follow` follows a session into, and
 * what the session browser's export of its listing adds to each chain's
 * root.
 *
 * @module
 */
import type { SessionStore } from "./session_store.ts";
import type { SessionRow } from "./types.ts";

/**
 * The session that continues `session`, or `undefined` when a compression
 * did not end it, or none continues it (yet).
 *
 * @param store The store.
 * @param session The session's row.
 * @returns The continuation's row, or `undefined`.
 *
 * @example
 * ```ts
 * import { openStore } from "../open_store.ts";
 * import { compressionContinuation } from "./compression_continuation.ts";
 * await using store = await openStore(`${await Deno.makeTempDir()}/state.db`);
 * await store.createSession("a", "cli");
 * await store.endSession("a", "compression");
 * await store.createSession("b", "cli", { parentSessionId: "a" });
 * const next = await compressionContinuation(store, (await store.getSession("a"))!);
 * console.assert(next?.id === "b");
 * ```
 */
export async function compressionContinuation(
  store: SessionStore,
  session: SessionRow,
): Promise<SessionRow | undefined> {
  const end = session.ended_at;
  if (session.end_reason !== "compression" || end === null) return undefined;
  let next: SessionRow | undefined;
  for (const row of await store.getDescendants(session.id)) {
    if (row.parent_session_id !== session.id || row.started_at < end) continue;
    if (next === undefined || row.started_at > next.started_at) next = row;
  }
  return next;
}
