/**
 * Files for searches of long tool results, built in half the time: the
 * trigram index's triggers are dropped before the long texts are written, so
 * only the words index is filled. A search of ASCII words and prefixes reads
 * the words index alone (the trigram index is for CJK text), and a file
 * without those triggers is one the library knows: it answers a plan that
 * needs the trigram index by substring matching (`missing_index.ts`).
 *
 * @module
 */
import { rawOpen } from "../_helpers.ts";

/**
 * Drops the trigram index's triggers of the database at `path`: messages
 * written after are left out of that index.
 *
 * @param path A v11 or later file, closed.
 */
export async function dropTrigramTriggers(path: string): Promise<void> {
  using raw = await rawOpen(path);
  for (const event of ["insert", "delete", "update"]) {
    raw.exec(`DROP TRIGGER messages_fts_trigram_${event}`);
  }
}
