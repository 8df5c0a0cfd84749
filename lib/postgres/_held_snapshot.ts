/**
 * One snapshot of the server held open while its reader works between its
 * reads: a `REPEATABLE READ`, read-only transaction on a connection of its
 * own, its statements all seeing the data as of the first. What an export
 * in pieces holds for a session when asked to (`holdSnapshot`), as a
 * SQLite file's reader holds a savepoint.
 *
 * @module
 */
import type { PgClient, PgQuery } from "./_client_types.ts";

/** The first statement of a transaction whose reads all see one snapshot, and write nothing. */
export const SNAPSHOT_SQL = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/** A snapshot held open: its reads, and the end of it. */
export interface HeldSnapshot {
  /** A statement within the snapshot. */
  readonly query: PgQuery;
  /**
   * Ends the snapshot (the transaction, which wrote nothing, ends) and lets
   * its connection go; rejects with what ended it first, if anything did.
   */
  end(): Promise<void>;
}

/**
 * Opens a snapshot on `client` and holds it until {@linkcode HeldSnapshot.end}.
 * A server's idle-in-transaction limit does not end it while its reader
 * writes what it read (for this transaction only).
 *
 * @param client The store's pool.
 * @returns The snapshot, once its first statement ran.
 * @throws {StorageError} When the transaction cannot begin.
 */
export async function holdSnapshot(client: PgClient): Promise<HeldSnapshot> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let opened!: (query: PgQuery) => void;
  const open = new Promise<PgQuery>((resolve) => opened = resolve);
  const holding = client.transaction(async (query) => {
    await query(SNAPSHOT_SQL);
    await query("SELECT set_config('idle_in_transaction_session_timeout', '0', true)");
    opened(query);
    await released;
  });
  // Ended by a failure while its reader works: seen by the reader's next statement and by end().
  const ended = holding.then(() => undefined, (error: unknown) => ({ error }));
  const first = await Promise.race([open, ended]);
  if (typeof first !== "function") {
    if (first !== undefined) throw first.error;
    throw new Error("The snapshot's transaction ended before it opened");
  }
  return {
    query: first,
    async end() {
      release();
      const outcome = await ended;
      if (outcome !== undefined) throw outcome.error;
    },
  };
}
