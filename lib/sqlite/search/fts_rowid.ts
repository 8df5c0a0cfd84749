/**
 * A bound on an FTS5 table's rowid, as a statement parameter.
 *
 * FTS5 narrows its reading to a rowid bound only when the value is an
 * INTEGER; `node:sqlite` (Deno, Node) binds every JS number as a REAL, and
 * FTS5 then reads its index from the start, leaving SQLite to test each
 * row against the bound (Bun binds whole numbers as INTEGER). Measured at
 * 1,000,000 messages, the first 21 matches of "docker" below an id in the
 * middle: 8.8 ms with the number bound as it comes, where the index could
 * seek; 20 matches of a 100-message id range ranked by bm25: 415 ms (every
 * match ranked), 7 ms with the cast. An equality is worse than slow:
 * FTS5 tells SQLite that it tests `rowid = ?` itself, so nothing else does,
 * and with a REAL it answers every match (65 rows of hermes-v11.db's
 * trigram index for one probe, where the cast gives the one row asked for).
 *
 * @module
 */

/** `CAST(? AS INTEGER)`: a rowid bound FTS5 seeks to, whatever the driver binds. */
export const ROWID_PARAM = "CAST(? AS INTEGER)";
