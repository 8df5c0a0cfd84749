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
  if (!endedByCompression(session)) return undefined;
  return continuationAmong(session, await store.getDescendants(session.id));
}

/**
 * {@linkcode compressionContinuation} among rows already read: the
 * descendants of `session`, or of a session above it in its chain (a walk
 * down a chain reads them once, not once a step).
 *
 * @param session The session's row.
 * @param rows Rows holding its children.
 * @returns The continuation's row, or `undefined`.
 *
 * @example
 * ```ts
 * import { continuationAmong } from "./compression_continuation.ts";
 * import type { SessionRow } from "./types.ts";
 * const a = { id: "a", end_reason: "compression", ended_at: 10 } as SessionRow;
 * const b = { id: "b", parent_session_id: "a", started_at: 11 } as SessionRow;
 * console.assert(continuationAmong(a, [a, b])?.id === "b");
 * ```
 */
export function continuationAmong(
  session: SessionRow,
  rows: readonly SessionRow[],
): SessionRow | undefined {
  if (!endedByCompression(session)) return undefined;
  let next: SessionRow | undefined;
  for (const row of rows) {
    if (row.parent_session_id !== session.id || row.started_at < session.ended_at!) continue;
    if (next === undefined || row.started_at > next.started_at) next = row;
  }
  return next;
}

/** Whether a compression ended `session` (its end known). */
function endedByCompression(session: SessionRow): boolean {
  return session.end_reason === "compression" && session.ended_at !== null;
}
