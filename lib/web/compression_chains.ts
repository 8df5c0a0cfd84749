/**
 * The export of the session browser's listing holds each compression chain
 * whole: the listing shows a chain as one row (its tip, under its root's
 * start), so that the export of a day, or of "Has children", held the
 * chain's root but not the sessions that continue it, started later or
 * without a child of their own, whose row the reader saw.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { SessionRow } from "../core/types.ts";
import type { ExportPiece } from "../core/export_pieces.ts";
import { continuationAmong } from "../core/compression_continuation.ts";

/**
 * `pieces`, then those of each session that continues a compressed one of
 * them, down to the chain's tip, that `pieces` left out (once each).
 *
 * @param store The store.
 * @param pieces The pieces of the listing's filters.
 * @param more The pieces of one session, by id.
 * @returns The pieces.
 */
export async function* withCompressionChains(
  store: SessionStore,
  pieces: AsyncIterableIterator<ExportPiece>,
  more: (id: string) => AsyncIterableIterator<ExportPiece>,
): AsyncGenerator<ExportPiece> {
  const exported = new Set<string>();
  const compressed: SessionRow[] = [];
  for await (const piece of pieces) {
    if ("session" in piece) {
      exported.add(piece.session.id);
      if (piece.session.end_reason === "compression") compressed.push(piece.session);
    }
    yield piece;
  }
  for (const session of compressed) {
    // The chain's sessions are among its descendants: read once for the whole walk.
    const family = await store.getDescendants(session.id);
    let next = continuationAmong(session, family);
    // A continuation exported already has its own walk (it is in `compressed` when compressed).
    while (next !== undefined && !exported.has(next.id)) {
      exported.add(next.id);
      yield* more(next.id);
      next = continuationAmong(next, family);
    }
  }
}
